"""khatri_rao: values as MXNet 1.9.1 printed them, partial shape inference, the gradient
(an mxnext addition) and the errors for bad shapes and dtypes."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import ParamError, ShapeError, TypeInferError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, op_def

A = np.array([[1, -2, 0.5], [3, 0.25, -1]], np.float32)
B = np.array([[2, 1, -1], [0.5, 4, 2], [-3, 1, 1]], np.float32)
C = np.array([[1, 2, 3], [-1, 0.5, 2]], np.float32)
# mx.nd.khatri_rao(A, B, C) as MXNet 1.9.1 printed it (float32 and float64 alike)
ABC = np.array([[2, -4, -1.5], [-2, -1, -1], [0.5, -16, 3], [-0.5, -4, 2], [-3, -4, 1.5],
                [3, -1, 1], [6, 0.5, 3], [-6, 0.125, 2], [1.5, 2, -6], [-1.5, 0.5, -4],
                [-9, 0.5, -3], [9, 0.125, -2]], np.float32)


def test_values_match_mxnet():
    check_forward("khatri_rao", [A, B, C], ABC, {"num_args": 3}, atol=0, rtol=0)
    wide = [a.astype(np.float64) for a in (A, B, C)]
    check_forward("khatri_rao", wide, ABC.astype(np.float64), {"num_args": 3}, atol=0, rtol=0)
    out = mx.nd.khatri_rao(mx.nd.array(A), mx.nd.khatri_rao(mx.nd.array(B), mx.nd.array(C)))
    np.testing.assert_array_equal(out.asnumpy(), ABC)   # the product is associative
    check_forward("khatri_rao", [A], A, {"num_args": 1})


def test_symbol_infers_shapes_both_ways():
    a, b = mx.sym.var("a"), mx.sym.var("b")
    s = mx.sym.khatri_rao(a, b)
    assert s.list_arguments() == ["a", "b"]
    assert s.infer_shape(a=(2, 3), b=(4, 3)) == ([(2, 3), (4, 3)], [(8, 3)], [])
    assert s.infer_shape_partial(a=(2, 3))[0] == [(2, 3), (0, 3)]
    infer = op_def("khatri_rao").get_attr("FInferShape")
    p = op_def("khatri_rao").parse_params({"num_args": 2})
    assert infer(p, [(2, 3), None], [(8, 3)])[0] == [(2, 3), (4, 3)]
    with pytest.raises(ShapeError, match="output rows 8 are not a multiple of the other "
                                         "inputs' rows product 3"):
        infer(p, [(3, 3), None], [(8, 3)])


def test_gradient():
    og = np.arange(18, dtype=np.float32).reshape(6, 3) - 8
    a, b = A, B[:3]
    # d/da[i, k] = sum_j og[i*3 + j, k] b[j, k]; d/db[j, k] = sum_i og[i*3 + j, k] a[i, k]
    g = og.reshape(2, 3, 3)
    check_backward("khatri_rao", [a, b], [og],
                   [(g * b[None]).sum(1), (g * a[:, None]).sum(0)], {"num_args": 2})
    check_numeric_gradient("khatri_rao", [A, B, C], {"num_args": 3})
    x = mx.nd.array(A)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.khatri_rao(x, x)
    y.backward()
    # y[(i, j), k] = x[i, k] x[j, k]: every row of x gets 2 * (column sums of x)
    np.testing.assert_allclose(x.grad.asnumpy(), np.broadcast_to(2 * A.sum(0), A.shape))


@pytest.mark.parametrize("shapes, message", [
    ([(2, 3), (4, 2)], "all matrices need the same number of columns: arg0 has 3, arg1 has 2"),
    ([(2, 2, 2), (2, 2)], "input arg0 must be a matrix \\(2 dims\\), got shape \\(2, 2, 2\\)"),
    ([(3,)], "input arg0 must be a matrix"),
])
def test_bad_shapes(shapes, message):
    with pytest.raises(ShapeError, match="'khatri_rao': " + message):
        mx.nd.khatri_rao(*[mx.nd.ones(s) for s in shapes])


def test_bad_dtypes_and_params():
    with pytest.raises(TypeInferError, match="'khatri_rao'.*int32, expected float32 or float64"):
        mx.nd.khatri_rao(mx.nd.ones((2, 2), dtype="int32"))
    with pytest.raises(TypeInferError, match="'khatri_rao'"):
        mx.nd.khatri_rao(mx.nd.ones((2, 2)), mx.nd.ones((2, 2), dtype="float64"))
    with pytest.raises(ParamError, match="num_args"):
        op_def("khatri_rao").parse_params({"num_args": 0})
