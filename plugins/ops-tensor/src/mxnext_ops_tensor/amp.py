"""Automatic mixed precision helpers (MXNet's ``tensor/amp_cast.cc`` and
``contrib/all_finite.cc``): amp_cast and amp_multicast cast float16/bfloat16/float32 data
and leave other dtypes alone (bfloat16 is numpy's through ``ml_dtypes``); all_finite and multi_all_finite tell whether arrays hold only finite
numbers.

The backward ops read the forward inputs besides the output gradients (MXNet's read the
gradients only and take their dtypes from the graph): the gradient is cast back to each
input's dtype, which the imperative path must know without the forward node.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseShape, Field, Param, TypeInferError, assign,
                   register_op)
from opsdk.shape import merge_shape

from ._common import check_outs, dtype_field, put

_BF16 = np.dtype(ml_dtypes.bfloat16)
_AMP_FLOATS = (np.dtype(np.float16), _BF16, np.dtype(np.float32))
_IDENTITY = lambda p: [True]  # noqa: E731  (output 0 is input 0 when their dtypes match)


def _is_amp_float(t):
    return t is not None and np.dtype(t) in _AMP_FLOATS


def _assign_type(op, outs, i, t):
    """MXNet's TYPE_ASSIGN_CHECK on output ``i``."""
    if t is None:
        return
    t = np.dtype(t)
    if outs[i] is not None and np.dtype(outs[i]) != t:
        raise TypeInferError(f"Operator {op!r}: output {i} has dtype {np.dtype(outs[i])}, "
                             f"expected {t}")
    outs[i] = t


def _cast(ctx, inputs, req, outputs, params):
    """Each output is its input cast to the output's dtype (an in-place output of the same
    dtype already holds it)."""
    for x, out, r in zip(inputs, outputs, req):
        if r == 2 and out.dtype == x.dtype:
            continue
        put(out, r, x)


# -- amp_cast ------------------------------------------------------------------------------
class AMPCastParam(Param):
    dtype: dtype_field("float32", "float64", "float16", "bfloat16", "uint8", "int8", "int32",
                       "int64") = \
        Field(description="Output data type.")


def _amp_cast_type(params, ins, outs):
    outs = list(outs)
    t = ins[0]
    _assign_type("amp_cast", outs, 0, params.dtype if _is_amp_float(t) else t)
    return list(ins), outs


def _backward_cast_type(op):
    """Backward of a cast: gradient ``i`` has the dtype of forward input ``i`` (the inputs
    are the output gradients, then the forward inputs)."""
    def infer(params, ins, outs):
        n = len(outs)
        ins, outs = list(ins), list(outs)
        for i in range(n):
            if ins[n + i] is None:
                ins[n + i] = outs[i]
            _assign_type(op, outs, i, ins[n + i])
        return ins, outs
    return infer


def _backward_cast_shape(op):
    def infer(params, ins, outs):
        n = len(outs)
        ins = list(ins)
        new = []
        for i in range(n):
            s = merge_shape(op, ins[i], ins[n + i], f"input {i}")
            s = merge_shape(op, s, outs[i], f"input {i}")
            ins[i] = ins[n + i] = s
            new.append(s)
        return ins, check_outs(op, outs, new)
    return infer


(register_op("amp_cast")
    .describe("Casts between float16 and float32 as AMP needs; data of any other dtype is "
              "passed on unchanged.")
    .set_attr_parser(AMPCastParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1))
    .set_attr("FInferType", _amp_cast_type)
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FInplaceIdentity", _IDENTITY)
    .set_attr("FCompute<cpu>", _cast)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_amp_cast"))
    .set_attr("TExamples", [
        {"params": {"dtype": "float16"}, "ref": lambda x, dtype: x.astype(np.float16),
         "grad": False},
        {"params": {"dtype": "float32"}, "dtype": "float16",
         "ref": lambda x, dtype: x.astype(np.float32)},
        {"params": {"dtype": "float32"}},
        {"params": {"dtype": "float16"}, "dtype": "float64", "ref": lambda x, dtype: x},
        {"params": {"dtype": "float32"}, "dtype": "int32", "domain": (-9, 9),
         "ref": lambda x, dtype: x}])
    .add_argument("data", "NDArray-or-Symbol", "The input."))

