"""NDArray indexing: views where MXNet shares memory, copies elsewhere, advanced indexing,
assignment with scalars/arrays/broadcasting."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import ShapeError

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


def nd():
    return mx.nd.array(X)


@pytest.mark.parametrize("key", [
    0, 1, -1, slice(0, 1), slice(None), (1, 2), (0, slice(1, 3)), (slice(None), 1),
    (1, slice(None), 2), (slice(None), slice(None, None, 2)), (Ellipsis, 1),
    (slice(None, None, -1),), (None, 0), (slice(0, 5),), (1, 2, 3)])
def test_basic_indexing_matches_numpy(key):
    want = X[key]
    got = nd()[key]
    assert isinstance(got, mx.nd.NDArray)
    assert got.shape == (want.shape or (1,))
    np.testing.assert_array_equal(got.asnumpy(), want.reshape(got.shape))


def test_int_index_of_1d_gives_shape_1():
    a = mx.nd.array([1, 2, 3])
    assert a[0].shape == (1,) and a[-1].asscalar() == 3


def test_first_axis_views_share_memory():
    a = nd()
    v = a[1]
    s = a[0:1]
    v[:] = 0
    s[:] = -1
    got = a.asnumpy()
    assert (got[1] == 0).all() and (got[0] == -1).all()


def test_other_slices_are_copies():
    a = nd()
    c = a[:, 1]
    c[:] = 100
    assert a.asnumpy().max() == 23


def test_out_of_range_index():
    with pytest.raises(IndexError):
        nd()[2]


@pytest.mark.parametrize("idx", [[1, 0], np.array([1, 1, 0])])
def test_advanced_indexing_by_list_and_numpy(idx):
    np.testing.assert_array_equal(nd()[idx].asnumpy(), X[np.asarray(idx)])


def test_advanced_indexing_by_ndarray():
    a = mx.nd.array([[1, 2], [3, 4], [5, 6]])
    idx = mx.nd.array([2, 0])
    assert a[idx].asnumpy().tolist() == [[5, 6], [1, 2]]
    assert a[(idx, mx.nd.array([1, 0]))].asnumpy().tolist() == [6, 1]


def test_setitem_scalars_arrays_broadcasting():
    a = nd()
    a[0] = 1
    a[1, 2] = mx.nd.array([7, 8, 9, 10])
    a[1, 0:2] = mx.nd.array([[5], [6]])           # broadcast along the last axis
    a[:, :, 3] = np.full((2, 3), -2)
    want = X.copy()
    want[0] = 1
    want[1, 2] = [7, 8, 9, 10]
    want[1, 0:2] = [[5], [6]]
    want[:, :, 3] = -2
    np.testing.assert_array_equal(a.asnumpy(), want)


def test_setitem_whole_and_by_index_array():
    a = mx.nd.zeros((4,))
    a[:] = 3
    a[mx.nd.array([0, 2])] = 9
    assert a.asnumpy().tolist() == [9, 3, 9, 3]


def test_setitem_is_ordered_with_other_ops():
    a = mx.nd.zeros((2, 2))
    b = a + 1            # reads a before the write below
    a[0] = 5
    c = a + 1
    assert b.asnumpy().tolist() == [[1, 1], [1, 1]]
    assert c.asnumpy().tolist() == [[6, 6], [1, 1]]


def test_setitem_from_other_context():
    a = mx.nd.zeros((2,), ctx=mx.cpu(0))
    a[:] = mx.nd.array([1, 2], ctx=mx.cpu(2))
    assert a.asnumpy().tolist() == [1, 2]


@pytest.mark.parametrize("key, value, error", [
    (0, [1.0, 2.0, 3.0], ShapeError),                      # (3,) into a row of 4
    ((slice(None), slice(None, None, 2)), np.ones((3, 3)), ShapeError),
    (3, 1.0, IndexError),                                 # out of range
    ((0, 5), 1.0, IndexError)])
def test_bad_assignment_raises_at_once_and_changes_nothing(key, value, error):
    a = mx.nd.arange(12).reshape((3, 4))
    v = mx.nd.array(value) if isinstance(value, (list, np.ndarray)) else value
    with pytest.raises(error):
        a[key] = v
    np.testing.assert_array_equal(a.asnumpy(), np.arange(12).reshape(3, 4))


def test_assignment_accepts_what_numpy_broadcasts():
    a = mx.nd.zeros((3, 4))
    a[0] = mx.nd.ones((1, 4))                      # leading unit axes are dropped
    a[1:] = mx.nd.array([1.0, 2.0, 3.0, 4.0])
    a[:, 0] = np.array([7.0, 8.0, 9.0])
    np.testing.assert_array_equal(a.asnumpy(), [[7, 1, 1, 1], [8, 2, 3, 4], [9, 2, 3, 4]])


def test_assigning_a_one_element_array_to_one_element():
    """MXNet drops the value's leading unit axes the selection lacks (numpy 2 refuses)."""
    b = mx.nd.zeros(1)
    b[0] = np.array([47.844944], dtype=np.float32)
    assert b.asnumpy()[0] == np.float32(47.844944)
    c = mx.nd.zeros((2, 3))
    c[1] = mx.nd.ones((1, 3))
    c[0, 2] = mx.nd.array([5.0])
    np.testing.assert_array_equal(c.asnumpy(), [[0, 0, 5], [1, 1, 1]])


def test_contiguous_basic_indexing_returns_views_others_copies():
    """As MXNet: ints and slices selecting one contiguous block share memory."""
    x = mx.nd.array(np.arange(60).reshape(3, 4, 5))
    block = x[1, 2:4]                      # rows 2-3 of plane 1: contiguous
    block[:] = -1
    single = x[2, 3, 4]                    # one element: shape (1,), shared
    single[:] = -2
    strided = x[:, 1]                      # one row of every plane: a copy
    strided[:] = -3
    want = np.arange(60).reshape(3, 4, 5)
    want[1, 2:4] = -1
    want[2, 3, 4] = -2
    np.testing.assert_array_equal(x.asnumpy(), want)
    assert single.shape == (1,) and block.shape == (2, 5)
    assert mx.nd.NDArray._basic_indexing_slice_is_contiguous(
        (slice(1, 2), slice(2, 4), slice(None)), (3, 4, 5))


@pytest.mark.parametrize("key", [(1, [2, 3]), (1, [2], np.array([[2], [0]])),
                                 ([1, 1], slice(0, 2), [0, 2]), (Ellipsis, [0, 0, 2])])
def test_advanced_indexing_is_differentiable(key):
    """Index arrays mixed with ints and slices while recording: numpy's selection, and its
    gradient scatters back (adding up where a position is taken twice)."""
    x0 = np.arange(3 * 4 * 3, dtype=np.float32).reshape(3, 4, 3)
    x = mx.nd.array(x0)
    x.attach_grad()
    with mx.autograd.record():
        y = x[key]
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), x0[key])
    want = np.zeros_like(x0)
    np.add.at(want, key, 1)
    np.testing.assert_array_equal(x.grad.asnumpy(), want)
