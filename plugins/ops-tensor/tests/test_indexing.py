"""take, pick, fill_element_0index, gather_nd, scatter_nd, one_hot (values checked against
MXNet 1.9's)."""

import numpy as np
import pytest

from mxnext import ops as registry
from opsdk import MXNetError, ParamError, ShapeError, TypeInferError
from opsdk.testing import check_backward, check_forward, run_op

A = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def test_take_modes():
    idx = np.array([-1, 3.7], np.float32)
    check_forward("take", [A, idx], np.array([[1, 2], [5, 6]], np.float32))         # clip
    check_forward("take", [A, np.array([-1, 3], np.int32)], A[[2, 0]], {"mode": "wrap"})
    check_forward("take", [A, np.array([[1, 0]], np.int64)], A[:, [[1, 0]]], {"axis": 1})
    with pytest.raises(MXNetError, match="out of range"):
        run_op("take", [A, np.array([3], np.int32)], {"mode": "raise"})
    with pytest.raises(ParamError, match="mode"):
        run_op("take", [A, idx], {"mode": "nearest"})


def test_take_gradient_accumulates_repeats():
    idx = np.array([0, 2, 0], np.int32)
    g = np.ones((3, 2), np.float32)
    check_backward("take", [A, idx], [g], [np.array([[2, 2], [0, 0], [1, 1]], np.float32)])


def test_pick():
    check_forward("pick", [A, np.array([-1, 3, 1], np.float32)], np.array([2, 4, 6], np.float32),
                  {"axis": 1, "mode": "wrap"})
    check_forward("pick", [A, np.array([0, 1, 1], np.int32)], np.array([[1], [4], [6]], np.float32),
                  {"keepdims": True})
    check_forward("pick", [A, np.array([[2, 0]], np.int32)], np.array([5, 2], np.float32), {"axis": 0})
    g = np.array([1, 2, 3], np.float32)
    check_backward("pick", [A, np.array([1, 0, 1], np.int32)], [g],
                   [np.array([[0, 1], [2, 0], [0, 3]], np.float32)])


def test_gather_and_scatter_nd():
    data = np.arange(12, dtype=np.float32).reshape(3, 4)
    idx = np.array([[0, 2, 2], [1, 3, 3]], np.int32)
    check_forward("gather_nd", [data, idx], np.array([1, 11, 11], np.float32))
    check_forward("gather_nd", [data, np.array([[2, 0]], np.int32)], data[[2, 0]])
    want = np.zeros((3, 4), np.float32)
    want[0, 1], want[2, 3] = 1, 2     # repeated index: gradient accumulates
    check_backward("gather_nd", [data, idx], [np.array([1, 1, 1], np.float32)],
                   [np.array([[0, 1, 0, 0], [0, 0, 0, 0], [0, 0, 0, 2]], np.float32)])
    out = np.zeros((3, 4), np.float32)
    out[0, 1], out[2, 0] = 5, 6
    check_forward("scatter_nd", [np.array([5, 6], np.float32), np.array([[0, 2], [1, 0]], np.int32)],
                  out, {"shape": (3, 4)})


def test_one_hot():
    want = np.array([[0, 1, 0], [0, 0, 0], [0, 0, 0]], np.float32)   # out of range rows stay off
    check_forward("one_hot", [np.array([1, -1, 5], np.float32)], want, {"depth": 3})
    (out,) = run_op("one_hot", [np.array([0, 2], np.int32)],
                    {"depth": 3, "on_value": 5, "off_value": -1, "dtype": "int64"})
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [[5, -1, -1], [-1, -1, 5]])


def test_choose_element_0index_is_pick():
    assert registry.get("choose_element_0index") is registry.get("pick")
    check_forward("choose_element_0index", [A, np.array([1, 0, 1], np.float32)],
                  np.array([2, 3, 6], np.float32))


def test_fill_element_0index():
    m = np.arange(9, dtype=np.float32).reshape(3, 3)
    value = np.array([7, 8, 9], np.float32)
    index = np.array([1, 2.7, -1], np.float32)      # 2.7 -> column 2; -1 (no column): unchanged
    check_forward("fill_element_0index", [m, value, index],
                  np.array([[0, 7, 2], [3, 4, 8], [6, 7, 8]], np.float32))
    check_forward("fill_element_0index", [m, value, np.array([3, 0, 0], np.float32)],
                  np.array([[0, 1, 2], [8, 4, 5], [9, 7, 8]], np.float32))
    with pytest.raises(ShapeError, match="one row count"):
        run_op("fill_element_0index", [m, value[:2], index[:2]])
    with pytest.raises(ShapeError, match="2-D lhs"):
        run_op("fill_element_0index", [m.reshape(9), value, index])
    with pytest.raises(TypeInferError):
        run_op("fill_element_0index", [m, value.astype(np.int32), index])
    assert registry.get("fill_element_0index").get_attr("FGradient") is None   # as MXNet


def test_batch_take_clips_indices():
    idx = np.array([-1, 5, 1], np.int32)                   # MXNet 1.9: [1, 4, 6]
    check_forward("batch_take", [A, idx], np.array([1, 4, 6], np.float32))
    check_forward("batch_take", [A.astype(np.int64), np.array([0, 1, 0], np.int32)],
                  np.array([1, 4, 5], np.int64))
    assert registry.get("batch_take").get_attr("FGradient") is None   # as MXNet


def test_batch_take_inference():
    infer_shape = registry.get("batch_take").get_attr("FInferShape")
    assert infer_shape(None, [(3, 4), None], [(3,)]) == ([(3, 4), (3,)], [(3,)])
    infer_type = registry.get("batch_take").get_attr("FInferType")
    assert infer_type(None, [np.float16, None], [None]) == ([np.float16, np.int32], [np.float16])
    for idx in (np.array([0, 1, 0], np.float32), np.array([0, 1, 0], np.int64)):
        with pytest.raises(TypeInferError, match="int32"):
            run_op("batch_take", [A, idx])
    with pytest.raises(ShapeError, match="at least 2 dims"):
        run_op("batch_take", [A[:, 0], np.array([0, 1, 0], np.int32)])
    with pytest.raises(ShapeError, match="one entry per row"):
        run_op("batch_take", [A, np.array([0, 1], np.int32)])
    with pytest.raises(ShapeError, match="one entry per row"):   # MXNet reads past the data
        run_op("batch_take", [np.zeros((2, 3, 4), np.float32), np.zeros(6, np.int32)])


def test_take_raise_accepts_only_0_to_n_minus_1():
    """MXNet 1.9: mode='raise' rejects negative indices and checks them before truncation."""
    check_forward("take", [A, np.array([2.0, 0], np.float32)], A[[2, 0]], {"mode": "raise"})
    for bad in ([-1], [2.5]):
        with pytest.raises(MXNetError, match="out of range"):
            run_op("take", [A, np.array(bad, np.float32)], {"mode": "raise"})
