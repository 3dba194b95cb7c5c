"""Python operators on NDArray: MXNet's broadcasting and scalar rules, in-place forms."""

import operator
import warnings

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

A = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=np.float32)
B = np.array([[2.0], [3.0]], dtype=np.float32)


@pytest.mark.parametrize("op", [operator.add, operator.sub, operator.mul, operator.truediv,
                                operator.mod, operator.pow])
def test_binary_broadcasting_and_scalars(op):
    a, b = mx.nd.array(A), mx.nd.array(B)
    np.testing.assert_allclose(op(a, b).asnumpy(), op(A, B), rtol=1e-5)
    np.testing.assert_allclose(op(a, 2).asnumpy(), op(A, np.float32(2)), rtol=1e-5)
    np.testing.assert_allclose(op(3, a).asnumpy(), op(np.float32(3), A), rtol=1e-5)
    np.testing.assert_allclose(op(a, 2.5).asnumpy(), op(A, np.float32(2.5)), rtol=1e-5)


def test_inf_and_nan_results_are_silent_as_in_mxnet():
    a = mx.nd.array([1.0, 0.0, -1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = [(a / 0).asnumpy(), mx.nd.log(a).asnumpy(), mx.nd.sqrt(a).asnumpy(),
             (mx.nd.array([3e38]) * 10).asnumpy()]
    np.testing.assert_array_equal(r[0], [np.inf, np.nan, -np.inf])
    assert np.isneginf(r[1][1]) and np.isnan(r[2][2]) and np.isinf(r[3][0])


@pytest.mark.parametrize("op", [operator.eq, operator.ne, operator.gt, operator.ge,
                                operator.lt, operator.le])
def test_comparisons_give_float_masks(op):
    a = mx.nd.array(A)
    r = op(a, 3)
    assert r.dtype == np.float32
    np.testing.assert_array_equal(r.asnumpy(), op(A, 3).astype(np.float32))
    np.testing.assert_array_equal(op(3, a).asnumpy(), op(np.float32(3), A).astype(np.float32))
    np.testing.assert_array_equal(op(a, mx.nd.array(B)).asnumpy(), op(A, B).astype(np.float32))


def test_inplace_forms_mutate_the_array():
    a = mx.nd.array(A)
    same = a
    a += 1
    a *= 2
    a -= mx.nd.array(B)
    a /= 2
    a **= 1
    a %= 100
    assert a is same
    np.testing.assert_allclose(a.asnumpy(), ((A + 1) * 2 - B) / 2 % 100, rtol=1e-6)


def test_inplace_through_a_view_changes_the_base():
    a = mx.nd.zeros((3, 2))
    row = a[1]
    row += 5
    assert a.asnumpy().tolist() == [[0, 0], [5, 5], [0, 0]]


def test_unary_minus_abs_matmul():
    a = mx.nd.array(A)
    np.testing.assert_array_equal((-a).asnumpy(), -A)
    np.testing.assert_array_equal(abs(mx.nd.array(-A)).asnumpy(), A)
    np.testing.assert_allclose((a @ mx.nd.array(A.T)).asnumpy(), A @ A.T)
    assert (+a) is a


def test_integer_arrays_keep_their_dtype_with_scalars():
    a = mx.nd.array([1, 2, 3], dtype="int32")
    r = a + 1.5
    assert r.dtype == np.int32


def test_numpy_operand_is_converted():
    a = mx.nd.array(A)
    r = a + np.ones((2, 3), dtype=np.float32)
    assert isinstance(r, mx.nd.NDArray)
    np.testing.assert_array_equal(r.asnumpy(), A + 1)


def test_incompatible_shapes_raise():
    with pytest.raises(MXNetError, match="broadcast_add"):
        mx.nd.ones((2, 3)) + mx.nd.ones((4, 3))


def test_unsupported_operand_type():
    with pytest.raises(TypeError):
        mx.nd.ones((2,)) + "x"


NP_FUNCTIONS = {
    "add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
    "true_divide": np.true_divide, "power": np.power,
    "modulo": lambda a, b: np.where(np.equal(b, 0), 0, np.mod(a, b)),   # MXNet: x % 0 is 0
    "maximum": np.maximum, "minimum": np.minimum, "hypot": np.hypot,
    "equal": np.equal, "not_equal": np.not_equal, "greater": np.greater,
    "greater_equal": np.greater_equal, "lesser": np.less, "lesser_equal": np.less_equal,
    "logical_and": np.logical_and, "logical_or": np.logical_or, "logical_xor": np.logical_xor,
}


@pytest.mark.parametrize("name", list(NP_FUNCTIONS))
def test_module_functions_take_arrays_or_scalars_on_either_side(name):
    a0 = np.array([[1.0, 2.5, 0.0], [4.0, 0.5, 3.0]], dtype=np.float32)
    b0 = np.array([2.0, 1.0, 3.0], dtype=np.float32)
    fn, ref = getattr(mx.nd, name), NP_FUNCTIONS[name]
    a, b = mx.nd.array(a0), mx.nd.array(b0)
    with np.errstate(all="ignore"):          # 2 / 0 and 2 % 0 in the reference
        cases = [(a, b, ref(a0, b0)), (a, 2.0, ref(a0, 2.0)), (2.0, a, ref(2.0, a0))]
    for lhs, rhs, want in cases:
        got = fn(lhs, rhs)
        assert isinstance(got, mx.nd.NDArray) and got.dtype == np.float32
        np.testing.assert_allclose(got.asnumpy(), want.astype(np.float32), rtol=1e-6)
    assert fn(3, 2) == pytest.approx(float(ref(3, 2)))       # two scalars: a plain number
    with pytest.raises(TypeError, match=f"mx.nd.{name}"):
        fn("x", a)
