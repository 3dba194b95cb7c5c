"""SVMOutput: identity forward, hinge-loss gradients (L1 and L2) that ignore the head
gradient, label shape inference and errors."""

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, parse, run_op

RNG = np.random.default_rng(0)


def hinge_grad(x, label, margin, coef, linear):
    g = np.zeros_like(x)
    for i, k in np.ndindex(*x.shape):
        if k == int(label[i]):
            g[i, k] = -coef * (margin > x[i, k]) if linear else \
                -2 * coef * max(margin - x[i, k], 0)
        else:
            g[i, k] = coef * (margin > -x[i, k]) if linear else \
                2 * coef * max(margin + x[i, k], 0)
    return g


@pytest.mark.parametrize("linear", [False, True])
def test_forward_is_identity_and_gradient_is_hinge(linear):
    x = RNG.uniform(-2, 2, (6, 4))
    label = np.array([0, 3, 1, 2, 5, 0], np.float64)     # 5 is out of range: no target class
    kw = {"margin": 0.7, "regularization_coefficient": 1.5, "use_linear": linear}
    check_forward("SVMOutput", [x, label], x, kw)
    head = RNG.standard_normal(x.shape)                   # ignored, as in MXNet
    check_backward("SVMOutput", [x, label], [head],
                   [hinge_grad(x, label, 0.7, 1.5, linear), np.zeros(6)], kw)


def test_rows_are_all_but_the_last_axis():
    x = RNG.uniform(-2, 2, (2, 3, 4))
    label = np.array([[0, 1, 2], [3, 0, 1]], np.float64)
    g = check_backward("SVMOutput", [x, label], [np.ones(x.shape)], [None, None])[0]
    np.testing.assert_allclose(g.reshape(6, 4),
                               hinge_grad(x.reshape(6, 4), label.ravel(), 1.0, 1.0, False))
    op = op_def("SVMOutput")
    assert infer(op, parse(op), [(2, 3, 4), None], [np.float32, None])[0] == [(2, 3, 4), (2, 3)]


def test_label_shape_mismatch_is_named():
    with pytest.raises(ShapeError, match="SVMOutput.*'label'"):
        run_op("SVMOutput", [np.zeros((4, 5)), np.zeros((5,))])
