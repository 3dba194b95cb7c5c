"""SoftmaxOutput and softmax_cross_entropy: forward and MXNet's closed-form loss gradients,
checked against numpy loops (the gradients ignore the head gradient, so no finite
differences)."""

import warnings

import numpy as np
import pytest

from opsdk import MXNetError, ShapeError
from opsdk.testing import check_backward, eval_gradients, infer, op_def, parse, run_op

RNG = np.random.default_rng(11)


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def grads(op, inputs, params, head=None):
    (out,) = run_op(op, [a.copy() for a in inputs], params)
    head = RNG.normal(size=out.shape).astype(out.dtype) if head is None else head
    return out, eval_gradients(op, inputs, [head], params)


def row_grad(prob, label, alpha=0.0, ignore=None):
    """One row of the loss gradient: prob - smoothed one-hot (zero for an ignored label)."""
    k = int(np.trunc(label))
    if ignore is not None and k == int(ignore):
        return np.zeros_like(prob)
    target = np.full(len(prob), alpha / (len(prob) - 1))
    if 0 <= k < len(prob):
        target[k] = 1 - alpha
    return prob - target


X = RNG.normal(size=(4, 5)).astype(np.float32)
LABEL = np.array([1, -1, 4.7, 0], np.float32)
IN_RANGE = np.array([1, 3, 4.7, 0], np.float32)          # class indices without ignore_label


@pytest.mark.parametrize("norm, scale", [("null", 1), ("batch", 4), ("valid", 3)])
@pytest.mark.parametrize("alpha", [0.0, 0.2])
def test_index_labels_normalization_ignore_smoothing(norm, scale, alpha):
    params = {"normalization": norm, "use_ignore": True, "ignore_label": -1,
              "smooth_alpha": alpha, "grad_scale": 1.5}
    out, (g, gl) = grads("SoftmaxOutput", [X, LABEL], params)
    np.testing.assert_allclose(out, softmax(X), rtol=1e-6)
    want = np.stack([row_grad(out[i], LABEL[i], alpha, -1) for i in range(4)]) * 1.5 / scale
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_array_equal(gl, 0)


def test_without_use_ignore_the_ignore_label_keeps_its_gradient_but_valid_skips_it():
    out, (g, _) = grads("SoftmaxOutput", [X, IN_RANGE], {"normalization": "valid",
                                                         "ignore_label": 3})
    want = np.stack([row_grad(out[i], IN_RANGE[i]) for i in range(4)]) / 3   # 3 == ignore_label
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("norm", ["null", "batch", "valid"])
def test_multi_output(norm):
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    label = np.array([[0, 2, -1, 1], [2, 2, 0, -1]], np.float32)
    params = {"multi_output": True, "use_ignore": True, "normalization": norm,
              "smooth_alpha": 0.3}                   # smoothing does not apply to multi_output
    for lab in (label, label.reshape(2, 1, 4)):
        out, (g, _) = grads("SoftmaxOutput", [x, lab], params)
        np.testing.assert_allclose(out, np.moveaxis(softmax(np.moveaxis(x, 1, -1)), -1, 1),
                                   rtol=1e-6)
        want = np.zeros_like(x)
        for n in range(2):
            for r in range(4):
                want[n, :, r] = row_grad(out[n, :, r], label[n, r], ignore=-1)
        count = {"null": 4, "batch": 2 * 4, "valid": 6}[norm]
        np.testing.assert_allclose(g, want / count, rtol=1e-5, atol=1e-7)


def test_preserve_shape_and_flattened_rows():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    label = np.array([[3, 0, 1], [2, 2, 1]], np.float32)
    out, (g, _) = grads("SoftmaxOutput", [x, label],
                        {"preserve_shape": True, "normalization": "batch"})
    np.testing.assert_allclose(out, softmax(x), rtol=1e-6)
    want = np.stack([row_grad(r, lab) for r, lab in zip(out.reshape(6, 4), label.ravel())]) / 6
    np.testing.assert_allclose(g, want.reshape(x.shape), rtol=1e-5, atol=1e-7)
    # neither flag: softmax over all but the first axis; MXNet reads the first n flat labels
    out, (g, _) = grads("SoftmaxOutput", [x, label], {})
    np.testing.assert_allclose(out, softmax(x.reshape(2, 12)).reshape(x.shape), rtol=1e-6)
    want = np.stack([row_grad(out.reshape(2, 12)[i], label.ravel()[i]) for i in range(2)])
    np.testing.assert_allclose(g, want.reshape(x.shape), rtol=1e-5, atol=1e-7)


