"""The scalar family: MXNet 1.9.1's values and dtypes (is_int semantics included),
float results vs numpy, parameters, every OpReqType, gradients."""

import numpy as np
import pytest
from mxnext import ops as registry
from mxnext.base import ParamError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, infer, run_op

I32 = np.array([1, 2, 3, -7], np.int32)

# name: (result with is_int=False (float64), result with is_int=True (int32)) for
# data = [1, 2, 3, -7] (int32) and scalar = 2.5, as printed by MXNet 1.9.1.
MXNET_INT = {
    "_plus_scalar": ([3.5, 4.5, 5.5, -4.5], [3, 4, 5, -5]),
    "_minus_scalar": ([-1.5, -0.5, 0.5, -9.5], [-1, 0, 1, -9]),
    "_rminus_scalar": ([1.5, 0.5, -0.5, 9.5], [1, 0, -1, 9]),
    "_mul_scalar": ([2.5, 5, 7.5, -17.5], [2, 4, 6, -14]),
    "_div_scalar": ([0.4, 0.8, 1.2, -2.8], [0, 1, 1, -3]),
    "_rdiv_scalar": ([2.5, 1.25, 0.83333333, -0.35714286], [2, 1, 0, 0]),
    "_mod_scalar": ([1, 2, 0.5, 0.5], [1, 0, 1, 1]),
    "_rmod_scalar": ([0.5, 0.5, 2.5, -4.5], [0, 0, 2, -5]),
    "_power_scalar": ([1, 5.65685425, 15.58845727, np.nan], [1, 4, 9, 49]),
    "_rpower_scalar": ([2.5, 6.25, 15.625, 1.6384e-03], [2, 4, 8, 0]),
    "_maximum_scalar": ([2.5, 2.5, 3, 2.5], [2, 2, 3, 2]),
    "_minimum_scalar": ([1, 2, 2.5, -7], [1, 2, 2, -7]),
    "_hypot_scalar": ([2.6925824, 3.20156212, 3.90512484, 7.43303437], [2, 2, 3, 7]),
    "_equal_scalar": ([0, 0, 0, 0], [0, 1, 0, 0]),
    "_not_equal_scalar": ([1, 1, 1, 1], [1, 0, 1, 1]),
    "_greater_scalar": ([0, 0, 1, 0], [0, 0, 1, 0]),
    "_greater_equal_scalar": ([0, 0, 1, 0], [0, 1, 1, 0]),
    "_lesser_scalar": ([1, 1, 0, 1], [1, 0, 0, 1]),
    "_lesser_equal_scalar": ([1, 1, 0, 1], [1, 1, 0, 1]),
    "_logical_and_scalar": ([1, 1, 1, 1], [1, 1, 1, 1]),
    "_logical_or_scalar": ([1, 1, 1, 1], [1, 1, 1, 1]),
    "_logical_xor_scalar": ([0, 0, 0, 0], [0, 0, 0, 0]),
}

FLOAT_REF = {
    "_plus_scalar": lambda x, s: x + s, "_minus_scalar": lambda x, s: x - s,
    "_rminus_scalar": lambda x, s: s - x, "_mul_scalar": lambda x, s: x * s,
    "_div_scalar": lambda x, s: x / s, "_rdiv_scalar": lambda x, s: s / x,
    "_mod_scalar": np.mod, "_rmod_scalar": lambda x, s: np.mod(s, x),
    "_power_scalar": np.power, "_rpower_scalar": lambda x, s: np.power(s, x),
    "_maximum_scalar": np.maximum, "_minimum_scalar": np.minimum, "_hypot_scalar": np.hypot,
    "_equal_scalar": np.equal, "_not_equal_scalar": np.not_equal,
    "_greater_scalar": np.greater, "_greater_equal_scalar": np.greater_equal,
    "_lesser_scalar": np.less, "_lesser_equal_scalar": np.less_equal,
    "_logical_and_scalar": lambda x, s: np.logical_and(x, s),
    "_logical_or_scalar": lambda x, s: np.logical_or(x, s),
    "_logical_xor_scalar": lambda x, s: np.logical_xor(x, s),
}
DIFFERENTIABLE = sorted(n for n in FLOAT_REF if "equal" not in n and "logical" not in n
                        and "greater" not in n and "lesser" not in n)


