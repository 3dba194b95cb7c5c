"""The scatter ops and the binary sparse kernels of _maximum/_minimum/_hypot: storage types,
stored positions and values as MXNet 1.9.1 printed them for these inputs."""

import mxnext as mx
import numpy as np
import pytest

F64 = "float64"


def _lhs():
    return mx.nd.sparse.row_sparse_array((np.array([[1.0, 2], [3, 4]]), [0, 2]), shape=(4, 2),
                                         dtype=F64)


def _rhs():
    return mx.nd.sparse.row_sparse_array((np.array([[2.0, 2], [5, 5]]), [0, 1]), shape=(4, 2),
                                         dtype=F64)


CSR = np.array([[1.0, 0], [0, 0], [0, 3], [0, 0]])
DENSE = np.full((4, 2), 2.0)
DIV = mx.nd._internal._scatter_elemwise_div


def test_scatter_div_of_a_row_sparse_lhs_computes_its_rows_only():
    out = DIV(_lhs(), _rhs())
    assert out.stype == "row_sparse" and out.indices.asnumpy().tolist() == [0, 2]
    assert out.asnumpy().tolist() == [[0.5, 1.0], [0, 0], [np.inf, np.inf], [0, 0]]
    out = DIV(_lhs(), mx.nd.array(DENSE, dtype=F64))
    assert out.stype == "row_sparse"
    assert out.asnumpy().tolist() == [[0.5, 1.0], [0, 0], [1.5, 2.0], [0, 0]]


def test_scatter_div_otherwise_is_elemwise_div():
    out = DIV(mx.nd.array(DENSE, dtype=F64), _rhs())
    assert out.stype == "default"
    assert out.asnumpy().tolist() == [[1, 1], [0.4, 0.4], [np.inf, np.inf], [np.inf, np.inf]]
    out = DIV(mx.nd.array(CSR, dtype=F64).tostype("csr"), mx.nd.array(DENSE, dtype=F64))
    assert out.stype == "default" and out.asnumpy().tolist() == (CSR / 2).tolist()


@pytest.mark.parametrize("name, sign", [("_scatter_plus_scalar", 1),
                                        ("_scatter_minus_scalar", -1)])
def test_scatter_scalar_moves_the_stored_values_only(name, sign):
    op = getattr(mx.nd._internal, name)
    rsp = op(_lhs(), scalar=9)
    assert rsp.stype == "row_sparse" and rsp.indices.asnumpy().tolist() == [0, 2]
    want = _lhs().asnumpy() + sign * 9
    want[[1, 3]] = 0
    assert rsp.asnumpy().tolist() == want.tolist()
    csr = op(mx.nd.array(CSR).tostype("csr"), scalar=9)
    assert csr.stype == "csr" and csr.asnumpy().tolist() == np.where(CSR, CSR + sign * 9,
                                                                     0).tolist()
    dense = op(mx.nd.array(DENSE), scalar=9)
    assert dense.stype == "default" and (dense.asnumpy() == 2 + sign * 9).all()
    ints = op(mx.nd.array([1, 2], dtype="int32"), scalar=1.5)     # is_int truncates
    assert ints.dtype == np.int32 and ints.asnumpy().tolist() == [1 + sign, 2 + sign]


def test_scatter_ops_in_an_executor_and_their_gradients():
    x, y = mx.sym.Variable("x"), mx.sym.Variable("y")
    grads = {"x": mx.nd.zeros((4, 2), dtype=F64), "y": mx.nd.zeros((4, 2), dtype=F64)}
    exe = mx.sym._internal._scatter_elemwise_div(x, y).bind(
        mx.cpu(), {"x": _lhs(), "y": _rhs()}, args_grad=grads)
    (out,) = exe.forward(is_train=True)
    assert out.stype == "row_sparse" and out.indices.asnumpy().tolist() == [0, 2]
    exe.backward(mx.nd.ones((4, 2), dtype=F64))
    rhs = _rhs().asnumpy()
    with np.errstate(divide="ignore", invalid="ignore"):
        np.testing.assert_array_equal(grads["x"].asnumpy(), 1 / rhs)
        np.testing.assert_array_equal(grads["y"].asnumpy(), -_lhs().asnumpy() / rhs ** 2)
    grad = mx.nd.zeros((4, 2), dtype=F64)
    exe = mx.sym._internal._scatter_plus_scalar(x, scalar=3).bind(
        mx.cpu(), {"x": _lhs()}, args_grad={"x": grad})
    assert exe.forward(is_train=True)[0].asnumpy().tolist() == [[4, 5], [0, 0], [6, 7], [0, 0]]
    exe.backward(mx.nd.ones((4, 2), dtype=F64) * 2)
    assert (grad.asnumpy() == 2).all()


@pytest.mark.parametrize("name", ["_maximum", "_minimum", "_hypot"])
def test_binary_zero_preserving_ops_keep_two_sparse_inputs_sparse(name):
    op = getattr(mx.nd._internal, name)
    ufunc = {"_maximum": np.maximum, "_minimum": np.minimum, "_hypot": np.hypot}[name]
    out = op(_lhs(), _rhs())
    assert out.stype == "row_sparse" and out.indices.asnumpy().tolist() == [0, 1, 2]
    assert out.asnumpy().tolist() == ufunc(_lhs().asnumpy(), _rhs().asnumpy()).tolist()
    csr = mx.nd.array(CSR).tostype("csr")
    assert op(csr, csr).stype == "csr"
    assert op(_lhs(), mx.nd.array(DENSE, dtype=F64)).stype == "default"