(register_op("_backward_amp_cast")
    .describe("Gradient of amp_cast: the output gradient cast back to the input's dtype.")
    .set_attr_parser(AMPCastParam).set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _backward_cast_shape("_backward_amp_cast"))
    .set_attr("FInferType", _backward_cast_type("_backward_amp_cast"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FInplaceIdentity", _IDENTITY)
    .set_attr("FCompute<cpu>", _cast)
    .set_attr("TExamples", [{"params": {"dtype": "float16"}, "dtype": ["float16", "float32"]},
                            {"params": {"dtype": "float32"}}]))


# -- amp_multicast -------------------------------------------------------------------------
class AMPMultiCastParam(Param):
    num_outputs: int = Field(ge=1, description="Number of input/output pairs to be casted to "
                                               "the widest type.")
    cast_narrow: bool = Field(False, description="Whether to cast to the narrowest type")


def _multicast_target(params, ins, outs):
    """The dtype float16/bfloat16/float32 inputs become, as MXNet picks it: float32 when any
    input or output is float32 (else input 0's dtype); with cast_narrow, the first low
    precision type among them (else float32)."""
    known = [np.dtype(t) for t in (*ins, *outs) if t is not None]
    if params.cast_narrow:
        low = [t for t in known if t in _AMP_FLOATS[:2]]
        return low[0] if low else np.dtype(np.float32)
    if np.dtype(np.float32) in known:
        return np.dtype(np.float32)
    return ins[0]


def _multicast_type(params, ins, outs):
    outs = list(outs)
    target = _multicast_target(params, ins, outs)
    for i, t in enumerate(ins):
        _assign_type("amp_multicast", outs, i, target if _is_amp_float(t) else t)
    return list(ins), outs


def _multicast_shape(params, ins, outs):
    ins = [merge_shape("amp_multicast", a, o, f"input {i}")
           for i, (a, o) in enumerate(zip(ins, outs))]
    return ins, check_outs("amp_multicast", outs, ins)


def _pairs(p):
    return [(i, i) for i in range(p.num_outputs)]


(register_op("amp_multicast")
    .describe("Casts its float16/float32 inputs to their widest type (the narrowest with "
              "cast_narrow), as AMP needs; inputs of other dtypes are passed on unchanged.")
    .set_attr_parser(AMPMultiCastParam)
    .set_num_inputs(lambda p: p.num_outputs).set_num_outputs(lambda p: p.num_outputs)
    .set_attr("FListInputNames", lambda p: [f"data_{i}" for i in range(p.num_outputs)])
    .set_attr("FInferShape", _multicast_shape)
    .set_attr("FInferType", _multicast_type)
    .set_attr("FInplaceOption", _pairs)
    .set_attr("FInplaceIdentity", lambda p: [True] * p.num_outputs)
    .set_attr("FCompute<cpu>", _cast)
    .set_attr("FGradient", ElemwiseGradUseIn("_backward_amp_multicast"))
    .set_attr("TExamples", [
        {"inputs": [(2, 3), (3,), (2, 2)], "dtype": ["float16", "float32", "float16"],
         "params": {"num_outputs": 3},
         "ref": lambda *xs, **p: [x.astype(np.float32) for x in xs]},
        {"inputs": [(2, 3), (3,), (4,)], "dtype": ["float16", "float32", "int32"],
         "domain": [(-1, 1), (-1, 1), (-5, 5)], "params": {"num_outputs": 3,
                                                         "cast_narrow": True},
         "ref": lambda a, b, c, **p: [a, b.astype(np.float16), c], "grad": False},
        {"inputs": [(2, 3), (3,)], "dtype": ["float64", "float32"],
         "params": {"num_outputs": 2}},
        {"inputs": [(2, 2)], "params": {"num_outputs": 1}}])
    .add_argument("data", "NDArray-or-Symbol[]", "Weights"))

(register_op("_backward_amp_multicast")
    .describe("Gradient of amp_multicast: each output gradient cast back to its input's dtype.")
    .set_attr_parser(AMPMultiCastParam).set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: 2 * p.num_outputs).set_num_outputs(lambda p: p.num_outputs)
    .set_attr("FListInputNames", lambda p: [f"grad_{i}" for i in range(p.num_outputs)]
              + [f"data_{i}" for i in range(p.num_outputs)])
    .set_attr("FInferShape", _backward_cast_shape("_backward_amp_multicast"))
    .set_attr("FInferType", _backward_cast_type("_backward_amp_multicast"))
    .set_attr("FInplaceOption", _pairs)
    .set_attr("FInplaceIdentity", lambda p: [True] * p.num_outputs)
    .set_attr("FCompute<cpu>", _cast)
    .set_attr("TExamples", [{"inputs": [(2, 3), (3,), (2, 3), (3,)],
                             "dtype": ["float32", "float32", "float16", "float32"],
                             "params": {"num_outputs": 2}}]))


