"""Creation ops with no inputs (_zeros, _ones, _full, _arange, _eye) and _contrib_arange_like,
whose one input gives only the shape and dtype."""

from __future__ import annotations

import math

import numpy as np

from opsdk import (DType, ElemwiseType, Field, MakeZeroGradNodes, Param, assign,
                   register_op)
from opsdk.shape import dim_known, unknown_dim

from ._layout import fail, fixed_type, forward_shape, merge, norm_axis


class InitParam(Param):
    shape: tuple[int, ...] = Field((), description="Shape of the output")
    ctx: str = Field("", description="Context of the output (the caller places it; ignored here)")
    dtype: DType = Field("float32", description="Output dtype")


class FullParam(InitParam):
    value: float = Field(description="Value to fill with")


class ArangeParam(Param):
    start: float = Field(description="First value")
    stop: float | None = Field(None, description="Exclusive upper end; None: [0, start)")
    step: float = Field(1.0, description="Difference between neighbouring values")
    repeat: int = Field(1, ge=1, description="Times each value repeats")
    infer_range: bool = Field(False, description="Infer stop from the output shape (symbols only)")
    ctx: str = Field("", description="Context of the output (ignored here)")
    dtype: DType = Field("float32", description="Output dtype")


class EyeParam(Param):
    N: int = Field(ge=0, description="Row count")
    M: int = Field(0, ge=0, description="Column count; 0: N")
    k: int = Field(0, description="Which diagonal holds the ones: 0 main, >0 above, <0 below")
    ctx: str = Field("", description="Context of the output (ignored here)")
    dtype: DType = Field("float32", description="Output dtype")


def _bounds(p):
    start, stop = (0.0, p.start) if p.stop is None else (p.start, p.stop)
    if p.step == 0:
        fail("_arange", "step must not be 0")
    if not all(math.isfinite(v) for v in (start, stop, p.step)):
        fail("_arange", f"start, stop and step must be finite, got start {start}, stop {stop}, "
                        f"step {p.step}")
    return start, stop, max(0, math.ceil((stop - start) / p.step))


def _given_shape(p):
    """The shape parameter with its unknown dims (as MXNet: -1, and 0 outside np_shape) in
    this mode's unknown form, for the graph to fill from the consumers."""
    return tuple(d if dim_known(d) else unknown_dim() for d in p.shape)


def _shape_rule(op, shape_of):
    def infer(p, ins, outs):
        return list(ins), merge(op, outs, [shape_of(p)])
    return infer


def _arange(ctx, inputs, req, outputs, p):
    start, _, n = _bounds(p)
    if np.dtype(p.dtype).kind in "iu":      # MXNet casts start and step to the integer type
        value = int(start) + ctx.xp.arange(n, dtype="int64") * int(p.step)   # (wrapping)
    else:
        value = start + ctx.xp.arange(n, dtype="float64") * p.step
    assign(outputs[0], req[0], ctx.xp.repeat(value, p.repeat).astype(p.dtype))


def _eye(ctx, inputs, req, outputs, p):
    assign(outputs[0], req[0], ctx.xp.eye(p.N, p.M or p.N, p.k, dtype=p.dtype))


_CREATORS = [
    ("_zeros", InitParam, _given_shape,
     lambda ctx, i, r, o, p: assign(o[0], r[0], ctx.xp.zeros(o[0].shape, p.dtype)),
     "An array of zeros.", [{"params": {"shape": "(2, 3)"}}, {"params": {"shape": (4,), "dtype": "int32"}}]),
    ("_ones", InitParam, _given_shape,
     lambda ctx, i, r, o, p: assign(o[0], r[0], ctx.xp.ones(o[0].shape, p.dtype)),
     "An array of ones.", [{"params": {"shape": "(2, 3)"}}, {"params": {"shape": (2, 2), "dtype": "float64"}}]),
    ("_full", FullParam, _given_shape,
     lambda ctx, i, r, o, p: assign(o[0], r[0], ctx.xp.full(o[0].shape, p.value, p.dtype)),
     "An array filled with value.", [{"params": {"shape": "(2, 3)", "value": "2.5"}},
                                     {"params": {"shape": (3,), "value": 7, "dtype": "int64"}}]),
    ("_arange", ArangeParam, lambda p: (_bounds(p)[2] * p.repeat,), _arange,
     "Evenly spaced values in [start, stop), each repeated repeat times.",
     [{"params": {"start": 5}}, {"params": {"start": 1, "stop": 2, "step": 0.25, "repeat": 2}},
      {"params": {"start": 10, "stop": 2, "step": -3, "dtype": "int32"}}]),
    ("_eye", EyeParam, lambda p: (p.N, p.M or p.N), _eye,
     "An N x M matrix, 1 on diagonal k and 0 elsewhere.",
     [{"params": {"N": 3}}, {"params": {"N": 2, "M": 4, "k": 1, "dtype": "int32"}}]),
]

for _name, _param, _shape, _compute, _doc, _examples in _CREATORS:
    (register_op(_name).describe(_doc).set_attr_parser(_param)
        .set_num_inputs(0).set_num_outputs(1)
        .set_attr("FInferShape", _shape_rule(_name, _shape))
        .set_attr("FInferType", fixed_type(_name, lambda p: p.dtype))
        .set_attr("FCompute<cpu>", _compute)
        .set_attr("TExamples", [{"inputs": [], **e} for e in _examples]))


class ArangeLikeParam(Param):
    start: float = Field(0.0, description="First value")
    step: float = Field(1.0, description="Difference between neighbouring values")
    repeat: int = Field(1, ge=1, description="Times each value repeats")
    ctx: str = Field("", description="Context of the output (ignored here)")
    axis: int | None = Field(None, description="Count along this axis of the input (a 1-D "
                                               "output); None: the input's whole shape")


def _arange_like_shape(p, shapes):
    shape = shapes[0]
    if p.axis is None:
        return [shape]
    return [(shape[norm_axis("_contrib_arange_like", p.axis, len(shape))],)]


def _arange_like(ctx, inputs, req, outputs, p):
    out = outputs[0]
    steps = ctx.xp.arange(out.size, dtype="int64") // p.repeat
    value = p.start + steps.astype("float64") * p.step
    assign(out, req[0], value.reshape(out.shape).astype(out.dtype))


(register_op("_contrib_arange_like").add_alias("_npx_arange_like")
 .describe("Evenly spaced values ``start + (i // repeat) * step`` shaped as the input (or, "
           "with axis, as that axis of it) in the input's dtype; the input's values are "
           "not read.")
 .set_attr_parser(ArangeLikeParam).set_num_inputs(1).set_num_outputs(1)
 .set_attr("FInferShape", forward_shape("_contrib_arange_like", _arange_like_shape))
 .set_attr("FInferType", ElemwiseType(1, 1, "_contrib_arange_like"))
 .set_attr("FCompute<cpu>", _arange_like)
 .set_attr("FGradient", MakeZeroGradNodes)
 .set_attr("TExamples", [{"inputs": [(3, 4)], "params": {"start": 2, "step": 0.5}},
                         {"inputs": [(2, 5, 3)], "params": {"axis": -2, "repeat": 2}}])
 .add_argument("data", "NDArray-or-Symbol", "The input (its shape and dtype are used)"))