@pytest.mark.parametrize("name", sorted(MXNET_INT))
def test_integer_input_as_mxnet(name):
    as_float, as_int = MXNET_INT[name]
    check_forward(name, [I32], np.array(as_float, np.float64), {"scalar": 2.5, "is_int": False},
                  rtol=1e-7)
    check_forward(name, [I32], np.array(as_int, np.int32), {"scalar": 2.5})


@pytest.mark.parametrize("name", sorted(FLOAT_REF))
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_float_input_keeps_dtype(name, dtype):
    x = np.array([0.5, 1.0, 2.5, 3.0], dtype)
    want = np.asarray(FLOAT_REF[name](x.astype(np.float64), 2.5)).astype(dtype)
    tol = {"float16": 2e-3, "float32": 1e-6, "float64": 1e-12}[dtype]
    for is_int in (True, False):
        check_forward(name, [x], want, {"scalar": "2.5", "is_int": str(is_int)}, rtol=tol,
                      atol=tol)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradient_matches_numeric(name):
    x = np.random.default_rng(2).uniform(0.6, 1.9, (2, 3))
    check_numeric_gradient(name, [x], {"scalar": 2.5}, rtol=1e-4, atol=1e-6)


def test_mxnet_gradients():
    one2, one3 = np.ones(2, np.float32), np.ones(3, np.float32)
    check_backward("_rmod_scalar", [np.array([3., 2.])], [one2], [[-2, -3]], {"scalar": 7})
    check_backward("_mod_scalar", [np.array([7., 2.])], [one2], [[1, 1]], {"scalar": 3})
    check_backward("_maximum_scalar", [np.array([1., 2., 3.])], [one3], [[0, 1, 1]],
                   {"scalar": 2})
    check_backward("_minimum_scalar", [np.array([1., 2., 3.])], [one3], [[1, 1, 0]],
                   {"scalar": 2})
    check_backward("_hypot_scalar", [np.array([3.])], [np.ones(1)], [[0.6]], {"scalar": 4})
    check_backward("_greater_scalar", [np.array([1., 2.])], [one2], [[0, 0]], {"scalar": 1})
    og = np.array([2., -3.])
    check_backward("_plus_scalar", [np.array([1., 2.])], [og], [og], {"scalar": 4})
    check_backward("_rminus_scalar", [np.array([1., 2.])], [og], [-og], {"scalar": 4})


def test_params_and_types():
    op = registry.get("_plus_scalar")
    p = op.parse_params({"scalar": "1e-3", "is_int": "False"})
    assert p.scalar == 1e-3 and p.is_int is False
    assert op.parse_params({}).scalar == 1.0       # MXNet's default
    with pytest.raises(ParamError, match="scalr"):
        op.parse_params({"scalr": 1})
    _, _, _, out_t = infer(op, op.parse_params({}), [(2,)], [np.dtype(bool)])
    assert out_t == [np.dtype(np.int64)]
    _, _, _, out_t = infer(op, p, [(2,)], [np.dtype(np.uint8)])
    assert out_t == [np.dtype(np.float64)]


@pytest.mark.parametrize("req", ["null", "write", "inplace", "add"])
def test_every_req(req):
    x = np.array([1.0, 2.0])
    base = np.array([10.0, 10.0])
    out = x.copy() if req == "inplace" else base.copy()
    got = run_op("_mul_scalar", [out if req == "inplace" else x], {"scalar": 3}, req=req,
                 outputs=[out])[0]
    want = {"null": base, "write": 3 * x, "inplace": 3 * x, "add": base + 3 * x}[req]
    np.testing.assert_allclose(got, want)


def test_mod_scalar_by_zero_and_int_gradients():
    """MXNet 1.9: x % 0 and 0-valued divisors give 0; integer rmod has a zero gradient."""
    x = np.array([3, -3, 0], np.float32)
    check_forward("_mod_scalar", [x], np.zeros(3, np.float32), {"scalar": 0})
    check_forward("_rmod_scalar", [x], np.array([2, -1, 0], np.float32), {"scalar": 2})
    check_backward("_rmod_scalar", [x], [np.ones(3, np.float32)],
                   [np.array([-1, 2, -np.inf], np.float32)], {"scalar": 5})
    check_backward("_rmod_scalar", [x.astype(np.int32)], [np.ones(3, np.int32)],
                   [np.zeros(3, np.int32)], {"scalar": 5})
