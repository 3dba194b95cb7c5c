"""Linear/Logistic/MAE regression outputs, MakeLoss and make_loss: forward and their closed-form
gradients (which ignore the head gradient)."""

import numpy as np
import pytest

from opsdk import ShapeError
from opsdk.testing import eval_gradients, op_def, parse, run_op

RNG = np.random.default_rng(5)
X = RNG.normal(size=(4, 3)).astype(np.float32)
Y = RNG.normal(size=(4, 3)).astype(np.float32)
HEAD = RNG.normal(size=(4, 3)).astype(np.float32)     # must not matter


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


@pytest.mark.parametrize("op, fwd, diff", [
    ("LinearRegressionOutput", lambda x: x, lambda o, y: o - y),
    ("LogisticRegressionOutput", sigmoid, lambda o, y: o - y),
    ("MAERegressionOutput", lambda x: x, lambda o, y: np.where(o - y > 0, 1.0, -1.0)),
])
def test_regression_outputs(op, fwd, diff):
    (out,) = run_op(op, [X, Y], {"grad_scale": 3.0})
    np.testing.assert_allclose(out, fwd(X), rtol=1e-6)
    g, gl = eval_gradients(op, [X, Y], [HEAD], {"grad_scale": 3.0})
    np.testing.assert_allclose(g, diff(out, Y) * 3.0 / 3, rtol=1e-6)    # 3 outputs per example
    np.testing.assert_array_equal(gl, 0)
    # (n, 1) data with a (n,) label: one output per example
    g, _ = eval_gradients(op, [X[:, :1], Y[:, 0]], [HEAD[:, :1]])
    np.testing.assert_allclose(g, diff(fwd(X[:, :1]), Y[:, :1]), rtol=1e-6)


def test_mae_sign_of_zero_is_negative():
    g, _ = eval_gradients("MAERegressionOutput", [X, X.copy()], [HEAD])
    np.testing.assert_array_equal(g, np.full(X.shape, -1 / 3, np.float32))


def test_regression_label_shapes():
    opdef = op_def("LinearRegressionOutput")
    p = parse(opdef, {})
    infer_shape = opdef.get_attr("FInferShape")
    assert infer_shape(p, [(5, 1), None], [None])[0] == [(5, 1), (5,)]
    assert infer_shape(p, [(5, 2), None], [None])[0] == [(5, 2), (5, 2)]
    assert infer_shape(p, [(2, 3, 2), (2, 6)], [None])[1] == [(2, 3, 2)]
    with pytest.raises(ShapeError, match=r"LinearRegressionOutput.*label.*\(3, 4\).*\(4, 3\)"):
        infer_shape(p, [(4, 3), (3, 4)], [None])
    x3, y3 = RNG.normal(size=(2, 3, 2)), RNG.normal(size=(2, 6))
    g, _ = eval_gradients(opdef, [x3, y3], [np.ones((2, 3, 2))])
    np.testing.assert_allclose(g, (x3 - y3.reshape(x3.shape)) / 6)


@pytest.mark.parametrize("norm, count", [("null", 1), ("batch", 4), ("valid", None)])
def test_make_loss(norm, count):
    params = {"normalization": norm, "grad_scale": 2.0, "valid_thresh": 0.1}
    (out,) = run_op("MakeLoss", [X], params)
    np.testing.assert_array_equal(out, X)
    if count is None:
        count = sum(1 for v in X.ravel() if v > 0.1)
    (g,) = eval_gradients("MakeLoss", [X], [HEAD], params)
    np.testing.assert_allclose(g, np.full(X.shape, 2.0 / count), rtol=1e-6)


def test_make_loss_batch_counts_all_but_last_axis():
    x = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    (g,) = eval_gradients("MakeLoss", [x], [np.zeros_like(x)], {"normalization": "batch"})
    np.testing.assert_allclose(g, np.full(x.shape, 1 / 6), rtol=1e-6)


def test_lowercase_make_loss_sends_back_ones():
    (out,) = run_op("make_loss", [X])
    np.testing.assert_array_equal(out, X)
    (g,) = eval_gradients("make_loss", [X], [HEAD])
    np.testing.assert_array_equal(g, np.ones_like(X))
    opdef = op_def("make_loss")
    assert opdef.list_output_names(parse(opdef, {})) == ["loss"]
