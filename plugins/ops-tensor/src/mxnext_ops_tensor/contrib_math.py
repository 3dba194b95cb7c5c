"""Small contrib math ops: _contrib_quadratic (``contrib/quadratic_op.cc``), _contrib_allclose
(``contrib/allclose_op.cc``) and _contrib_div_sqrt_dim (``contrib/transformer.cc``)."""

from __future__ import annotations

import math

import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseShape, ElemwiseType, Field,
                   Param, register_op)
from opsdk.shape import merge_shape

from ._common import INPLACE_0, check_outs, put
from ._layout import fail, fixed_type


def _real(x):
    """The dtype MXNet's kernels compute in with float32 parameters: float16 in float32,
    integers in float64 (then truncated back), float32 and float64 as they are."""
    if x.dtype == np.float16:
        return x.astype(np.float32)
    return x.astype(np.float64) if x.dtype.kind != "f" else x


# -- _contrib_quadratic --------------------------------------------------------------------
class QuadraticParam(Param):
    a: float = Field(0.0, description="Coefficient of the quadratic term in the quadratic "
                                      "function.")
    b: float = Field(0.0, description="Coefficient of the linear term in the quadratic function.")
    c: float = Field(0.0, description="Constant term in the quadratic function.")


def _quadratic(ctx, inputs, req, outputs, params):
    """``x * (a x + b) + c`` with a, b, c as float32 (MXNet's parameters are floats)."""
    x = _real(inputs[0])
    a, b, c = np.float32(params.a), np.float32(params.b), np.float32(params.c)
    put(outputs[0], req[0], x * (a * x + b) + c)


def _quadratic_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    a, b = np.float32(params.a), np.float32(params.b)
    put(outputs[0], req[0], _real(og) * (2 * a * _real(x) + b))


