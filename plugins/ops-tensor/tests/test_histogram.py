"""_histogram and mx.nd.histogram / mx.sym.histogram (values checked against MXNet 1.9's)."""

import warnings

import numpy as np
import pytest

import mxnext as mx
from opsdk import MXNetError, ShapeError
from opsdk.testing import check_forward, run_op

X = np.array([[0, 1], [2, 2], [3, 4]], np.float32)


def test_uniform_bins():
    check_forward("_histogram", [X], [np.array([1, 1, 2, 1, 1], np.int64),
                                      np.arange(6, dtype=np.float32)],
                  {"bin_cnt": 5, "range": (0, 5)})
    nan_inf = np.array([0.1, 0.2, 0.3, 0.7, np.nan, np.inf, -1], np.float32)   # not counted
    check_forward("_histogram", [nan_inf], [np.array([2, 1, 1], np.int64),
                                            np.array([0.1, 0.3, 0.5, 0.7], np.float32)],
                  {"bin_cnt": 3, "range": (0.1, 0.7)})
    check_forward("_histogram", [np.array([1, 2, 3, 4], np.int32)],   # int edges truncate
                  [np.array([1, 1, 2], np.int64), np.array([1, 2, 3, 4], np.int32)],
                  {"bin_cnt": 3, "range": (1, 4)})


def test_equal_range_widens_by_half():
    check_forward("_histogram", [X], [np.array([0, 2, 0], np.int64),
                                      np.array([1.5, 11 / 6, 13 / 6, 2.5], np.float32)],
                  {"bin_cnt": 3, "range": (2, 2)})


def test_given_edges():
    edges = np.array([0, 2.1, 3], np.float32)
    check_forward("_histogram", [X, edges], [np.array([4, 1], np.int64), edges])
    check_forward("_histogram", [X, np.array([0, 2, 3, 4], np.float32)],   # last bin is closed
                  [np.array([2, 2, 2], np.int64), np.array([0, 2, 3, 4], np.float32)])
    unsorted = np.array([1, 4, 2, 5], np.float32)    # MXNet: the bin before the first greater edge
    check_forward("_histogram", [np.arange(1, 6, dtype=np.float32), unsorted],
                  [np.array([3, 0, 2], np.int64), unsorted])


def test_inference_and_errors():
    infer_shape = mx.ops.get("_histogram").get_attr("FInferShape")
    p = mx.ops.get("_histogram").parse_params({})
    assert infer_shape(p, [(3, 4), None], [None, None]) == ([(3, 4), None], [None, None])
    with pytest.raises(ShapeError, match="at least 2 edges"):
        run_op("_histogram", [X, np.array([1], np.float32)])
    with pytest.raises(ShapeError, match="both or neither"):
        run_op("_histogram", [X], {"bin_cnt": 3})
    with pytest.raises(MXNetError, match="low <= high"):
        run_op("_histogram", [X], {"bin_cnt": 3, "range": (3, 1)})
    with pytest.raises(MXNetError, match="2 values"):
        run_op("_histogram", [X], {"bin_cnt": 3, "range": (1, 2, 3)})


def test_nd_histogram():
    x = mx.nd.array(X)
    counts, edges = mx.nd.histogram(x, bins=5, range=(0, 5))
    assert counts.dtype == np.int64 and edges.dtype == np.float32
    np.testing.assert_array_equal(counts.asnumpy(), [1, 1, 2, 1, 1])
    counts, _ = mx.nd.histogram(x, bins=mx.nd.array([0, 2.1, 3]))
    np.testing.assert_array_equal(counts.asnumpy(), [4, 1])
    with pytest.warns(UserWarning, match="range is not specified"):
        counts, edges = mx.nd.histogram(x, bins=3)      # numpy's, as float32 arrays
    assert counts.dtype == np.float32
    np.testing.assert_array_equal(counts.asnumpy(), [2, 2, 2])
    np.testing.assert_allclose(edges.asnumpy(), [0, 4 / 3, 8 / 3, 4], rtol=1e-6)
    with pytest.raises(ValueError, match="bins"):
        mx.nd.histogram(x, bins=[0, 1, 2])


def test_sym_histogram():
    h = mx.sym.histogram(mx.sym.var("a"), bins=4, range=(0, 1))
    assert h.list_arguments() == ["a"]
    assert h.infer_shape(a=(3, 4))[1] == [(4,), (5,)]
    assert h.infer_type(a="float16")[1] == [np.int64, np.float16]
    h2 = mx.sym.histogram(mx.sym.var("a"), bins=mx.sym.var("b"))
    assert h2.list_arguments() == ["a", "b"]
    data = np.random.default_rng(0).uniform(-3, 3, (4, 5))
    edges = np.array([-1.0, 0.5, 2.0, 4.5, 50.0])
    exe = h2.bind(mx.cpu(), {"a": mx.nd.array(data, dtype=np.float64),
                             "b": mx.nd.array(edges, dtype=np.float64)})
    exe.forward(is_train=False)
    np.testing.assert_array_equal(exe.outputs[0].asnumpy(), np.histogram(data, edges)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="range"):
            mx.sym.histogram(mx.sym.var("a"), bins=4)
