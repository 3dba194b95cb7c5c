"""Indexing: take, pick (alias choose_element_0index), batch_take, fill_element_0index,
gather_nd, scatter_nd, one_hot."""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import (DType, Field, FloatOnly, MXNetError, NodeEntry, Param, TypeInferError, assign,
                   make_node, register_op)
from opsdk.shape import merge_shape, shape_known

from ._layout import (backward_shape, fail, first_type, fixed_type, forward_shape, norm_axis,
                      same_type, zeros_entry)

Mode = Literal["clip", "wrap", "raise"]


def _indices(op, xp, idx, n, mode):
    """Integer indices into an axis of length ``n`` under MXNet's clip/wrap/raise modes
    ('raise' accepts [0, n-1] only, checked before the indices are truncated, as MXNet)."""
    if mode == "raise" and idx.size and (idx.min() < 0 or idx.max() > n - 1):
        raise MXNetError(f"Operator {op!r}: index out of range [0, {n - 1}] with mode='raise'")
    idx = idx.astype(np.int64)
    if mode == "clip":
        return xp.clip(idx, 0, n - 1)
    return idx % n


def _backward_type(p, ins, outs):
    return list(ins), [ins[0] if ins[0] is not None else outs[0]]


def _register_backward(name, param, compute, example):
    (register_op(name).set_attr_parser(param).set_num_inputs(3).set_num_outputs(1)
        .describe(f"Gradient of {name[len('_backward_'):]} wrt its data: accumulates the head "
                  "gradient at the indexed positions.")
        .set_attr("FInferShape", backward_shape(name, like=-1))
        .set_attr("FInferType", _backward_type)
        .set_attr("FCompute<cpu>", compute)
        .set_attr("TExamples", [example]))


def _data_grad(name):
    """FGradient for (data, index) ops: ``name(og, index, data)`` for data, zero for index."""
    return lambda node, og: [
        NodeEntry(make_node(name, [og[0], node.inputs[1], node.inputs[0]], node.params), 0),
        zeros_entry(node.inputs[1])]


# -- take ------------------------------------------------------------------------------
class TakeParam(Param):
    axis: int = Field(0, description="The axis to take along")
    mode: Mode = Field("clip", description="Out-of-range indices: clip, wrap or raise")


def _take_shape(p, s):
    a, idx = s
    ax = norm_axis("take", p.axis, len(a))
    return [a[:ax] + idx + a[ax + 1:]]


def _take(ctx, inputs, req, outputs, params):
    a, idx = inputs
    ax = params.axis % a.ndim
    i = _indices("take", ctx.xp, idx, a.shape[ax], params.mode)
    assign(outputs[0], req[0], ctx.xp.take(a, i, axis=ax))


def _take_backward(ctx, inputs, req, outputs, params):
    og, idx, a = inputs
    xp, ax = ctx.xp, params.axis % a.ndim
    i = _indices("take", xp, idx, a.shape[ax], params.mode).reshape(-1)
    g = xp.zeros(a.shape, og.dtype)
    moved = xp.moveaxis(g, ax, 0)
    ogm = og.reshape(a.shape[:ax] + (i.size,) + a.shape[ax + 1:])
    xp.add.at(moved, i, xp.moveaxis(ogm, ax, 0))
    assign(outputs[0], req[0], g)


(register_op("take")
    .describe("Selects the entries of a at the positions in indices along axis; the result "
              "replaces that axis by indices' shape.")
    .set_attr_parser(TakeParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("take", _take_shape))
    .set_attr("FInferType", first_type("take"))
    .set_attr("FCompute<cpu>", _take)
    .set_attr("FGradient", _data_grad("_backward_take"))
    .set_attr("TExamples", [
        {"inputs": [(4, 3), (2, 2)], "dtype": ["float32", "int32"], "domain": [(-1, 1), (0, 4)]},
        {"inputs": [(2, 5), (3,)], "dtype": ["float32", "int64"], "domain": [(-1, 1), (-7, 7)],
         "params": {"axis": 1, "mode": "wrap"}},
        {"inputs": [(2, 5), np.array([-1.0, 2.6, 9.0], np.float32)],
         "params": {"axis": -1}, "grad": [0]}])
    .add_argument("a", "NDArray-or-Symbol", "Array to select from")
    .add_argument("indices", "NDArray-or-Symbol", "Positions along axis to select"))
_register_backward("_backward_take", TakeParam, _take_backward,
                   {"inputs": [(2, 3), (2,), (4, 3)], "dtype": ["float32", "int32", "float32"],
                    "domain": [(-1, 1), (0, 4), (-1, 1)]})


