"""Ordering ops: sort, argsort and topk (MXNet's ``ordering_op.cc``).

``axis=None`` works on the flattened input. Ties keep their input order in
both directions (a stable sort), as MXNet does; indices come in the float
``dtype`` the op is given (float32 by default).
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseType, Field, MakeZeroGradNodes,
                   NodeEntry, Param, ShapeError, TypeInferError, make_node, register_op)

from ._common import INDEX_DTYPE, check_outs, put
from .reduce import norm_axis


class SortParam(Param):
    axis: Optional[int] = Field(-1, description="Axis to sort along; None sorts the flattened "
                                "input.")
    is_ascend: bool = Field(True, description="Ascending (True) or descending order.")


class ArgsortParam(SortParam):
    dtype: INDEX_DTYPE = Field("float32", description="Output dtype of the indices.")


class TopKParam(Param):
    axis: Optional[int] = Field(-1, description="Axis to search along; None searches the "
                                "flattened input.")
    k: int = Field(1, description="Number of elements to keep; k < 1 keeps all.")
    ret_typ: Literal["both", "indices", "mask", "value"] = Field(
        "indices", description="What to return: values, indices, both, or a 0/1 mask.")
    is_ascend: bool = Field(False, description="Take the k smallest (True) or largest.")
    dtype: INDEX_DTYPE = Field("float32", description="Output dtype of the indices.")


def _layout(op, params, shape):
    """(work shape, axis): the input's shape, or its flattened size for axis=None."""
    if params.axis is None:
        return (int(np.prod(shape)),), 0
    return tuple(shape), norm_axis(op, params.axis, len(shape))


def order(xp, x, axis, ascend):
    """Stable sorting indices of ``x`` along ``axis`` in either direction."""
    if ascend:
        return xp.argsort(x, axis=axis, kind="stable")
    rev = xp.flip(xp.argsort(xp.flip(x, axis), axis=axis, kind="stable"), axis)
    return x.shape[axis] - 1 - rev


def _k(op, params, n):
    k = params.k if params.k >= 1 else n
    if k > n:
        raise ShapeError(f"Operator {op!r}: k={params.k} exceeds the {n} elements along the axis")
    return k


def _first(idx, axis, k):
    return idx[(slice(None),) * axis + (slice(0, k),)]


def _top(op, xp, x, params):
    """(work array, axis, indices of the selected elements along axis)."""
    w, axis = _layout(op, params, x.shape)
    w = x.reshape(w)
    k = _k(op, params, w.shape[axis])
    idx = order(xp, w, axis, params.is_ascend)
    return w, axis, _first(idx, axis, k)


