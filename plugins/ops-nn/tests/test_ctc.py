"""CTCLoss against a brute-force sum over every alignment of tiny inputs."""

import itertools

import numpy as np
import pytest

from opsdk import MXNetError, ShapeError
from opsdk.testing import check_numeric_gradient, eval_gradients, op_def, run_op

RNG = np.random.default_rng(17)


def collapse(path, blank):
    out, prev = [], None
    for k in path:
        if k != prev and k != blank:
            out.append(k)
        prev = k
    return out


def brute_force(acts, label, blank):
    """Loss and d loss / d acts of one example (acts: (T, A)) by enumerating all paths."""
    steps, alphabet = acts.shape
    prob = np.exp(acts - acts.max(1, keepdims=True))
    prob /= prob.sum(1, keepdims=True)
    total, occupancy = 0.0, np.zeros_like(prob)
    for path in itertools.product(range(alphabet), repeat=steps):
        if collapse(path, blank) == list(label):
            p = np.prod([prob[t, k] for t, k in enumerate(path)])
            total += p
            for t, k in enumerate(path):
                occupancy[t, k] += p
    if total == 0:                      # the labels cannot fit: MXNet reports 0
        return 0.0, np.zeros_like(prob)
    return -np.log(total), prob - occupancy / total


def check(acts, label_rows, params, data_len=None, label_len=None, blank=0):
    steps, batch, _ = acts.shape
    inputs = [acts, np.asarray(label_rows, np.float32)]
    if data_len is not None:
        inputs.append(np.asarray(data_len, np.float32))
    if label_len is not None:
        inputs.append(np.asarray(label_len, np.int32))
    loss, _ = run_op("CTCLoss", [a.copy() for a in inputs], params)
    head = RNG.uniform(0.5, 2, batch).astype(acts.dtype)
    grad = eval_gradients("CTCLoss", inputs, [head], params)[0]
    pad = 0 if blank == 0 else -1
    for b, row in enumerate(label_rows):
        n = label_len[b] if label_len is not None else (row.index(pad) if pad in row else len(row))
        t_b = steps if data_len is None else data_len[b]
        want_loss, want_grad = brute_force(acts[:t_b, b].astype(np.float64), row[:n], blank)
        np.testing.assert_allclose(loss[b], want_loss, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(grad[:t_b, b], head[b] * want_grad, rtol=1e-4, atol=1e-6)
        np.testing.assert_array_equal(grad[t_b:, b], 0)


def test_blank_first_with_padding_and_repeats():
    acts = RNG.normal(size=(5, 4, 3)).astype(np.float32)
    check(acts, [[1, 2, 0], [2, 2, 0], [1, 0, 0], [1, 1, 2]], {})


def test_blank_last():
    acts = RNG.normal(size=(4, 3, 3)).astype(np.float32)
    check(acts, [[0, 1], [1, -1], [0, 0]], {"blank_label": "last"}, blank=2)


def test_data_and_label_lengths():
    acts = RNG.normal(size=(5, 3, 3))
    labels = [[1, 2, 2], [2, 1, 1], [1, 1, 2]]
    params = {"use_data_lengths": True, "use_label_lengths": True}
    data_len, label_len = [5, 3, 4], [3, 1, 0]
    check(acts, labels, params, data_len, label_len)
    check_numeric_gradient("CTCLoss", [acts, np.array(labels, np.float64),
                                       np.array(data_len, np.float64), np.array(label_len)],
                           params, grad_inputs=[0])


def test_labels_that_cannot_fit_give_zero():
    acts = RNG.normal(size=(3, 2, 3)).astype(np.float32)
    labels = [[1, 1, 1], [1, 2, 0]]       # 3 labels + 2 repeats > 3 steps; [1, 2] fits
    check(acts, labels, {})
    loss, grad = run_op("CTCLoss", [acts, np.array(labels, np.float32)])
    assert loss[0] == 0 and not grad[:, 0].any()


def test_ctc_interface():
    opdef = op_def("ctc_loss")
    assert opdef is op_def("_contrib_CTCLoss") is op_def("_contrib_ctc_loss")
    p = opdef.parse_params({"use_label_lengths": "True"})
    assert opdef.list_input_names(p) == ["data", "label", "label_lengths"]
    assert opdef.num_visible_outputs(p) == 1 and opdef.num_outputs(p) == 2
    ins, outs = opdef.get_attr("FInferShape")(p, [(6, 2, 5), (2, 3), None], [None, None])
    assert ins[2] == (2,) and outs == [(2,), (6, 2, 5)]
    with pytest.raises(ShapeError, match=r"CTCLoss.*label.*batch size 3"):
        opdef.get_attr("FInferShape")(p, [(6, 2, 5), (3, 3), None], [None, None])
    with pytest.raises(ShapeError, match="cannot exceed"):
        run_op(opdef, [np.zeros((2, 1, 3)), np.ones((1, 3)), np.ones(1)], p)
    with pytest.raises(MXNetError, match=r"label values must lie in \[0, 3\)"):
        run_op(opdef, [np.zeros((4, 1, 3)), np.array([[1, 5]]), np.array([2])], p)
