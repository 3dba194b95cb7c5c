"""smooth_l1 (a SimpleOp): values and gradients against MXNet 1.9.1's and a scalar loop."""

import numpy as np
import pytest

from opsdk.testing import check_backward, check_forward, check_numeric_gradient, op_def, parse

X = np.array([-2.0, -0.3, -0.25, 0.0, 0.1, 0.25, 0.26, 1.0, 3.0], np.float32)


def smooth_l1_scalar(x, sigma):
    s2 = sigma * sigma
    return abs(x) - 0.5 / s2 if abs(x) > 1 / s2 else 0.5 * x * x * s2


def test_values_match_mxnet():
    want = [1.875, 0.175, 0.125, 0.0, 0.02, 0.125, 0.135, 0.875, 2.875]     # MXNet 1.9.1
    check_forward("smooth_l1", [X], np.array(want, np.float32), {"scalar": 2.0})
    check_backward("smooth_l1", [X], [np.full(X.shape, 2, np.float32)],
                   [np.array([-2, -2, -2, 0, 0.8, 2, 2, 2, 2], np.float32)], {"scalar": 2.0})
    check_forward("smooth_l1", [np.array([1, 2, 3, 4], np.float32)],
                  np.array([0.5, 1.5, 2.5, 3.5], np.float32))      # the default sigma is 1


@pytest.mark.parametrize("sigma", [0.5, 1.0, 3.0])
def test_against_scalar_loop(sigma):
    x = np.random.default_rng(2).uniform(-3, 3, (4, 5))
    want = np.vectorize(lambda v: smooth_l1_scalar(v, sigma))(x)
    check_forward("smooth_l1", [x], want, {"scalar": sigma, "is_int": False})
    away = x[np.abs(np.abs(x) - 1 / sigma**2) > 1e-3].reshape(-1)   # off the kink
    check_numeric_gradient("smooth_l1", [away], {"scalar": sigma})


def test_simple_op_registration():
    opdef = op_def("smooth_l1")
    p = parse(opdef, {"scalar": "3"})
    assert p.scalar == 3.0 and p.is_int is True
    assert opdef.get_attr("FInplaceOption")(p) == [(0, 0)]
    assert op_def("_backward_smooth_l1").get_attr("FInplaceOption")(p) == [(0, 0)]
    assert op_def("_backward_smooth_l1").num_inputs(p) == 2       # out_grad and the input data
