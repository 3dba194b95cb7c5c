"""oneDNN Activation (relu, sigmoid, tanh, softrelu forward; relu, sigmoid, tanh gradient)
equals ops-nn's kernel; softsign, softrelu's gradient and other dtypes fall back per call."""

from __future__ import annotations

import numpy as np
import pytest

rng = np.random.default_rng(3)
pytestmark = pytest.mark.usefixtures("no_rules")

SHAPES = [(4, 5, 6), (3, 7), (2, 3, 4, 5, 2), (1,), (1000,)]


def _x(shape, dtype=np.float32):
    return (3 * rng.standard_normal(shape)).astype(dtype)


@pytest.mark.parametrize("act", ["relu", "sigmoid", "tanh"])
@pytest.mark.parametrize("shape", SHAPES)
def test_forward_and_gradient_equal_ops_nn(act, shape, compare):
    p = {"act_type": act}
    y = compare("Activation", [_x(shape)], p)[0]
    compare("_backward_Activation", [_x(shape), y], p)


def test_softrelu_forward_runs_its_gradient_falls_back(compare):
    p = {"act_type": "softrelu"}
    y = compare("Activation", [_x((5, 8))], p)[0]
    compare("_backward_Activation", [_x((5, 8)), y], p, path="fallback")


def test_softsign_falls_back(compare):
    p = {"act_type": "softsign"}
    x = _x((5, 8))
    compare("Activation", [x], p, path="fallback")
    compare("_backward_Activation", [_x((5, 8)), x], p, path="fallback")


@pytest.mark.parametrize("act", ["relu", "tanh"])
def test_req_add_null_and_in_place(act, compare):
    p = {"act_type": act}
    x = _x((6, 7))
    compare("Activation", [x], p, "add", [_x((6, 7))])
    start = _x((6, 7))
    got = compare("Activation", [x], p, "null", [start])
    np.testing.assert_array_equal(got[0], start)
    y = compare("Activation", [x], p)[0]
    compare("_backward_Activation", [_x((6, 7)), y], p, "add", [_x((6, 7))])
    from opsdk.testing import run_op
    buf = x.copy()
    run_op("Activation", [buf], p, "inplace", [buf])       # the output is the input
    np.testing.assert_allclose(buf, y, rtol=1e-6, atol=1e-6)


def test_float64_falls_back(compare):
    x = _x((4, 4), np.float64)
    y = compare("Activation", [x], {"act_type": "relu"}, path="fallback")[0]
    compare("_backward_Activation", [x, y], {"act_type": "relu"}, path="fallback")