(register_op("_contrib_quadratic")
    .describe("f(x) = a x^2 + b x + c, elementwise: quadratic([[1, 2], [3, 4]], a=1, b=2, c=3) "
              "is [[6, 11], [18, 27]].")
    .set_attr_parser(QuadraticParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FInferShape", ElemwiseShape(1, 1))
    .set_attr("FInferType", ElemwiseType(1, 1))
    .set_attr("FInplaceOption", INPLACE_0)
    .set_attr("FCompute<cpu>", _quadratic)
    .set_attr("FGradient", ElemwiseGradUseIn("_contrib_backward_quadratic"))
    .set_attr("TExamples", [
        {"params": {"a": 1.5, "b": -2, "c": 0.25},
         "ref": lambda x, a, b, c: (x * (np.float32(a) * x + np.float32(b))
                                    + np.float32(c)).astype(x.dtype)},
        {"inputs": [(3, 2, 2)], "params": {"a": "0.5", "b": "1.5"}, "dtype": "float64"},
        {"inputs": [(2,)], "params": {"a": 0.5, "b": 1.5, "c": 0.2}, "dtype": "int32",
         "domain": (-9, 9)},
        {"inputs": [(4,)], "params": {"a": 1, "c": 1}, "dtype": "float16", "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input ndarray"))

(register_op("_contrib_backward_quadratic")
    .describe("Gradient of _contrib_quadratic: out_grad * (2 a x + b).")
    .set_attr_parser(QuadraticParam).set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(2, 1))
    .set_attr("FInferType", ElemwiseType(2, 1))
    .set_attr("FInplaceOption", INPLACE_0)
    .set_attr("FCompute<cpu>", _quadratic_backward)
    .set_attr("TExamples", [{"params": {"a": 2, "b": 1}}]))


# -- _contrib_allclose ---------------------------------------------------------------------
class AllCloseParam(Param):
    rtol: float = Field(1e-05, description="Relative tolerance.")
    atol: float = Field(1e-08, description="Absolute tolerance.")
    equal_nan: bool = Field(True, description="Whether to compare NaN's as equal. If True, "
                                              "NaN's in A will be considered equal to NaN's in "
                                              "B in the output array.")


def _allclose_shape(params, ins, outs):
    """Two inputs of one shape give a 0-d flag (also outside np_shape, as MXNet)."""
    a = merge_shape("_contrib_allclose", ins[0], ins[1], "input b (shape of a)")
    return [a, a], check_outs("_contrib_allclose", outs, [()])


def _allclose(ctx, inputs, req, outputs, params):
    """1 when ``|a - b| <= atol + rtol |b|`` (or a == b) everywhere, NaN matching NaN only
    with equal_nan; else 0. float16 and float32 compare in float32, as MXNet's kernel."""
    xp = ctx.xp
    a, b = inputs
    if a.dtype == np.float16:
        a, b = a.astype(np.float32), b.astype(np.float32)
    rtol, atol = np.float32(params.rtol), np.float32(params.atol)
    if a.dtype.kind == "f":
        na, nb = xp.isnan(a), xp.isnan(b)
        close = (a == b) | (xp.abs(a - b) <= atol + rtol * xp.abs(b))
        close = xp.where(na | nb, params.equal_nan & (na == nb), close)
    else:           # integers: |a - b| and rtol |b| in float64, no overflow of a - b
        a, b = a.astype(np.float64), b.astype(np.float64)
        close = xp.abs(a - b) <= atol + rtol * xp.abs(b)
    put(outputs[0], req[0], np.uint8(bool(close.all())))


(register_op("_contrib_allclose")
    .describe("1 (uint8, 0-d) if |a - b| <= atol + rtol |b| for every element, else 0, as "
              "numpy.allclose; NaNs count as equal with equal_nan.")
    .set_attr_parser(AllCloseParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["a", "b"])
    .set_attr("FInferShape", _allclose_shape)
    .set_attr("FInferType", fixed_type("_contrib_allclose", lambda p: "uint8"))
    .set_attr("FCompute<cpu>", _allclose)
    .set_attr("TExamples", [
        {"inputs": [np.array([1e10, 1e-7], np.float32), np.array([1.00001e10, 1e-8], np.float32)],
         "ref": lambda a, b: np.array(np.allclose(a, b), np.uint8)},
        {"inputs": [np.array([1e10, 1e-8]), np.array([1.00001e10, 1e-9])],
         "ref": lambda a, b: np.array(np.allclose(a, b), np.uint8)},
        {"inputs": [np.array([1.0, np.nan], np.float16), np.array([1.0, np.nan], np.float16)],
         "ref": lambda a, b: np.array(1, np.uint8)},
        {"inputs": [np.array([np.nan, 2.0], np.float32), np.array([np.nan, 2.0], np.float32)],
         "params": {"equal_nan": False}, "ref": lambda a, b, **p: np.array(0, np.uint8)},
        {"inputs": [np.array([100, 7], np.int32), np.array([101, 7], np.int32)],
         "params": {"rtol": 0.01, "atol": 0}, "ref": lambda a, b, **p: np.array(1, np.uint8)}])
    .add_argument("a", "NDArray-or-Symbol", "Input array a")
    .add_argument("b", "NDArray-or-Symbol", "Input array b"))


# -- _contrib_div_sqrt_dim -----------------------------------------------------------------
def _div_sqrt_dim(ctx, inputs, req, outputs, params):
    """``data / sqrt(data.shape[-1])``, the root in data's dtype (integers: truncated, and an
    integer division, as MXNet)."""
    x = inputs[0]
    if x.ndim < 1:
        fail("_contrib_div_sqrt_dim", f"data needs at least 1 dimension, got shape {x.shape}")
    root = x.dtype.type(math.sqrt(x.shape[-1]))
    put(outputs[0], req[0], x / root if x.dtype.kind == "f" else ctx.xp.fix(x / root))


(register_op("_contrib_div_sqrt_dim")
    .describe("Rescales data by the square root of its last dimension: "
              "out = data / sqrt(data.shape[-1]).")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1))
    .set_attr("FInferType", ElemwiseType(1, 1))
    .set_attr("FInplaceOption", INPLACE_0)
    .set_attr("FCompute<cpu>", _div_sqrt_dim)
    .set_attr("FGradient", ElemwiseGradUseNone("_contrib_div_sqrt_dim"))
    .set_attr("TTruncatesIntegers", True)
    .set_attr("TExamples", [
        {"inputs": [(3, 4)], "ref": lambda x: x / np.float32(2)},
        {"inputs": [(2, 3, 8)], "dtype": "float64", "ref": lambda x: x / math.sqrt(8)},
        {"inputs": [np.array([[3, 6, 9, 12, 15, 18, 21, 24]], np.int32)],
         "ref": lambda x: np.array([[1, 3, 4, 6, 7, 9, 10, 12]], np.int32)}])
    .add_argument("data", "NDArray-or-Symbol", "The input array."))
