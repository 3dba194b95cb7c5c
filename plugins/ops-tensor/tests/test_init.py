"""Creation ops: _zeros, _ones, _full, _arange, _eye, _contrib_arange_like."""

import numpy as np
import pytest

import mxnext as mx

from opsdk import ParamError
from opsdk.testing import check_forward, run_op


def test_zeros_ones_full():
    check_forward("_zeros", [], np.zeros((2, 3), np.float32), {"shape": "(2, 3)", "ctx": "cpu(0)"})
    check_forward("_ones", [], np.ones(4, np.int32), {"shape": (4,), "dtype": "int32"})
    check_forward("_full", [], np.full((2, 2), 2.5), {"shape": (2, 2), "value": 2.5, "dtype": "float64"})
    with pytest.raises(ParamError, match="value"):
        run_op("_full", [], {"shape": (2,)})


def test_arange_matches_mxnet():
    check_forward("_arange", [], np.arange(5, dtype=np.float32), {"start": 5})
    check_forward("_arange", [], np.array([1, 1, 1.25, 1.25, 1.5, 1.5, 1.75, 1.75], np.float32),
                  {"start": 1, "stop": 2, "step": 0.25, "repeat": 2})
    check_forward("_arange", [], np.array([10, 7, 4], np.int32),
                  {"start": 10, "stop": 2, "step": -3, "dtype": "int32"})
    (empty,) = run_op("_arange", [], {"start": 3, "stop": 1})
    assert empty.shape == (0,)


def test_eye():
    check_forward("_eye", [], np.eye(3, dtype=np.float32), {"N": 3})
    check_forward("_eye", [], np.eye(2, 4, 1, dtype=np.int32), {"N": 2, "M": 4, "k": 1, "dtype": "int32"})
    with pytest.raises(ParamError, match="N"):
        run_op("_eye", [], {"N": -1})


def test_integer_arange_casts_start_and_step_first_and_wraps_as_mxnet():
    """MXNet 1.9.1: arange(-100, 100, dtype=uint8) starts at 156 and wraps past 255;
    arange(0.5, 5, 1.5, dtype=int32) is [0, 1, 2] (start and step cast to int first)."""
    wrapped = np.concatenate([np.arange(156, 256), np.arange(0, 100)]).astype(np.uint8)
    check_forward("_arange", [], wrapped, {"start": -100, "stop": 100, "dtype": "uint8"})
    check_forward("_arange", [], np.array([0, 1, 2], np.int32),
                  {"start": 0.5, "stop": 5, "step": 1.5, "dtype": "int32"})
    np.testing.assert_array_equal(mx.nd.arange(-100, 100, dtype="uint8").asnumpy(), wrapped)
    np.testing.assert_array_equal(mx.nd.arange(0.5, 5, 1.5, repeat=2, dtype="int32").asnumpy(),
                                  [0, 0, 1, 1, 2, 2])


def test_arange_like_counts_over_the_input_shape_or_one_axis():
    x = mx.nd.ones((2, 5, 3))
    got = mx.nd.contrib.arange_like(x, start=1, step=0.5, repeat=2)
    assert got.shape == (2, 5, 3) and got.dtype == np.float32
    np.testing.assert_array_equal(got.asnumpy().ravel(), 1 + (np.arange(30) // 2) * 0.5)
    np.testing.assert_array_equal(mx.nd.contrib.arange_like(x, axis=-2, repeat=2).asnumpy(),
                                  [0, 0, 1, 1, 2])
    ints = mx.nd.contrib.arange_like(mx.nd.ones((4,), dtype="int32"), start=3, step=-2)
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [3, 1, -1, -3]
    s = mx.sym.contrib.arange_like(mx.sym.var("a"), axis=1)
    assert s.infer_shape(a=(3, 4))[1] == [(4,)]
    with pytest.raises(mx.MXNetError, match="axis=2 out of range"):
        mx.nd.contrib.arange_like(mx.nd.ones((3, 4)), axis=2)
