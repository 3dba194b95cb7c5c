"""RNN against a step-by-step numpy cell reading MXNet's packed parameter layout."""

import numpy as np
import pytest

from opsdk import MXNetError, ShapeError
from opsdk.testing import eval_gradients, numeric_gradient, op_def, parse, run_op

RNG = np.random.default_rng(4)
GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


def unpack(flat, mode, layers, dirs, size, hidden):
    """{(layer, direction): (Wx, Wh, bx, bh)}: all weights first, then all biases."""
    g, out, off = GATES[mode] * hidden, {}, 0
    for layer in range(layers):
        n_in = size if layer == 0 else dirs * hidden
        for d in range(dirs):
            wx = flat[off:off + g * n_in].reshape(g, n_in)
            off += g * n_in
            wh = flat[off:off + g * hidden].reshape(g, hidden)
            off += g * hidden
            out[layer, d] = [wx, wh]
    for layer in range(layers):
        for d in range(dirs):
            out[layer, d] += [flat[off:off + g], flat[off + g:off + 2 * g]]
            off += 2 * g
    assert off == flat.size
    return out


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def cell(mode, x, h, c, wx, wh, bx, bh):
    """One time step for one batch row."""
    if mode == "lstm":
        i, f, g, o = np.split(wx @ x + bx + wh @ h + bh, 4)
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        return sigmoid(o) * np.tanh(c), c
    if mode == "gru":
        xr, xz, xn = np.split(wx @ x + bx, 3)
        hr, hz, hn = np.split(wh @ h + bh, 3)
        r, z = sigmoid(xr + hr), sigmoid(xz + hz)
        n = np.tanh(xn + r * hn)
        return (1 - z) * n + z * h, c
    pre = wx @ x + bx + wh @ h + bh
    return (np.maximum(pre, 0) if mode == "rnn_relu" else np.tanh(pre)), c


def reference(mode, data, flat, h0, c0, layers, bidirectional, masks=()):
    steps, batch, size = data.shape
    dirs, hidden = (2 if bidirectional else 1), h0.shape[-1]
    w = unpack(flat, mode, layers, dirs, size, hidden)
    x, hy, cy = data.astype(np.float64), [], []
    for layer in range(layers):
        y = np.zeros((steps, batch, dirs * hidden))
        for d in range(dirs):
            s = layer * dirs + d
            for b in range(batch):
                h, c = h0[s, b], (c0[s, b] if c0 is not None else None)
                for t in (reversed(range(steps)) if d else range(steps)):
                    h, c = cell(mode, x[t, b], h, c, *w[layer, d])
                    y[t, b, d * hidden:(d + 1) * hidden] = h
                hy.append(h)
                cy.append(c)
        x = y * masks[layer] if layer < len(masks) else y
    shape = (layers * dirs, batch, hidden)
    return y, np.reshape(hy, shape), (np.reshape(cy, shape) if mode == "lstm" else None)


def make_inputs(mode, layers, bidirectional, steps=4, batch=3, size=3, hidden=4,
                dtype=np.float64):
    params = {"mode": mode, "num_layers": layers, "state_size": hidden,
              "bidirectional": bidirectional, "state_outputs": True}
    opdef = op_def("RNN")
    p = parse(opdef, params)
    shapes, _ = opdef.get_attr("FInferShape")(p, [(steps, batch, size)] + [None] * (
        3 if mode == "lstm" else 2), [None] * opdef.num_outputs(p))
    return [RNG.uniform(-1, 1, s).astype(dtype) for s in shapes], params


