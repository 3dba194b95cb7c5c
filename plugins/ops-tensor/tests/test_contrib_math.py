"""_contrib_quadratic, _contrib_allclose, _contrib_div_sqrt_dim: values as MXNet 1.9.1
(float32 parameters, integer truncation), gradients, errors."""

import math

import numpy as np
import pytest

import mxnext as mx
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op


def test_quadratic_values_and_gradient():
    x = np.array([[1, 2], [3, 4]], np.float32)
    check_forward("_contrib_quadratic", [x], np.array([[6, 11], [18, 27]], np.float32),
                  {"a": 1, "b": 2, "c": 3})
    check_forward("_contrib_quadratic", [np.array([1, 2], np.int32)],     # 2.2, 5.2 truncated
                  np.array([2, 5], np.int32), {"a": 0.5, "b": 1.5, "c": 0.2})
    check_backward("_contrib_quadratic", [x], [np.ones((2, 2), np.float32)],
                   [2 * 1.5 * x - 2], {"a": 1.5, "b": -2})
    check_numeric_gradient("_contrib_quadratic", [np.linspace(-2, 2, 7)],
                           {"a": 0.3, "b": 0.7, "c": 2})


def test_quadratic_parameters_are_float32():
    a = 0.1                     # float64 data with a float32 ``a``, as MXNet's float field
    (out,) = run_op("_contrib_quadratic", [np.array([3.0])], {"a": a})
    assert out[0] == 3.0 * (np.float64(np.float32(a)) * 3.0)


def test_allclose_matches_mxnet():
    def flag(a, b, **p):
        (out,) = run_op("_contrib_allclose", [np.asarray(a, np.float32),
                                              np.asarray(b, np.float32)], p)
        assert out.shape == () and out.dtype == np.uint8
        return int(out)
    assert flag([1e10, 1e-7], [1.00001e10, 1e-8]) == 0
    assert flag([1e10, 1e-8], [1.00001e10, 1e-9]) == 0          # float32 (numpy's float64: 1)
    assert flag([np.nan, 1], [np.nan, 1]) == 1
    assert flag([np.nan, 1], [np.nan, 1], equal_nan=False) == 0
    assert flag([np.nan], [1.0]) == 0
    assert flag([np.inf, -1], [np.inf, -1.000001]) == 1
    assert flag([1.0], [1.5], rtol=0.4) == 1 and flag([1.5], [1.0], rtol=0.4) == 0


def test_allclose_shapes_must_agree():
    with pytest.raises(ShapeError, match="'_contrib_allclose': input b \\(shape of a\\)"):
        run_op("_contrib_allclose", [np.ones(3), np.ones(2)])
    a = mx.nd.array([1.0, 2.0])
    out = mx.nd.contrib.allclose(a, a + 1e-9)
    assert out.shape == () and out.asnumpy() == 1


def test_div_sqrt_dim_values_as_mxnet():
    x = np.array([[3, 6, 9, 12, 15, 18, 21, 24]], np.int32)     # sqrt(8) truncated to 2
    check_forward("_contrib_div_sqrt_dim", [x], np.array([[1, 3, 4, 6, 7, 9, 10, 12]], np.int32))
    h = x.astype(np.float16)
    check_forward("_contrib_div_sqrt_dim", [h], h / np.float16(math.sqrt(8)), atol=0)
    x = np.random.default_rng(0).normal(size=(5, 10, 8))
    check_forward("_contrib_div_sqrt_dim", [x], x / math.sqrt(8))
    check_backward("_contrib_div_sqrt_dim", [x], [np.ones_like(x)],
                   [np.full_like(x, 1 / math.sqrt(8))])


def test_div_sqrt_dim_needs_an_axis():
    with pytest.raises(ShapeError, match="'_contrib_div_sqrt_dim': data needs at least 1 dim"):
        run_op("_contrib_div_sqrt_dim", [np.ones(())])
