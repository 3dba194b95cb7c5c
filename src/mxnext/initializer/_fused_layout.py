"""The order of the arrays in a fused ``RNN`` op's one parameter vector, shared by the
``FusedRNN`` initializer and ``mx.rnn``'s cells (which build on this package)."""

from __future__ import annotations

from .. import ndarray
from .._runtime.base import MXNetError, ParamError

__all__ = ["GATES", "FusedLayout"]

GATES = {"rnn_relu": ("",), "rnn_tanh": ("",), "lstm": ("_i", "_f", "_c", "_o"),
         "gru": ("_r", "_z", "_o")}


def _get(args, name, who):
    """``args[name]``, or an error naming what is there instead."""
    if name not in args:
        shown = ", ".join(sorted(args)[:8]) + (" ..." if len(args) > 8 else "")
        raise MXNetError(f"{who}: no array named {name!r} among the {len(args)} given "
                         f"({shown})")
    return args[name]


def _pop(args, name, who):
    _get(args, name, who)
    return args.pop(name)


class FusedLayout:
    """Names ``<prefix><l|r><layer>_<i2h|h2h><gate>_<weight|bias>`` and shapes of the
    packed vector of ``num_layers`` layers of ``mode``."""

    def __init__(self, num_hidden, num_layers, mode, bidirectional, prefix, packed_name):
        if mode not in GATES:
            raise ParamError(f"FusedRNNCell: mode must be one of {', '.join(GATES)}, "
                             f"got {mode!r}")
        self.num_hidden, self.num_layers, self.mode = num_hidden, num_layers, mode
        self.directions = ("l", "r") if bidirectional else ("l",)
        self.gates = GATES[mode]
        self.prefix, self.packed_name = prefix, packed_name

    def entries(self, num_input):
        """``(name, shape)`` of every array in the packed vector, in its order: all weights
        (per layer, per direction: i2h gates then h2h gates), then all biases likewise."""
        h, dirs = self.num_hidden, self.directions
        entries = []
        for kind in ("weight", "bias"):
            for layer in range(self.num_layers):
                width = num_input if layer == 0 else len(dirs) * h
                for d in dirs:
                    for group, cols in (("i2h", width), ("h2h", h)):
                        for gate in self.gates:
                            shape = (h, cols) if kind == "weight" else (h,)
                            entries.append((f"{self.prefix}{d}{layer}_{group}{gate}_{kind}",
                                            shape))
        return entries

    def num_input(self, size):
        """The input width a packed vector of ``size`` elements was made for."""
        h, b, m = self.num_hidden, len(self.directions), len(self.gates)
        per_input = b * m * h
        rest = (self.num_layers - 1) * b * m * h * (b * h + h + 2) + per_input * (h + 2)
        if size <= rest or (size - rest) % per_input:
            raise MXNetError(
                f"FusedRNNCell {self.prefix!r}: {self.packed_name!r} has {size} elements, "
                f"which fits no input width for {self.num_layers} {self.mode} layer(s) of "
                f"{h}{' (bidirectional)' if b == 2 else ''}")
        return (size - rest) // per_input

    def unpack(self, args):
        args = dict(args)
        packed = _pop(args, self.packed_name, "unpack_weights")
        offset = 0
        for name, shape in self.entries(self.num_input(packed.size)):
            n = shape[0] * (shape[1] if len(shape) == 2 else 1)
            args[name] = packed[offset:offset + n].reshape(shape).copy()
            offset += n
        return args

    def pack(self, args):
        args = dict(args)
        first = _get(args, f"{self.prefix}l0_i2h{self.gates[0]}_weight", "pack_weights")
        parts = []
        for name, shape in self.entries(first.shape[1]):
            part = _pop(args, name, "pack_weights")
            if tuple(part.shape) != shape:
                raise MXNetError(f"pack_weights: {name!r} has shape {tuple(part.shape)}, "
                                 f"expected {shape}")
            parts.append(part.reshape((-1,)))
        args[self.packed_name] = ndarray.concat(*parts, dim=0)
        return args
