"""Integer division by zero is an error naming the op (MXNet returns INT_MIN silently);
float division and integer mod keep MXNet's results."""

import numpy as np
import pytest
import mxnext as mx
from mxnext.base import MXNetError
from opsdk.testing import check_forward, run_op

A = np.array([7, -7, 9], np.int32)
Z = np.array([2, 0, 4], np.int32)


@pytest.mark.parametrize("op", ["broadcast_div", "elemwise_div"])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.int8])
def test_integer_division_by_an_array_holding_zero_is_refused(op, dtype):
    with pytest.raises(MXNetError, match=rf"Operator '{op}': integer division by zero: rhs "
                                         rf"\({np.dtype(dtype)}, shape \(3,\)\) has 1 zero "
                                         rf"element; cast to a float dtype"):
        run_op(op, [np.abs(A).astype(dtype), Z.astype(dtype)])


def test_broadcast_div_counts_the_zeros_of_the_broadcast_divisor():
    with pytest.raises(MXNetError, match=r"rhs \(int32, shape \(1, 3\)\) has 2 zero elements"):
        run_op("broadcast_div", [A.reshape(3, 1), np.array([[0, 1, 0]], np.int32)])


@pytest.mark.parametrize("scalar", [0, 0.5, -0.9])
def test_div_scalar_by_a_scalar_truncating_to_zero_is_refused(scalar):
    with pytest.raises(MXNetError, match=rf"Operator '_div_scalar': integer division by zero: "
                                         rf"scalar {scalar:g} is 0 as an integer for int32"):
        run_op("_div_scalar", [A], {"scalar": scalar})


def test_rdiv_scalar_by_integer_data_holding_zero_is_refused():
    with pytest.raises(MXNetError, match=r"Operator '_rdiv_scalar': integer division by zero: "
                                         r"data \(int32, shape \(3,\)\) has 1 zero element"):
        run_op("_rdiv_scalar", [Z], {"scalar": 4})


def test_the_ndarray_operators_raise_and_leave_the_target_unchanged():
    a, z = mx.nd.array(A, dtype="int32"), mx.nd.array(Z, dtype="int32")
    for divide in (lambda: a / z, lambda: a / 0, lambda: 5 / z):
        with pytest.raises(MXNetError, match="integer division by zero"):
            divide().asnumpy()
    b = mx.nd.array(A, dtype="int32")
    with pytest.raises(MXNetError, match="'broadcast_div': integer division by zero"):
        b /= z
        b.wait_to_read()
    assert b.asnumpy().tolist() == A.tolist()


def test_what_stays_as_mxnet_gives_it():
    check_forward("broadcast_div", [A, np.array([2, -3, 4], np.int32)],
                  np.array([3, 2, 2], np.int32))               # truncated toward zero
    check_forward("_div_scalar", [A], np.array([14, -14, 18.]), {"scalar": 0.5,
                                                                  "is_int": False})
    check_forward("_div_scalar", [A], np.array([3, -3, 4], np.int32), {"scalar": 2.5})
    with np.errstate(divide="ignore"):
        check_forward("broadcast_div", [A.astype(np.float32), Z.astype(np.float32)],
                      A.astype(np.float32) / Z.astype(np.float32))
    check_forward("_mod", [A, Z], np.array([1, 0, 1], np.int32))   # MXNet: x % 0 is 0