# -- all_finite, multi_all_finite ----------------------------------------------------------
class AllFiniteParam(Param):
    init_output: bool = Field(True, description="Initialize output to 1.")


class MultiAllFiniteParam(Param):
    num_arrays: int = Field(1, ge=1, description="Number of arrays.")
    init_output: bool = Field(True, description="Initialize output to 1.")


def _flag_shape(op):
    def infer(params, ins, outs):
        return list(ins), check_outs(op, outs, [(1,)])
    return infer


def _flag_type(op):
    """A float32 flag; the arrays checked must be floating point (MXNet's kernel takes only
    those, and fails when it runs)."""
    def infer(params, ins, outs):
        for i, t in enumerate(ins):
            if t is not None and np.dtype(t).kind != "f":
                raise TypeInferError(f"Operator {op!r}: input {i} must be a floating point "
                                     f"array, got {np.dtype(t)}")
        outs = list(outs)
        _assign_type(op, outs, 0, np.float32)
        return list(ins), outs
    return infer


def _all_finite(ctx, inputs, req, outputs, params):
    """1 when every element is finite, else 0. Without init_output the flag is only ever
    cleared: a finite result leaves the output as it was (to chain checks over arrays)."""
    finite = all(bool(ctx.xp.isfinite(x).all()) for x in inputs)
    if finite and not params.init_output:
        return
    assign(outputs[0], req[0], np.float32(finite))


def _register_flag(name, param, doc, arg, num_inputs, names, examples):
    (register_op(name).describe(doc).set_attr_parser(param)
        .set_num_inputs(num_inputs).set_num_outputs(1)
        .set_attr("FListInputNames", names)
        .set_attr("FInferShape", _flag_shape(name))
        .set_attr("FInferType", _flag_type(name))
        .set_attr("FCompute<cpu>", _all_finite)
        .set_attr("TExamples", examples)
        .add_argument("data", *arg))


_NAN = np.array([[0.5, np.nan], [1.0, 2.0]], np.float32)
_INF = np.array([1.0, -np.inf, 3.0], np.float64)
_ONE, _ZERO = np.ones(1, np.float32), np.zeros(1, np.float32)
_register_flag(
    "all_finite", AllFiniteParam,
    "1 if every element of data is finite, else 0 (a float32 array of shape (1,)); used by AMP.",
    ("NDArray", "Array"), 1, lambda p: ["data"],
    [{"ref": lambda x, **p: _ONE}, {"inputs": [_NAN], "ref": lambda x, **p: _ZERO},
     {"inputs": [_INF], "ref": lambda x, **p: _ZERO}, {"inputs": [(3,)], "dtype": "float16"}])
_register_flag(
    "multi_all_finite", MultiAllFiniteParam,
    "1 if every element of the num_arrays arrays is finite, else 0 (a float32 array of shape "
    "(1,)); used by AMP.",
    ("NDArray-or-Symbol[]", "Arrays"), lambda p: p.num_arrays,
    lambda p: [f"array_{i}" for i in range(p.num_arrays)],
    [{"inputs": [(2, 3), (4,)], "params": {"num_arrays": 2}, "ref": lambda *xs, **p: _ONE},
     {"inputs": [(2, 3), _NAN, _INF], "params": {"num_arrays": 3},
      "ref": lambda *xs, **p: _ZERO},
     {"inputs": [_INF]}])
