"""_contrib_index_copy, _contrib_boolean_mask, _contrib_index_array, _ravel_multi_index and
_unravel_index: values from MXNet 1.9.1, gradients, every req, errors."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import MXNetError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, run_op


# -- index_copy ----------------------------------------------------------------------------
def test_index_copy_matches_mxnet():
    old, t = np.zeros((4, 2), np.float32), np.array([[1, 2], [3, 4]], np.float32)
    idx = np.array([3, 1], np.float32)
    check_forward("_contrib_index_copy", [old, idx, t],
                  np.array([[0, 0], [3, 4], [0, 0], [1, 2]], np.float32))
    og = np.arange(1, 9, dtype=np.float32).reshape(4, 2)
    check_backward("_contrib_index_copy", [old, idx, t], [og],
                   [np.array([[1, 2], [0, 0], [5, 6], [0, 0]]), np.zeros(2),
                    np.array([[7, 8], [3, 4]])])


def test_index_copy_backward_reqs():
    og = np.arange(6, dtype=np.float32).reshape(3, 2)
    ins = [og, np.zeros((3, 2), np.float32), np.array([2], np.int64), np.zeros((1, 2), np.float32)]
    outs = [np.ones((3, 2), np.float32), np.full(1, 7, np.int64), np.ones((1, 2), np.float32)]
    g_old, g_idx, g_new = run_op("_contrib_backward_index_copy", ins, req=["add", "null", "write"],
                                 outputs=outs)
    np.testing.assert_array_equal(g_old, [[1, 2], [3, 4], [1, 1]])
    np.testing.assert_array_equal(g_idx, [7])
    np.testing.assert_array_equal(g_new, [[4, 5]])


@pytest.mark.parametrize("shapes, match", [
    ([(2, 2), (3,), (2, 2)], "index_vector .*has shape \\(3,\\), expected \\(2,\\)"),
    ([(2, 2), (2, 1), (2, 2)], "index_vector must be 1-D"),
    ([(2, 2), (3,), (3, 2)], "new_tensor \\(3, 2\\) has more rows than old_tensor"),
    ([(4, 2), (1,), (1, 3)], "new_tensor \\(past dim 0, as old_tensor\\) has shape \\(3,\\), "
                                     "expected \\(2,\\)"),
    ([(4, 2), (1,), (1, 2, 1)], "new_tensor must have as many dims as old_tensor"),
])
def test_index_copy_shape_errors(shapes, match):
    f = np.dtype(np.float32)
    with pytest.raises(ShapeError, match=f"'_contrib_index_copy': {match}"):
        infer(op_def("_contrib_index_copy"), None, shapes, [f, f, f])


def test_index_copy_index_out_of_range():
    with pytest.raises(MXNetError, match="index_vector entries must lie in \\[0, 2\\), got "
                                         "values from 0 to 2"):
        run_op("_contrib_index_copy", [np.zeros((2, 2)), np.array([0, 2]), np.ones((2, 2))])


def test_index_copy_frontend_gradients():
    x, t = mx.nd.zeros((5, 3)), mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
    index = mx.nd.array([0, 4, 2], dtype=np.int64)
    x.attach_grad()
    t.attach_grad()
    with mx.autograd.record():
        out = mx.nd.contrib.index_copy(x, index, t)
    out.backward()
    np.testing.assert_array_equal(out.asnumpy()[[0, 4, 2]], t.asnumpy())
    np.testing.assert_array_equal(x.grad.asnumpy()[:, 0], [0, 1, 0, 1, 0])
    np.testing.assert_array_equal(t.grad.asnumpy(), np.ones((3, 3)))


# -- boolean_mask --------------------------------------------------------------------------
D = np.array([[1, 2], [3, 4], [5, 6]], np.float32)


def test_boolean_mask_kernel_and_gradient_match_mxnet():
    idx = np.array([1, 0, 1], np.int32)
    (out,) = run_op("_contrib_boolean_mask", [D, idx], outputs=[np.zeros((2, 2), np.float32)])
    np.testing.assert_array_equal(out, [[1, 2], [5, 6]])
    ins = [np.array([[1, 2], [3, 4]], np.float32), D, idx]
    g, g_idx = run_op("_backward_contrib_boolean_mask", ins)
    np.testing.assert_array_equal(g, [[1, 2], [0, 0], [3, 4]])
    np.testing.assert_array_equal(g_idx, [0, 0, 0])
    g, _ = run_op("_backward_contrib_boolean_mask", ins, req="add",
                  outputs=[np.ones((3, 2), np.float32), np.zeros(3, np.int32)])
    np.testing.assert_array_equal(g, [[2, 3], [1, 1], [4, 5]])
    (out,) = run_op("_contrib_boolean_mask", [D, np.zeros(3, bool)],
                    outputs=[np.zeros((0, 2), np.float32)])
    assert out.shape == (0, 2)


def test_boolean_mask_shape_rules():
    op = op_def("_contrib_boolean_mask")
    p = op.parse_params({})
    shape_rule = op.get_attr("FInferShape")
    assert shape_rule(p, [(3, 2), None], [None]) == ([(3, 2), None], [None])
    assert shape_rule(p, [None, (3,)], [(0, 2)]) == ([None, (3,)], [(0, 2)])
    assert op.get_attr("FInferShapeFromData")(p, [D, np.array([0, 2.5, -1])]) == [(2, 2)]
    with pytest.raises(ShapeError, match="'_contrib_boolean_mask': only axis=0 is supported"):
        shape_rule(op.parse_params({"axis": 1}), [(3, 2), (3,)], [None])
    with pytest.raises(ShapeError, match="index must be 1-D"):
        shape_rule(p, [(3, 2), (3, 1)], [None])
    with pytest.raises(ShapeError, match="index .*has shape \\(2,\\), expected \\(3,\\)"):
        shape_rule(p, [(3, 2), (2,)], [None])
    with pytest.raises(ShapeError, match="output \\(past dim 0\\) has shape \\(2,\\), expected"):
        shape_rule(p, [(3, 2), (3,)], [(1, 3)])


def test_boolean_mask_in_mx_nd_is_sized_by_the_mask_values():
    x = mx.nd.array(D)
    x.attach_grad()
    for mask, rows in (([0, 1, 1], [1, 2]), ([1, 0, 0], [0]), ([1, 1, 1], [0, 1, 2])):
        with mx.autograd.record():
            out = mx.nd.contrib.boolean_mask(x, mx.nd.array(mask))
        out.backward(mx.nd.ones(out.shape) * 2)
        np.testing.assert_array_equal(out.asnumpy(), D[rows])
        np.testing.assert_array_equal(x.grad.asnumpy(), 2 * np.array(mask)[:, None] * [1, 1])
    with mx.np_shape(True):                          # no row selected: a real (0, 2) result
        assert mx.nd.contrib.boolean_mask(x, mx.nd.zeros(3)).shape == (0, 2)


def test_boolean_mask_output_of_the_wrong_length_is_an_error():
    with pytest.raises(MXNetError, match="index selects 2 rows, so the output has shape "
                                         "\\(2, 2\\), got an output of shape \\(3, 2\\)"):
        run_op("_contrib_boolean_mask", [D, np.array([1, 0, 1])],
               outputs=[np.zeros((3, 2), np.float32)])


# -- index_array ---------------------------------------------------------------------------
def test_index_array_matches_mxnet():
    (out,) = run_op("_contrib_index_array", [np.ones((3, 2))])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [[[0, 0], [0, 1]], [[1, 0], [1, 1]], [[2, 0], [2, 1]]])
    check_forward("_contrib_index_array", [np.ones((2, 3))],
                  np.array([[[0], [1], [2]], [[0], [1], [2]]], np.int64), {"axes": (1,)})
    x = np.ones((2, 3, 4))
    (out,) = run_op("_contrib_index_array", [x], {"axes": (-1, 0)})
    np.testing.assert_array_equal(out, np.stack(np.indices(x.shape), -1)[..., [2, 0]])


def test_index_array_zero_dims_and_errors():
    with mx.np_shape(True):
        (out,) = run_op("_contrib_index_array", [np.ones(())])
        assert out.shape == (0,)
        (out,) = run_op("_contrib_index_array", [np.ones((0, 2, 0))], {"axes": (2, 1)})
        assert out.shape == (0, 2, 0, 2)
    with pytest.raises(ShapeError, match="'_contrib_index_array': axes entry=3 out of range"):
        run_op("_contrib_index_array", [np.ones((2, 3))], {"axes": (3,)})


def test_index_array_frontend_has_zero_gradient():
    x = mx.nd.ones((2, 2))
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.index_array(x)
    y.backward()
    np.testing.assert_array_equal(x.grad.asnumpy(), np.zeros((2, 2)))


# -- ravel_multi_index / unravel_index -----------------------------------------------------
def test_ravel_unravel_match_mxnet():
    # float indices truncate at each step; C division for negative flat indices (MXNet 1.9.1)
    check_forward("_ravel_multi_index", [np.array([[3.7, -1], [6.2, 2]], np.float32)],
                  np.array([24, -4], np.float32), {"shape": (7, 6)})
    check_forward("_unravel_index", [np.array([22.9, -7, 41], np.float32)],
                  np.array([[3, -1, 6], [4, -1, 5]], np.float32), {"shape": (7, 6)})
    check_forward("ravel_multi_index", [np.array([[3, 6, 6], [4, 5, 1]], np.int32)],
                  np.array([22, 41, 37], np.int32), {"shape": (-1, 6)})
    check_forward("unravel_index", [np.array([23], np.float64)],
                  np.array([[1], [2], [3]], np.float64), {"shape": (2, 3, 4)})


def test_ravel_shapes_fill_both_ways():
    ravel, unravel = op_def("_ravel_multi_index"), op_def("_unravel_index")
    p = ravel.parse_params({"shape": (7, 6)})
    assert ravel.get_attr("FInferShape")(p, [None], [(5,)]) == ([(2, 5)], [(5,)])
    assert unravel.get_attr("FInferShape")(p, [None], [(2, 5)]) == ([(5,)], [(2, 5)])


@pytest.mark.parametrize("op, shape, params, match", [
    ("_ravel_multi_index", (3, 4), {"shape": (7, 6)}, "data has 3 rows, expected one per entry"),
    ("_ravel_multi_index", (2,), {"shape": (7, 6)}, "data must be 2-D"),
    ("_ravel_multi_index", (2, 2), {}, "shape must name the array's dimensions"),
    ("_unravel_index", (2, 2), {"shape": (7, 6)}, "data must be 1-D"),
    ("_unravel_index", (2,), {"shape": (7, 0)}, "shape entries after the first must be positive"),
])
def test_ravel_errors(op, shape, params, match):
    with pytest.raises(ShapeError, match=f"'{op}': {match}"):
        run_op(op, [np.zeros(shape, np.float32)], params)