# -- sort / argsort ------------------------------------------------------------------------
def _sort_shape(op):
    def infer(params, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        return list(ins), check_outs(op, outs, [_layout(op, params, ins[0])[0]])
    return infer


def _sort(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    w, axis = _layout("sort", params, inputs[0].shape)
    w = inputs[0].reshape(w)
    put(outputs[0], req[0], xp.take_along_axis(w, order(xp, w, axis, params.is_ascend), axis))


def _argsort(ctx, inputs, req, outputs, params):
    w, axis = _layout("argsort", params, inputs[0].shape)
    put(outputs[0], req[0], order(ctx.xp, inputs[0].reshape(w), axis, params.is_ascend))


def _scatter_grad(op, xp, og, x, params, k):
    """Gradient of a selection: ``og`` goes back to the positions it was taken from."""
    w, axis = _layout(op, params, x.shape)
    w = x.reshape(w)
    idx = _first(order(xp, w, axis, params.is_ascend), axis, k)
    grad = xp.zeros(w.shape, og.dtype)
    xp.put_along_axis(grad, idx, og.reshape(idx.shape), axis)
    return grad.reshape(x.shape)


def _sort_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    w, axis = _layout("sort", params, x.shape)
    put(outputs[0], req[0], _scatter_grad("sort", ctx.xp, og, x, params, w[axis]))


def _index_type(params, ins, outs):
    return list(ins), [np.dtype(params.dtype)]


def _grad_shape(params, ins, outs):
    return list(ins), check_outs("_backward_sort", outs, [ins[1]])


def _grad_type(params, ins, outs):
    t = ins[1] if ins[1] is not None else outs[0]
    return list(ins), [t]


(register_op("sort").describe("The input with the values along axis put in order.")
 .set_attr_parser(SortParam).set_num_inputs(1).set_num_outputs(1)
 .set_attr("FInferShape", _sort_shape("sort")).set_attr("FInferType", ElemwiseType(1, 1))
 .set_attr("FCompute<cpu>", _sort).set_attr("FGradient", ElemwiseGradUseIn("_backward_sort"))
 .add_argument("data", "NDArray-or-Symbol", "Input array"))
(register_op("_backward_sort").set_attr_parser(SortParam).set_num_inputs(2).set_num_outputs(1)
 .set_attr("FInferShape", _grad_shape).set_attr("FInferType", _grad_type)
 .set_attr("FCompute<cpu>", _sort_backward))
(register_op("argsort").describe("Positions along axis that list the input in sorted order.")
 .set_attr_parser(ArgsortParam).set_num_inputs(1).set_num_outputs(1)
 .set_attr("FInferShape", _sort_shape("argsort")).set_attr("FInferType", _index_type)
 .set_attr("FCompute<cpu>", _argsort).set_attr("FGradient", MakeZeroGradNodes)
 .add_argument("data", "NDArray-or-Symbol", "Input array"))


# -- topk ----------------------------------------------------------------------------------
def _topk_shape(params, ins, outs):
    if ins[0] is None:
        return list(ins), list(outs)
    x = tuple(ins[0])
    if params.ret_typ == "mask":
        return [x], check_outs("topk", outs, [x])
    w, axis = _layout("topk", params, x)
    s = w[:axis] + (_k("topk", params, w[axis]),) + w[axis + 1:]
    return [x], check_outs("topk", outs, [s] * len(outs))


def _topk_type(params, ins, outs):
    t = ins[0]
    if t is None:
        return list(ins), list(outs)
    want = {"value": [t], "mask": [t], "indices": [params.dtype],
            "both": [t, params.dtype]}[params.ret_typ]
    want = [np.dtype(w) for w in want]
    for k, (o, w) in enumerate(zip(outs, want)):
        if o is not None and np.dtype(o) != w:
            raise TypeInferError(f"Operator 'topk': output {k} dtype {np.dtype(o)}, expected {w}")
    return list(ins), want


def _topk(ctx, inputs, req, outputs, params):
    xp, x = ctx.xp, inputs[0]
    w, axis, idx = _top("topk", xp, x, params)
    if params.ret_typ == "mask":
        mask = xp.zeros(w.shape, x.dtype)
        xp.put_along_axis(mask, idx, 1, axis)
        put(outputs[0], req[0], mask.reshape(x.shape))
        return
    if params.ret_typ in ("value", "both"):
        put(outputs[0], req[0], xp.take_along_axis(w, idx, axis))
    if params.ret_typ in ("indices", "both"):
        put(outputs[-1], req[-1], idx)


def _topk_grad(node, out_grads):
    if node.params.ret_typ not in ("value", "both"):
        return MakeZeroGradNodes(node, out_grads)
    n = make_node("_backward_topk", [out_grads[0], node.inputs[0]], node.params,
                  name=f"{node.name}_backward")
    return [NodeEntry(n, 0, 0)]


def _topk_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    w, axis = _layout("topk", params, x.shape)
    put(outputs[0], req[0],
        _scatter_grad("topk", ctx.xp, og, x, params, _k("topk", params, w[axis])))


(register_op("topk").describe("The top k elements along an axis: their values, indices, "
                              "both, or a 0/1 mask of where they are.")
 .set_attr_parser(TopKParam).set_num_inputs(1)
 .set_num_outputs(lambda p: 2 if p.ret_typ == "both" else 1)
 .set_attr("FInferShape", _topk_shape).set_attr("FInferType", _topk_type)
 .set_attr("FCompute<cpu>", _topk).set_attr("FGradient", _topk_grad)
 .add_argument("data", "NDArray-or-Symbol", "The input array"))
(register_op("_backward_topk").set_attr_parser(TopKParam).set_num_inputs(2).set_num_outputs(1)
 .set_attr("FInferShape", _grad_shape).set_attr("FInferType", _grad_type)
 .set_attr("FCompute<cpu>", _topk_backward))


# -- conformance examples (opsdk.testing "TExamples") --------------------------------------
_ORDER = [{}, {"params": {"axis": None}}, {"inputs": [(3, 4)], "params": {"axis": 0,
                                                                          "is_ascend": False}}]
_TIES = {"inputs": [np.array([[1, 3, 3, 2, 3], [0, 0, 1, 1, 0]], np.int32)]}
for _name, _examples in {
        "sort": _ORDER + [{**_TIES, "params": {"is_ascend": False}}],
        "argsort": _ORDER + [{**_TIES, "params": {"is_ascend": "False", "dtype": "int32"}}],
        "topk": [{}, {"params": {"k": 2, "ret_typ": "value"}},
                 {"params": {"k": 2, "ret_typ": "both", "axis": 0}},
                 {"params": {"k": 3, "ret_typ": "mask", "is_ascend": True}},
                 {"params": {"k": 0, "ret_typ": "value", "axis": None}},
                 {**_TIES, "params": {"k": 3, "ret_typ": "both", "dtype": "int64"}}],
        "_backward_sort": [{"inputs": [(2, 3), (2, 3)]}],
        "_backward_topk": [{"inputs": [(2, 2), (2, 3)], "params": {"k": 2}}]}.items():
    register_op(_name).set_attr("TExamples", _examples)