# -- pick ------------------------------------------------------------------------------
class PickParam(Param):
    axis: int | None = Field(-1, description="Axis to pick along; None: the flattened input")
    keepdims: bool = Field(False, description="Keep the picked axis with size 1")
    mode: Literal["clip", "wrap"] = Field("clip", description="Out-of-range indices: clip or wrap")


def _pick_parts(p, shape):
    if p.axis is None:
        return None, (1,) * len(shape) if p.keepdims else ()
    ax = norm_axis("pick", p.axis, len(shape))
    return ax, shape[:ax] + ((1,) if p.keepdims else ()) + shape[ax + 1:]


def _pick_shape(p, s):
    data, index = s
    ax, out = _pick_parts(p, data)
    if ax is not None and index not in (out, data[:ax] + data[ax + 1:], data[:ax] + (1,) + data[ax + 1:]):
        fail("pick", f"index shape {index} does not fit data {data} on axis {ax}")
    return [out]


def _pick_index(xp, data, index, p):
    ax, out = _pick_parts(p, data.shape)
    if ax is None:
        flat = data.reshape(-1)
        return flat, _indices("pick", xp, index.reshape(-1), flat.size, p.mode)[:1], None, out
    i = _indices("pick", xp, index, data.shape[ax], p.mode)
    i = xp.expand_dims(i.reshape(data.shape[:ax] + data.shape[ax + 1:]), ax)
    return data, i, ax, out


def _pick(ctx, inputs, req, outputs, params):
    src, i, ax, out = _pick_index(ctx.xp, inputs[0], inputs[1], params)
    value = src[i] if ax is None else ctx.xp.take_along_axis(src, i, axis=ax)
    assign(outputs[0], req[0], value.reshape(out))


def _pick_backward(ctx, inputs, req, outputs, params):
    og, index, data = inputs
    xp = ctx.xp
    g = xp.zeros(data.shape, og.dtype)
    dst, i, ax, _ = _pick_index(xp, g, index, params)
    if ax is None:
        dst[i] += og.reshape(-1)
    else:
        xp.put_along_axis(dst, i, xp.expand_dims(og.reshape(i.shape[:ax] + i.shape[ax + 1:]), ax), ax)
    assign(outputs[0], req[0], g)


(register_op("pick").add_alias("choose_element_0index")
    .describe("One entry along axis for every position of the other axes, at the place "
              "index gives.")
    .set_attr_parser(PickParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("pick", _pick_shape))
    .set_attr("FInferType", first_type("pick"))
    .set_attr("FCompute<cpu>", _pick)
    .set_attr("FGradient", _data_grad("_backward_pick"))
    .set_attr("TExamples", [
        {"inputs": [(3, 4), (3,)], "dtype": ["float32", "int32"], "domain": [(-1, 1), (0, 4)]},
        {"inputs": [(3, 4), (1, 4)], "dtype": ["float32", "float32"], "domain": [(-1, 1), (0, 2)],
         "params": {"axis": 0, "keepdims": True}, "grad": [0]},
        {"inputs": [(2, 3), (2,)], "dtype": ["float32", "int32"], "domain": [(-1, 1), (-5, 5)],
         "params": {"axis": 1, "mode": "wrap"}}])
    .add_argument("data", "NDArray-or-Symbol", "Array to pick from")
    .add_argument("index", "NDArray-or-Symbol", "Position along axis, per output element"))
_register_backward("_backward_pick", PickParam, _pick_backward,
                   {"inputs": [(3,), (3,), (3, 4)], "dtype": ["float32", "int32", "float32"],
                    "domain": [(-1, 1), (0, 4), (-1, 1)]})


# -- batch_take (MXNet's deprecated form of pick) ---------------------------------------
def _batch_take_shape(p, ins, outs):
    """Output shape = indices' shape; data needs >= 2 dims and one index per row.
    MXNet only checks ``prod(a.shape[:-1]) == indices.size`` and then reads ``a`` as
    ``(a.shape[0], -1)``, past its end when the middle dims are not all 1: that case is
    rejected here."""
    a, idx = ins
    out = merge_shape("batch_take", outs[0], idx, "output 0")
    idx = merge_shape("batch_take", idx, out, "input 1")
    if a is not None and len(a) < 2:
        fail("batch_take", f"data must have at least 2 dims, got shape {tuple(a)}")
    if shape_known(a) and shape_known(idx) and \
            not int(np.prod(a[:-1])) == int(np.prod(idx)) == a[0]:
        fail("batch_take", f"indices of shape {tuple(idx)} need one entry per row of data "
                           f"{tuple(a)} ({a[0]} entries)")
    return [a, idx], [out]


