"""OpReqType, OpContext, assign (ASSIGN_DISPATCH) and call_compute."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from mxnext.base import ParamError
from mxnext.context import cpu
from mxnext.engine import RunContext
from mxnext.opctx import OpContext, OpReqType, as_req, assign, call_compute


def test_req_values_match_mxnet():
    assert [int(r) for r in OpReqType] == [0, 1, 2, 3]
    assert [as_req(s) for s in ("null", "write", "inplace", "add")] == list(OpReqType)
    assert as_req(3) is OpReqType.ADD_TO and as_req(OpReqType.NULL) is OpReqType.NULL
    with pytest.raises(ParamError, match="'adds'.*'add'"):
        as_req("adds")


@pytest.mark.parametrize("req, expected", [(OpReqType.NULL, [5.0, 5.0]),
                                           (OpReqType.WRITE_TO, [1.0, 2.0]),
                                           (OpReqType.WRITE_INPLACE, [1.0, 2.0]),
                                           (OpReqType.ADD_TO, [6.0, 7.0])])
def test_assign_honours_req(req, expected):
    out = np.full(2, 5.0)
    assign(out, req, np.array([1.0, 2.0]))
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("req, expected", [(OpReqType.WRITE_TO, 2.0), (OpReqType.ADD_TO, 5.0),
                                           (OpReqType.NULL, 3.0)])
def test_assign_on_zero_dim_arrays_and_scalars(req, expected):
    out = np.array(3.0)
    assign(out, req, 2.0)
    assert out.shape == () and float(out) == expected


def test_assign_when_value_aliases_out():
    out = np.array([1.0, 2.0])
    assign(out, OpReqType.ADD_TO, out)
    np.testing.assert_array_equal(out, [2.0, 4.0])
    assign(out, OpReqType.WRITE_INPLACE, out[::-1])
    np.testing.assert_array_equal(out, [4.0, 2.0])


def test_assign_broadcasts_and_casts_into_out():
    out = np.zeros((2, 2), dtype=np.float32)
    assign(out, OpReqType.WRITE_TO, np.array([1, 2]))
    assert out.dtype == np.float32 and out.tolist() == [[1, 2], [1, 2]]


def test_opcontext_fields():
    ctx = OpContext(is_train=True, run_ctx=RunContext(cpu(0)), requested=["r"], xp=np)
    assert ctx.is_train and ctx.ctx == cpu(0) and ctx.requested == ["r"] and ctx.xp is np
    assert OpContext().xp is np and OpContext().ctx is None


def test_call_compute_silences_floating_point_warnings_only_inside():
    def divide(ctx, inputs, req, outputs, params):
        np.divide(inputs[0], 0.0, out=outputs[0])
    out = np.empty(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        call_compute(divide, OpContext(), [np.array([1.0, 0.0])], [OpReqType.WRITE_TO], [out],
                     None)
        with pytest.raises(RuntimeWarning):
            np.divide(np.array([1.0]), 0.0)          # the caller's state is back
    assert np.isinf(out[0]) and np.isnan(out[1])


def test_call_compute_restores_the_state_when_the_kernel_fails():
    def bad(ctx, inputs, req, outputs, params):
        raise ValueError("kernel")
    with pytest.raises(ValueError):
        call_compute(bad, OpContext(), [], [], [], None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            np.log(np.array([0.0]))
