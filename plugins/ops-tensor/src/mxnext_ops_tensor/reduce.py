"""Reductions (sum, mean, prod, max, min, nansum, nanprod, norm), argmax/argmin/
argmax_channel, and ordering (sort, argsort, topk), with MXNet 1.x axis semantics.

``axis=None`` (or ``()``) reduces every axis, ``exclude=True`` reduces the
axes *not* listed, and a full reduction without ``keepdims`` gives shape
``(1,)`` as MXNet does. ``_REDUCERS`` rows are ``name: (forward, backward,
what the backward reads)``; ``forward(xp, x, axes)``, ``backward(xp, og, x,
y, axes)`` with ``og``/``y`` already reshaped to keep the reduced axes (the
result may keep them too: it is broadcast into the gradient). Kernels use
array methods and ufuncs rather than numpy's Python-level wrappers
(``np.sum``, ``np.broadcast_to``), which cost ~20 us each when run cold.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseGradUseInOut, ElemwiseType, Field,
                   MakeZeroGradNodes, Param, ShapeError, TypeInferError, register_op)

from ._common import IN, OpsGrad, call, check_outs, dtype_field, put
from opsdk.shape import shape_known

from ._layout import fail, forward_shape


class ReduceAxesParam(Param):
    axis: Optional[tuple[int, ...]] = Field(None, description="Axis or axes reduced "
                                            "(None or () means every axis).")
    keepdims: bool = Field(False, description="Keep reduced axes with size 1.")
    exclude: bool = Field(False, description="Reduce every axis except those listed.")


class NormParam(Param):
    ord: int = Field(2, ge=1, le=2, description="1 for the L1 norm, 2 for the L2 norm.")
    axis: Optional[tuple[int, ...]] = Field(None, description="Axis or axes of the norm.")
    out_dtype: Optional[dtype_field("float16", "float32", "float64", "int32", "int64",
                                    "int8")] = Field(None, description="Output dtype.")
    keepdims: bool = Field(False, description="Keep reduced axes with size 1.")


def reduce_axes(op, params, ndim):
    """The sorted axes a reduction with ``params`` removes from an ``ndim``-d input."""
    axis = params.axis
    if not axis:
        return tuple(range(ndim))
    seen = []
    for a in axis:
        if not -ndim <= a < ndim:
            raise ShapeError(f"Operator {op!r}: axis {a} out of range for an input of {ndim} dims")
        if a % ndim in seen:
            raise ShapeError(f"Operator {op!r}: axis {a} given twice in axis={tuple(axis)}")
        seen.append(a % ndim)
    if getattr(params, "exclude", False):
        return tuple(i for i in range(ndim) if i not in seen)
    return tuple(sorted(seen))


def _kept(shape, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def reduced_shape(shape, axes, keepdims):
    if keepdims:
        return _kept(shape, axes)
    return tuple(n for i, n in enumerate(shape) if i not in axes) or (1,)


def _acc(x):
    """Accumulation dtype: float16 sums in float32; integers keep theirs (MXNet wraps too)."""
    return np.float32 if x.dtype == np.float16 else x.dtype


def _mean(xp, x, axes, p):
    return xp.mean(x, axis=axes, dtype=np.float64 if x.dtype.kind in "iub" else _acc(x))


def _count(x, axes):
    return int(np.prod([x.shape[a] for a in axes]))


def _norm(xp, x, axes, p):
    w = x.astype(np.float64 if x.dtype.kind in "iub" else _acc(x), copy=False)
    if p.ord == 1:
        return xp.sum(xp.abs(w), axis=axes)
    return xp.sqrt(xp.sum(w * w, axis=axes))


_IN_OUT = "in_out"
# name: (forward(xp, x, axes, p), backward(xp, og, x, y, axes, p), backward reads, aliases)
_REDUCERS = {
    "sum": (lambda xp, x, a, p: xp.add.reduce(x, axis=a, dtype=_acc(x)),
            lambda xp, og, x, y, a, p: og, IN, ("sum_axis",)),
    "mean": (_mean, lambda xp, og, x, y, a, p: og / _count(x, a), IN, ()),
    "prod": (lambda xp, x, a, p: xp.prod(x, axis=a, dtype=_acc(x)),
             lambda xp, og, x, y, a, p: og * y / x, _IN_OUT, ()),
    "nansum": (lambda xp, x, a, p: xp.nansum(x, axis=a, dtype=_acc(x)),
               lambda xp, og, x, y, a, p: og * ~xp.isnan(x), IN, ()),
    "nanprod": (lambda xp, x, a, p: xp.nanprod(x, axis=a, dtype=_acc(x)),
                lambda xp, og, x, y, a, p: xp.where(xp.isnan(x), 0, og * y / x), _IN_OUT, ()),
    "max": (lambda xp, x, a, p: xp.max(x, axis=a),
            lambda xp, og, x, y, a, p: og * (x == y), _IN_OUT, ("max_axis",)),
    "min": (lambda xp, x, a, p: xp.min(x, axis=a),
            lambda xp, og, x, y, a, p: og * (x == y), _IN_OUT, ("min_axis",)),
}


def _reduce_shape(op):
    def infer(params, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        x = tuple(ins[0])
        if op in _NEEDS_ELEMENTS and shape_known(x) and 0 in x:
            fail(op, f"reduction input's size should be > 0, got shape {x}")
        axes = reduce_axes(op, params, len(x))
        return [x], check_outs(op, outs, [reduced_shape(x, axes, params.keepdims)])
    return infer


def _grad_shape(op):
    """Backward ops: the gradient has the shape (and dtype) of the forward input, ``ins[1]``."""
    def infer(params, ins, outs):
        ins = list(ins)
        if ins[1] is None:
            ins[1] = outs[0]
        return ins, check_outs(op, outs, [ins[1]])
    return infer


def _grad_type(params, ins, outs):
    t = next((v for v in (ins[1], ins[0], outs[0]) if v is not None), None)
    return [t if v is None else v for v in ins], [t]


def _forward(op, fwd):
    def compute(ctx, inputs, req, outputs, params):
        x = inputs[0]
        axes = reduce_axes(op, params, x.ndim)
        put(outputs[0], req[0], fwd(ctx.xp, x, axes, params).reshape(outputs[0].shape))
    return compute


def _backward(op, bwd):
    def compute(ctx, inputs, req, outputs, params):
        og, x = inputs[0], inputs[1]
        axes = reduce_axes(op, params, x.ndim)
        kept = _kept(x.shape, axes)
        y = inputs[2].reshape(kept) if len(inputs) > 2 else None
        g = bwd(ctx.xp, og.reshape(kept), x, y, axes, params)
        out, r = outputs[0], req[0]      # g may keep the reduced axes: broadcast it back
        if r == 3:
            ctx.xp.add(out, g, out=out, casting="unsafe")
        elif r:
            ctx.xp.copyto(out, g, casting="unsafe")
    return compute


def _register_reducer(name, param, fwd, bwd, uses, aliases, doc, out_type=None):
    bw = f"_backward_{name}"
    b = (register_op(name).describe(doc).set_attr_parser(param)
         .set_num_inputs(1).set_num_outputs(1)
         .set_attr("FInferShape", _reduce_shape(name))
         .set_attr("FInferType", out_type or ElemwiseType(1, 1))
         .set_attr("FCompute<cpu>", _forward(name, fwd))
         .set_attr("FGradient", (ElemwiseGradUseIn if uses == IN else ElemwiseGradUseInOut)(bw))
         .add_argument("data", "NDArray-or-Symbol", "The input"))
    for alias in aliases:
        b.add_alias(alias)
    b = (register_op(bw).set_attr_parser(param).set_num_inputs(2 if uses == IN else 3)
         .set_num_outputs(1).set_attr("FInferShape", _grad_shape(bw))
         .set_attr("FInferType", _grad_type).set_attr("FCompute<cpu>", _backward(name, bwd)))
    if name in _LINEAR:
        b.set_attr("FGradient", _LINEAR[name])


def _reduce_again(op):
    """FGradient of the backward of a linear reduction (``_backward_sum`` broadcasts the output
    gradient back): the head gradient reduced by ``op`` with the same axes; none for the input,
    which only lends its shape. This makes losses built with sum/mean twice differentiable."""
    return OpsGrad(lambda p, h, og, x, out: (call(op, h, params=p), None))


_LINEAR = {"sum": _reduce_again("sum"), "mean": _reduce_again("mean")}
_NEEDS_ELEMENTS = ("max", "min")     # no identity: MXNet rejects a zero-size input


for _name, (_fwd, _bwd, _uses, _aliases) in _REDUCERS.items():
    _register_reducer(_name, ReduceAxesParam, _fwd, _bwd, _uses, _aliases,
                      f"Reduces data by {_name} over axis (every axis by default).")


def _norm_type(params, ins, outs):
    if ins[0] is None:
        return list(ins), list(outs)
    t = np.dtype(params.out_dtype or ins[0])
    if outs[0] is not None and np.dtype(outs[0]) != t:
        raise TypeInferError(f"Operator 'norm': output dtype {np.dtype(outs[0])}, expected {t}")
    return list(ins), [t]


_register_reducer("norm", NormParam, _norm,
                  lambda xp, og, x, y, a, p: og * (xp.sign(x) if p.ord == 1 else x / y), _IN_OUT,
                  (), "L1 (ord=1) or L2 (ord=2) norm of data over axis (every axis by default).",
                  _norm_type)


# -- argmax / argmin -----------------------------------------------------------------------
class ArgReduceParam(Param):
    axis: Optional[int] = Field(None, description="Axis scanned for the extreme; None "
                                "scans the flattened input.")
    keepdims: bool = Field(False, description="Keep the reduced axis with size 1.")


def norm_axis(op, axis, ndim):
    if not -ndim <= axis < ndim:
        raise ShapeError(f"Operator {op!r}: axis {axis} out of range for an input of {ndim} dims")
    return axis % ndim


def _arg_shape(op):
    def infer(params, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        x = tuple(ins[0])
        if params.axis is None:
            out = (1,) * len(x) if params.keepdims else (1,)
        else:
            out = reduced_shape(x, (norm_axis(op, params.axis, len(x)),), params.keepdims)
        return [x], check_outs(op, outs, [out])
    return infer


def _arg_compute(name):
    def compute(ctx, inputs, req, outputs, params):
        x, find = inputs[0], getattr(ctx.xp, name)
        r = find(x.reshape(-1)) if params.axis is None else find(x, axis=params.axis)
        put(outputs[0], req[0], ctx.xp.asarray(r).reshape(outputs[0].shape))
    return compute


for _name in ("argmax", "argmin"):
    (register_op(_name).describe(f"Position of the {_name[3:]}imum along axis (first on ties), "
                                 f"in the input's dtype.")
     .set_attr_parser(ArgReduceParam).set_num_inputs(1).set_num_outputs(1)
     .set_attr("FInferShape", _arg_shape(_name)).set_attr("FInferType", ElemwiseType(1, 1))
     .set_attr("FCompute<cpu>", _arg_compute(_name))
     .set_attr("FGradient", MakeZeroGradNodes)
     .add_argument("data", "NDArray-or-Symbol", "The input"))


def _argmax_channel(ctx, inputs, req, outputs, params):
    put(outputs[0], req[0], inputs[0].argmax(axis=1))


(register_op("argmax_channel")
 .describe("Position of the largest entry along axis 1 (the channels), in the input's dtype.")
 .set_num_inputs(1).set_num_outputs(1)
 .set_attr("FInferShape", forward_shape("argmax_channel",
                                       lambda p, s: [_channel_shape(tuple(s[0]))]))
 .set_attr("FInferType", ElemwiseType(1, 1))
 .set_attr("FCompute<cpu>", _argmax_channel)
 .set_attr("FGradient", MakeZeroGradNodes)
 .set_attr("TExamples", [{"inputs": [(3, 4)]}, {"inputs": [(2, 3, 4)], "grad": False}])
 .add_argument("data", "NDArray-or-Symbol", "The input (at least 2 dims)"))


def _channel_shape(x):
    if len(x) < 2:
        fail("argmax_channel", f"input needs at least 2 dims, got {x}")
    return x[:1] + x[2:]


# -- conformance examples (opsdk.testing "TExamples") --------------------------------------
_AXES = [{}, {"params": {"axis": 1}}, {"inputs": [(2, 3, 4)], "params": {"axis": "(0, 2)",
                                                                         "keepdims": True}},
         {"inputs": [(2, 3, 4)], "params": {"axis": -1, "exclude": "True"}},
         {"inputs": [(2, 3)], "dtype": "int32", "domain": (-3, 4), "grad": False}]
_NAN = np.array([[0.5, np.nan, 2.0], [1.5, -1.0, np.nan]], np.float32)
_EXAMPLES = {
    **{n: _AXES for n in ("sum", "mean", "max", "min")},
    "prod": [{"domain": (0.5, 1.5), **e} for e in _AXES[:4]],
    "nansum": _AXES[:2] + [{"inputs": [_NAN], "params": {"axis": 1}}],
    "nanprod": [{"inputs": [_NAN]}, {"inputs": [_NAN], "params": {"axis": 0}}],
    "norm": [{}, {"params": {"ord": 1, "axis": 1}},
             {"inputs": [(2, 3, 4)], "params": {"axis": "(0,2)", "keepdims": True}},
             {"params": {"out_dtype": "float64"}, "grad": False}],
    "argmax": [{}, {"params": {"axis": 1, "keepdims": True}}],
    "argmin": [{"params": {"axis": 0}}, {"params": {"keepdims": True}, "dtype": "int32",
                                          "domain": (-50, 50)}],
}
for _name, _examples in _EXAMPLES.items():
    register_op(_name).set_attr("TExamples", _examples)
register_op("mean").set_attr("TTruncatesIntegers", True)    # an integer mean truncates
for _name, (_f, _b, _uses, _a) in list(_REDUCERS.items()) + [("norm", (0, 0, _IN_OUT, 0))]:
    _ins = [(2, 1), (2, 3)] + ([(2, 1)] if _uses == _IN_OUT else [])
    register_op(f"_backward_{_name}").set_attr(
        "TExamples", [{"inputs": _ins, "params": {"axis": 1, "keepdims": True},
                       "domain": (0.5, 1.5)}])