def _batch_take_type(p, ins, outs):
    t = ins[0] if ins[0] is not None else outs[0]
    if ins[1] is not None and np.dtype(ins[1]) != np.int32:
        raise TypeInferError(f"Operator 'batch_take': indices must be int32, got "
                             f"{np.dtype(ins[1])}")
    if t is not None and outs[0] is not None and np.dtype(outs[0]) != np.dtype(t):
        raise TypeInferError(f"Operator 'batch_take': output dtype {np.dtype(outs[0])} != "
                             f"input {np.dtype(t)}")
    return [t, np.dtype(np.int32)], [t]


def _batch_take(ctx, inputs, req, outputs, params):
    a, idx = inputs
    rows = a.reshape(a.shape[0], -1)
    cols = ctx.xp.clip(idx.reshape(-1).astype(np.int64), 0, rows.shape[1] - 1)
    value = rows[ctx.xp.arange(rows.shape[0]), cols]
    assign(outputs[0], req[0], value.reshape(idx.shape))


(register_op("batch_take")
    .describe("out[i] = a[i, indices[i]] for a of shape (N, M) and int32 indices of shape (N,); "
              "indices are clipped to [0, M). Deprecated in MXNet in favour of pick; not "
              "differentiable (MXNet gives it no gradient).")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _batch_take_shape)
    .set_attr("FInferType", _batch_take_type)
    .set_attr("FCompute<cpu>", _batch_take)
    .set_attr("TExamples", [
        {"inputs": [(4, 3), (4,)], "dtype": ["float32", "int32"], "domain": [(-1, 1), (-2, 5)]},
        {"inputs": [(2, 1, 5), (2, 1)], "dtype": ["float64", "int32"],
         "domain": [(-1, 1), (0, 5)]}])
    .add_argument("a", "NDArray-or-Symbol", "The input array")
    .add_argument("indices", "NDArray-or-Symbol", "The index array"))


# -- fill_element_0index (MXNet's legacy NDArray function) ------------------------------------
def _fill_shape(p, s):
    lhs, mhs, rhs = s
    if len(lhs) != 2 or len(mhs) != 1 or len(rhs) != 1:
        fail("fill_element_0index", f"expected a 2-D lhs and 1-D mhs and rhs, got {lhs}, {mhs}, "
                                    f"{rhs}")
    if not lhs[0] == mhs[0] == rhs[0]:
        fail("fill_element_0index", f"lhs {lhs}, mhs {mhs} and rhs {rhs} need one row count")
    return [lhs]


def _fill_element(ctx, inputs, req, outputs, params):
    """Row i of lhs with column int(rhs[i]) set to mhs[i]; a row whose index is outside
    [0, columns) stays as it is (as MXNet's kernel, which matches no column)."""
    xp, (lhs, value, index) = ctx.xp, inputs
    col = index.astype(np.int64)
    rows = xp.nonzero((col >= 0) & (col < lhs.shape[1]))[0]
    out = lhs.copy()
    out[rows, col[rows]] = value[rows]
    assign(outputs[0], req[0], out)


(register_op("fill_element_0index")
    .describe("lhs with one element per row replaced: column rhs[i] (0-based) of row i "
              "becomes mhs[i]. Not differentiable (as in MXNet).")
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("fill_element_0index", _fill_shape))
    .set_attr("FInferType", FloatOnly(same_type("fill_element_0index")))
    .set_attr("FCompute<cpu>", _fill_element)
    .set_attr("TExamples", [{"inputs": [(4, 5), (4,), np.array([0, 4, 7, -1], np.float32)]}])
    .add_argument("lhs", "NDArray-or-Symbol", "Matrix to copy and fill")
    .add_argument("mhs", "NDArray-or-Symbol", "One new value per row")
    .add_argument("rhs", "NDArray-or-Symbol", "Column of each row's new value"))


# -- gather_nd / scatter_nd ------------------------------------------------------------
def _nd_index(op, indices, shape):
    m = indices.shape[0] if indices.ndim else 0
    if indices.ndim == 0 or m > len(shape):
        fail(op, f"indices of shape {indices.shape} need a first axis of size <= {len(shape)}")
    return tuple(indices[k].astype(np.int64) for k in range(m))


def _gather_shape(p, s):
    data, idx = s
    if not idx or idx[0] > len(data):
        fail("gather_nd", f"indices shape {idx} needs a first axis of size <= {len(data)}")
    return [idx[1:] + data[idx[0]:]]


