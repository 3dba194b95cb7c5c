"""The fused ``RNN`` op (Gluon's RNN, LSTM and GRU layers) as ONNX RNN/LSTM/GRU nodes, one
per layer, its flat parameter vector sliced into ONNX's per-direction W, R and B."""

from __future__ import annotations

from ._table import converts

# mode -> (ONNX op, gates, ONNX's gate order as indices into MXNet's)
_MODES = {"rnn_relu": ("RNN", 1, [0]), "rnn_tanh": ("RNN", 1, [0]),
          "lstm": ("LSTM", 4, [0, 3, 1, 2]),     # MXNet i f g o -> ONNX i o f c
          "gru": ("GRU", 3, [1, 0, 2])}          # MXNet r z n -> ONNX z r h


class _Params:
    """Reads consecutive blocks out of the flat parameter vector."""

    def __init__(self, b, flat):
        self.b, self.flat, self.offset = b, flat, 0

    def take(self, gates, order, hidden, width):
        b, size = self.b, gates * hidden * width
        block = b.add("Slice", [self.flat, b.ints([self.offset]),
                                b.ints([self.offset + size]), b.ints([0])])
        self.offset += size
        shape = [gates, hidden, width] if width > 1 else [gates, hidden]
        gathered = b.add("Gather", [b.add("Reshape", [block, b.ints(shape)]), b.ints(order)],
                         axis=0)
        return b.add("Reshape", [gathered, b.ints([1, gates * hidden] + ([width] if width > 1
                                                                          else []))])


def _check(n):
    if n.attr("mode") not in _MODES:
        raise n.fail(f"mode {n.attr('mode')!r} does not export")
    if n.attr("projection_size", None):
        raise n.fail("projection_size (LSTMP) does not export")
    if n.attr("use_sequence_length", False):
        raise n.fail("use_sequence_length=True does not export")


def _layer_params(b, n, gates, order, hidden, layers, dirs):
    """Per layer: (W, R, B) with the directions stacked, as ONNX lays them out."""
    params = _Params(b, n.inputs[1])
    widths = [n.in_shapes[0][2]] + [dirs * hidden] * (layers - 1)
    weights = [[(params.take(gates, order, hidden, widths[l]),
                 params.take(gates, order, hidden, hidden)) for _ in range(dirs)]
               for l in range(layers)]
    biases = [[b.add("Concat", [params.take(gates, order, hidden, 1),
                                params.take(gates, order, hidden, 1)], axis=1)
               for _ in range(dirs)] for _ in range(layers)]
    return [(_cat(b, [pair[0] for pair in weights[l]]), _cat(b, [pair[1] for pair in weights[l]]),
             _cat(b, biases[l])) for l in range(layers)]


def _attrs(op_type, mode, hidden, dirs):
    attrs = {"hidden_size": hidden, "direction": "bidirectional" if dirs == 2 else "forward"}
    if op_type == "RNN":
        attrs["activations"] = ["Relu" if mode == "rnn_relu" else "Tanh"] * dirs
    if op_type == "GRU":
        attrs["linear_before_reset"] = 1
    return attrs


@converts("RNN")
def rnn(b, n):
    _check(n)
    mode = n.attr("mode")
    op_type, gates, order = _MODES[mode]
    layers, hidden = int(n.attr("num_layers", 1)), int(n.attr("state_size"))
    dirs = 2 if n.attr("bidirectional", False) else 1
    attrs = _attrs(op_type, mode, hidden, dirs)
    states = n.inputs[2:4] if mode == "lstm" else n.inputs[2:3]
    x, last = n.x, [[] for _ in states]
    for l, (w, r, bias) in enumerate(_layer_params(b, n, gates, order, hidden, layers, dirs)):
        init = [b.add("Slice", [s, b.ints([l * dirs]), b.ints([(l + 1) * dirs]), b.ints([0])])
                for s in states]
        outs = b.add(op_type, [x, w, r, bias, "", *init], 1 + len(states), **attrs)
        for kept, state in zip(last, outs[1:]):
            kept.append(state)
        y = b.add("Transpose", [outs[0]], perm=[0, 2, 1, 3])     # T D N H -> T N (D H)
        x = b.add("Reshape", [y, b.ints([0, 0, -1])], [n.out] if l == layers - 1 else 1)
    if n.attr("state_outputs", False):
        for kept, out in zip(last, n.outputs[1:]):
            b.add("Concat", kept, [out], axis=0)


def _cat(b, parts):
    return parts[0] if len(parts) == 1 else b.add("Concat", parts, axis=0)