def test_probability_labels_and_out_grad():
    prob = softmax(RNG.normal(size=(4, 5))).astype(np.float32)
    out, (g, _) = grads("SoftmaxOutput", [X, prob], {"grad_scale": 0.5, "normalization": "batch",
                                                      "use_ignore": True})
    np.testing.assert_allclose(g, (out - prob) * 0.5, rtol=1e-5, atol=1e-7)   # no normalizer
    head = RNG.normal(size=X.shape).astype(np.float32)
    out, (g, _) = grads("SoftmaxOutput", [X, IN_RANGE], {"out_grad": True}, head)
    want = np.stack([row_grad(out[i], IN_RANGE[i]) for i in range(4)]) * head
    np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("bad, shown", [(5, "5.0"), (-1, "-1.0"), (-2, "-2.0")])
def test_a_label_out_of_range_warns_and_gets_no_target(bad, shown):
    # MXNet gives such a row no target: its gradient is the softmax output (MXNet's own
    # test_bucketing.py trains on labels -1 and num_classes)
    x, label = X[:, :3], np.array([0, 2, bad, 1], np.float32)
    for params, also in (({}, ""), ({"use_ignore": True, "ignore_label": 7}, " or ignore_label=7"),
                         ({"normalization": "valid"}, "")):
        with pytest.warns(RuntimeWarning, match=rf"'SoftmaxOutput': label {shown} is not a "
                                                rf"class index in \[0, 3\){also}; such rows "
                                                rf"get no target, as in MXNet$"):
            out, (g, _) = grads("SoftmaxOutput", [x, label], params)
        if "normalization" not in params:
            np.testing.assert_allclose(g[2], out[2], rtol=1e-5)


def test_a_nan_label_is_an_error():
    label = np.array([0, 2, np.nan, 1], np.float32)
    for params in ({}, {"use_ignore": True, "ignore_label": -1}, {"normalization": "valid"}):
        with pytest.raises(MXNetError, match=r"'SoftmaxOutput': a label is NaN"):
            grads("SoftmaxOutput", [X[:, :3], label], params)


def test_labels_checked_are_those_read():
    x3 = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    with pytest.warns(RuntimeWarning, match=r"label 3.0 is not a class index in \[0, 3\)"):
        grads("SoftmaxOutput", [x3, np.array([[0, 3, 1, -1], [2, 2, 0, 1]], np.float32)],
              {"multi_output": True, "use_ignore": True})
    # neither flag: the rows are (2, 12) and MXNet reads only the first 2 flat labels
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        grads("SoftmaxOutput", [x3, np.array([[11, 0, 99], [np.nan, 2, 1]], np.float32)], {})
        # use_ignore: ignore_label passes, wherever it lies
        grads("SoftmaxOutput", [X, np.array([1, -3, -3.5, 0], np.float32)],
              {"use_ignore": True, "ignore_label": -3})


def test_label_shape_inference():
    opdef = op_def("Softmax")                   # the deprecated alias
    assert opdef.name == "SoftmaxOutput"
    assert opdef.list_input_names(parse(opdef, {})) == ["data", "label"]
    infer_shape = opdef.get_attr("FInferShape")
    assert infer_shape(parse(opdef, {}), [(8, 10), None], [None])[0][1] == (8,)
    p = parse(opdef, {"multi_output": True})
    assert infer_shape(p, [(2, 3, 4, 5), None], [None])[0][1] == (2, 20)
    assert infer_shape(p, [(2, 3, 4, 5), (2, 4, 5)], [None])[1] == [(2, 3, 4, 5)]
    with pytest.raises(ShapeError, match=r"SoftmaxOutput.*label.*\(2, 4\).*\(2, 20\)"):
        infer_shape(p, [(2, 3, 4, 5), (2, 4)], [None])
    with pytest.raises(ShapeError, match="label"):
        infer(opdef, parse(opdef, {}), [(8, 10), (10,)], [np.float32] * 2)


def test_softmax_cross_entropy():
    label = np.array([1, 0, 4, 2], np.float32)
    p = softmax(X.astype(np.float64))
    loss = -sum(np.log(p[i, int(label[i])]) for i in range(4))
    (out,) = run_op("softmax_cross_entropy", [X, label])
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [loss], rtol=1e-5)
    onehot = np.eye(5)[label.astype(int)]
    check_backward("softmax_cross_entropy", [X, label], [np.array([2.0], np.float32)],
                   [2 * (p - onehot), np.zeros(4)], atol=1e-6)
    with pytest.raises(ShapeError, match="2-D"):
        run_op("softmax_cross_entropy", [X.reshape(2, 2, 5), label])
    with pytest.raises(MXNetError, match=r"'softmax_cross_entropy': label nan is not a class "
                                         r"index in \[0, 5\)$"):
        run_op("softmax_cross_entropy", [X, np.array([1, 0, np.nan, 2], np.float32)])
    with pytest.raises(MXNetError, match=r"label 5.0 is not a class index in \[0, 5\)$"):
        check_backward("softmax_cross_entropy", [X, np.array([1, 5, 4, 2], np.float32)],
                       [np.array([1.0], np.float32)], [None, None])