def _gather_backward(ctx, inputs, req, outputs, params):
    og, idx, data = inputs
    g = ctx.xp.zeros(data.shape, og.dtype)
    ctx.xp.add.at(g, _nd_index("gather_nd", idx, data.shape), og)
    assign(outputs[0], req[0], g)


(register_op("gather_nd")
    .describe("Gathers slices of data at the index tuples along indices' first axis.")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("gather_nd", _gather_shape))
    .set_attr("FInferType", first_type("gather_nd"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
        o[0], r[0], i[0][_nd_index("gather_nd", i[1], i[0].shape)]))
    .set_attr("FGradient", _data_grad("_backward_gather_nd"))
    .set_attr("TExamples", [
        {"inputs": [(3, 4, 2), (2, 5)], "dtype": ["float32", "int32"], "domain": [(-1, 1), (0, 3)]},
        {"inputs": [(3, 4), np.array([[0.0, 2.0, 2.0]], np.float32)], "grad": [0]}])
    .add_argument("data", "NDArray-or-Symbol", "Array to gather from")
    .add_argument("indices", "NDArray-or-Symbol", "Index tuples into data, stacked on axis 0"))
(register_op("_backward_gather_nd")
    .describe("Gradient of gather_nd wrt data: accumulates the head gradient at the indices.")
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_gather_nd", like=-1))
    .set_attr("FInferType", _backward_type)
    .set_attr("FCompute<cpu>", _gather_backward)
    .set_attr("TExamples", [{"inputs": [(5,), (2, 5), (3, 3)], "dtype": ["float32", "int32", "float32"],
                             "domain": [(-1, 1), (0, 3), (-1, 1)]}]))


class ScatterNDParam(Param):
    shape: tuple[int, ...] = Field(description="Output shape")


def _scatter_shape(p, s):
    data, idx = s
    if not idx or idx[0] > len(p.shape) or data != idx[1:] + p.shape[idx[0]:]:
        fail("scatter_nd", f"data {data} and indices {idx} do not fit shape={p.shape}: "
                           f"need data shape indices.shape[1:] + shape[indices.shape[0]:]")
    return [p.shape]


def _scatter(ctx, inputs, req, outputs, params):
    data, idx = inputs
    out = ctx.xp.zeros(params.shape, data.dtype)
    out[_nd_index("scatter_nd", idx, params.shape)] = data
    assign(outputs[0], req[0], out)


(register_op("scatter_nd")
    .describe("Writes data into a zero-filled array of shape at the positions the index tuples "
              "name.")
    .set_attr_parser(ScatterNDParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("scatter_nd", _scatter_shape))
    .set_attr("FInferType", first_type("scatter_nd"))
    .set_attr("FCompute<cpu>", _scatter)
    .set_attr("FGradient", lambda node, og: [
        NodeEntry(make_node("gather_nd", [og[0], node.inputs[1]]), 0), zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(2, 4), np.array([[0, 2], [1, 0]], np.int32)],
                             "params": {"shape": "(3, 2, 4)"}, "grad": [0]}])
    .add_argument("data", "NDArray-or-Symbol", "Values to write")
    .add_argument("indices", "NDArray-or-Symbol", "Target indices, stacked on axis 0"))


# -- one_hot ---------------------------------------------------------------------------
class OneHotParam(Param):
    depth: int = Field(ge=0, description="Size of the one-hot axis")
    on_value: float = Field(1.0, description="Value at the index")
    off_value: float = Field(0.0, description="Value elsewhere")
    dtype: DType = Field("float32", description="Output dtype")


def _one_hot(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    hit = inputs[0].astype(np.int64)[..., None] == xp.arange(params.depth)
    value = xp.where(hit, params.on_value, params.off_value).astype(params.dtype)
    assign(outputs[0], req[0], value)


(register_op("one_hot")
    .describe("One-hot encoding: indices -> indices.shape + (depth,) (out-of-range rows stay off).")
    .set_attr_parser(OneHotParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("one_hot", lambda p, s: [s[0] + (p.depth,)]))
    .set_attr("FInferType", fixed_type("one_hot", lambda p: p.dtype))
    .set_attr("FCompute<cpu>", _one_hot)
    .set_attr("FGradient", lambda node, og: [zeros_entry(node.inputs[0])])
    .set_attr("TExamples", [
        {"inputs": [(2, 3)], "dtype": "int32", "domain": (-1, 6), "params": {"depth": 5}},
        {"inputs": [(4,)], "dtype": "float32", "domain": (0, 3), "grad": False,
         "params": {"depth": 3, "on_value": 8, "off_value": -1, "dtype": "int32"}}])
    .add_argument("indices", "NDArray-or-Symbol", "Positions that get on_value"))