@pytest.mark.parametrize("mode", ["lstm", "gru", "rnn_tanh", "rnn_relu"])
@pytest.mark.parametrize("layers, bidirectional", [(1, False), (2, True)])
def test_forward_matches_cell_reference(mode, layers, bidirectional):
    inputs, params = make_inputs(mode, layers, bidirectional)
    outs = run_op("RNN", [a.copy() for a in inputs], params, is_train=False)
    want = reference(mode, inputs[0], inputs[1], inputs[2],
                     inputs[3] if mode == "lstm" else None, layers, bidirectional)
    np.testing.assert_allclose(outs[0], want[0], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(outs[1], want[1], rtol=1e-10, atol=1e-12)
    if mode == "lstm":
        np.testing.assert_allclose(outs[2], want[2], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("mode", ["lstm", "gru"])
def test_gradient_matches_reference_differences(mode):
    inputs, params = make_inputs(mode, 2, True, steps=3, batch=2, size=2, hidden=2)
    n_vis = 3 if mode == "lstm" else 2
    outs = run_op("RNN", [a.copy() for a in inputs], params)
    heads = [RNG.normal(size=o.shape) for o in outs[:n_vis]]

    def loss(xs):
        ref = reference(mode, xs[0], xs[1], xs[2], xs[3] if mode == "lstm" else None, 2, True)
        return sum(float((r * h).sum()) for r, h in zip(ref, heads))

    grads = eval_gradients("RNN", [a.copy() for a in inputs], heads, params)
    for i in range(len(inputs)):
        want = numeric_gradient(loss, [a.copy() for a in inputs], i, 1e-6)
        np.testing.assert_allclose(grads[i], want, rtol=1e-5, atol=1e-7,
                                   err_msg=f"input {i}")


def test_dropout_between_layers():
    inputs, params = make_inputs("rnn_tanh", 3, False, dtype=np.float32)
    params = dict(params, p=0.5)
    plain = run_op("RNN", [a.copy() for a in inputs], params, is_train=False)
    np.testing.assert_allclose(plain[0], run_op("RNN", [a.copy() for a in inputs],
                                                dict(params, p=0.0), is_train=False)[0])
    first = run_op("RNN", [a.copy() for a in inputs], params, seed=3)
    again = run_op("RNN", [a.copy() for a in inputs], params, seed=3)
    np.testing.assert_array_equal(first[0], again[0])
    assert not np.allclose(first[0], plain[0])
    # the reserve keeps the masks: each is 0 or 1/(1-p), and replaying them gives the output
    p = parse(op_def("RNN"), params)
    from mxnext_ops_nn.rnn import _unpack
    kept = _unpack(p, first[-1], 4, 3)
    masks = [kept[("mask", layer)] for layer in range(2)]
    assert set(np.unique(np.concatenate([m.ravel() for m in masks]))) <= {0.0, 2.0}
    want = reference("rnn_tanh", *inputs, None, 3, False, masks=masks)
    np.testing.assert_allclose(first[0], want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(first[1], want[1], rtol=1e-5, atol=1e-6)


def test_interface_and_shape_inference():
    opdef = op_def("RNN")
    p = parse(opdef, {"mode": "lstm", "state_size": 4, "num_layers": "2",
                      "bidirectional": "True", "state_outputs": "True"})
    assert opdef.list_input_names(p) == ["data", "parameters", "state", "state_cell"]
    assert opdef.list_output_names(p)[:3] == ["output", "state_output", "statecell_output"]
    assert opdef.num_visible_outputs(p) == 3
    ins, outs = opdef.get_attr("FInferShape")(p, [(5, 2, 3), None, None, None],
                                             [None] * opdef.num_outputs(p))
    # MXNet's GetRnnParamSize: (3+4+2)*4*4*2 for layer 0, (8+4+2)*4*4*2 for layer 1
    assert ins[1:] == [(288 + 448,), (4, 2, 4), (4, 2, 4)]
    assert outs[:3] == [(5, 2, 8), (4, 2, 4), (4, 2, 4)]
    gru = parse(opdef, {"mode": "gru", "state_size": 4, "num_layers": 1})
    assert opdef.list_input_names(gru) == ["data", "parameters", "state"]
    assert opdef.num_visible_outputs(gru) == 1
    with pytest.raises(ShapeError, match=r"RNN.*state.*\(1, 3, 4\).*\(1, 2, 4\)"):
        opdef.get_attr("FInferShape")(gru, [(5, 2, 3), None, (1, 3, 4)], [None, None])
    proj = parse(opdef, {"mode": "lstm", "state_size": 4, "num_layers": 2,
                         "bidirectional": True, "projection_size": 3, "state_outputs": True})
    ins, outs = opdef.get_attr("FInferShape")(proj, [(5, 2, 3)] + [None] * 3,
                                             [None] * opdef.num_outputs(proj))
    # per direction: layer 0 (16*3 + 16*3 + 3*4 + 32), layer 1 (16*6 + 16*3 + 3*4 + 32)
    assert ins[1:] == [(2 * (140 + 188),), (4, 2, 3), (4, 2, 4)]
    assert outs[:3] == [(5, 2, 6), (4, 2, 3), (4, 2, 4)]
    for bad, match in (({"use_sequence_length": True}, "use_sequence_length"),
                       ({"mode": "gru", "projection_size": 2}, "projection_size is for mode"),
                       ({"projection_size": 5}, r"projection_size must be in 1\.\.state_size"),
                       ({"lstm_state_clip_min": -1}, "set together"),
                       ({"lstm_state_clip_min": 1, "lstm_state_clip_max": -1}, "min <= max")):
        q = parse(opdef, {"mode": "lstm", "state_size": 4, "num_layers": 1, **bad})
        with pytest.raises(MXNetError, match=match):
            opdef.get_attr("FInferShape")(q, [(5, 2, 3)] + [None] * (opdef.num_inputs(q) - 1),
                                          [None] * opdef.num_outputs(q))
