"""MXNet's sparse-only ops: ``cast_storage``, ``_sparse_retain`` (``mx.nd.sparse.retain``),
``_square_sum`` and ``_contrib_getnnz``. Each has a dense kernel (what its sparse kernel computes, on a
dense array) and a sparse one with MXNet's output storage types."""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np
from opsdk import ElemwiseGradUseNone, Field, NodeEntry, Param, assign, make_node, register_op
from opsdk.sparse import RowSparseStorage, from_dense, stype_of, to_dense

from ._layout import (backward_shape, fail, first_type, fixed_type, forward_shape, norm_axis,
                      zeros_entry)


# -- cast_storage -------------------------------------------------------------------------
class CastStorageParam(Param):
    stype: Literal["default", "csr", "row_sparse"] = Field(description="Output storage type")


def _copy(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0])


def _cast_storage_sparse(params, inputs, dense):
    (x,) = inputs
    if stype_of(x) == "csr" and params.stype == "row_sparse" or \
            stype_of(x) == "row_sparse" and params.stype == "csr":
        fail("cast_storage", f"cast_storage from {stype_of(x)} to {params.stype} is not "
                             f"supported")
    return [from_dense(to_dense(x), params.stype)]


(register_op("cast_storage")
    .describe("data in storage type stype; on dense arrays (and in executors, which run "
              "sparse arrays densely) a copy.")
    .set_attr_parser(CastStorageParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("cast_storage", lambda p, s: [s[0]]))
    .set_attr("FInferType", first_type("cast_storage"))
    .set_attr("FCompute<cpu>", _copy)
    .set_attr("FComputeSparse", _cast_storage_sparse)
    .set_attr("FGradient", ElemwiseGradUseNone("_copy"))
    .set_attr("TExamples", [{"inputs": [(3, 4)], "params": {"stype": "csr"}}])
    .add_argument("data", "NDArray-or-Symbol", "The input array"))


# -- _sparse_retain -----------------------------------------------------------------------
def _retain(ctx, inputs, req, outputs, params):
    data, idx = inputs
    out = ctx.xp.zeros_like(data)
    rows = idx.astype(np.int64).reshape(-1)
    out[rows] = data[rows]
    assign(outputs[0], req[0], out)


(register_op("_sparse_retain")
    .describe("The rows of data listed in indices; every other row is zero (a row_sparse "
              "data gives a row_sparse result).")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("_sparse_retain", lambda p, s: [s[0]]))
    .set_attr("FInferType", first_type("_sparse_retain"))
    .set_attr("FCompute<cpu>", _retain)
    .set_attr("FGradient", lambda node, og: [   # the kept rows of the head gradient
        NodeEntry(make_node("_sparse_retain", [og[0], node.inputs[1]]), 0),
        zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(4, 3), np.array([0.0, 2.0], np.float32)],
                             "grad": [0]}])
    .add_argument("data", "NDArray-or-Symbol", "The input array (row_sparse in MXNet)")
    .add_argument("indices", "NDArray-or-Symbol", "Row indices to keep"))


# -- _square_sum --------------------------------------------------------------------------
class SquareSumParam(Param):
    axis: Optional[tuple[int, ...]] = Field(None, description="Axes summed (None: all)")
    keepdims: bool = Field(False, description="Keep the summed axes as size 1")
    exclude: bool = Field(False, description="Sum every axis except those listed")


def _axes(p, ndim):
    if p.axis is None or p.axis == ():
        return tuple(range(ndim))
    axes = tuple(norm_axis("_square_sum", a, ndim) for a in p.axis)
    return tuple(a for a in range(ndim) if a not in axes) if p.exclude else axes


def _square_sum_shape(p, s):
    (shape,) = s
    axes = _axes(p, len(shape))
    if p.keepdims:
        return [tuple(1 if k in axes else d for k, d in enumerate(shape))]
    return [tuple(d for k, d in enumerate(shape) if k not in axes)]


def _square_sum(ctx, inputs, req, outputs, params):
    x = inputs[0]
    assign(outputs[0], req[0], ctx.xp.sum(x * x, axis=_axes(params, x.ndim),
                                          keepdims=params.keepdims).astype(x.dtype))


def _square_sum_backward(ctx, inputs, req, outputs, params):
    og, x = inputs
    axes = _axes(params, x.ndim)
    if not params.keepdims:
        og = ctx.xp.expand_dims(og, axes) if og.ndim < x.ndim else og
    assign(outputs[0], req[0], (2 * x * og).astype(x.dtype))


def _square_sum_sparse(params, inputs, dense):
    """row_sparse only (MXNet): along axis 1 with keepdims a row_sparse column; else dense."""
    (x,) = inputs
    if stype_of(x) != "row_sparse" or len(x.shape) != 2:
        return None
    axes = _axes(params, 2)
    sq = (x.data * x.data).astype(x.dtype)
    if axes == (1,):
        sums = sq.sum(axis=1, keepdims=params.keepdims)
        if params.keepdims:
            return [RowSparseStorage(sums, x.indices, (x.shape[0], 1))]
        out = np.zeros(x.shape[0], x.dtype)
        out[x.indices] = sums
        return [out]
    if axes == (0,):
        return [sq.sum(axis=0, keepdims=params.keepdims).astype(x.dtype)
                if len(x.indices) else np.zeros((1,) * params.keepdims + (x.shape[1],), x.dtype)]
    return None


(register_op("_square_sum")
    .describe("The sum of squares of data along axis (a row_sparse data is read sparsely).")
    .set_attr_parser(SquareSumParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("_square_sum", _square_sum_shape))
    .set_attr("FInferType", first_type("_square_sum"))
    .set_attr("FCompute<cpu>", _square_sum)
    .set_attr("FComputeSparse", _square_sum_sparse)
    .set_attr("FGradient", lambda node, og: [NodeEntry(make_node(
        "_backward_square_sum", [og[0], node.inputs[0]], node.params), 0)])
    .set_attr("TExamples", [{"inputs": [(3, 4)], "params": {"axis": (1,), "keepdims": True}},
                            {"inputs": [(3, 4)], "params": {"axis": (0,)}}])
    .add_argument("data", "NDArray-or-Symbol", "The input array"))
(register_op("_backward_square_sum")
    .describe("Gradient of _square_sum: 2 * data * the head gradient.")
    .set_attr_parser(SquareSumParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_square_sum"))
    .set_attr("FInferType", first_type("_backward_square_sum"))
    .set_attr("FCompute<cpu>", _square_sum_backward)
    .set_attr("TExamples", [{"inputs": [(3, 1), (3, 4)], "params": {"axis": (1,),
                                                                     "keepdims": True},
                             "grad": []}]))


# -- _contrib_getnnz ----------------------------------------------------------------------
class GetnnzParam(Param):
    axis: Optional[int] = Field(None, description="Count along this axis (None: in all)")


def _getnnz_shape(p, s):
    (shape,) = s
    if len(shape) != 2:
        fail("_contrib_getnnz", f"expected a 2-D input, got shape {shape}")
    if p.axis is None:
        return [(1,)]
    return [(shape[1 - norm_axis("_contrib_getnnz", p.axis, 2)],)]


def _getnnz(ctx, inputs, req, outputs, params):
    x = inputs[0]
    counts = ctx.xp.count_nonzero(x, axis=params.axis)
    assign(outputs[0], req[0], ctx.xp.asarray(counts, np.int64).reshape(outputs[0].shape))


def _getnnz_sparse(params, inputs, dense):
    (x,) = inputs
    if stype_of(x) != "csr":
        return None
    if params.axis is None:
        return [np.array([len(x.indices)], np.int64)]
    if params.axis % 2 == 0:
        return [np.bincount(x.indices, minlength=x.shape[1]).astype(np.int64)]
    return [np.diff(x.indptr).astype(np.int64)]


(register_op("_contrib_getnnz")
    .describe("The number of stored values of a CSR array, in all or along an axis.")
    .set_attr_parser(GetnnzParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("_contrib_getnnz", _getnnz_shape))
    .set_attr("FInferType", fixed_type("_contrib_getnnz", lambda p: np.int64))
    .set_attr("FCompute<cpu>", _getnnz)
    .set_attr("FComputeSparse", _getnnz_sparse)
    .set_attr("TExamples", [{"inputs": [(3, 4)], "params": {"axis": 1}, "grad": []}])
    .add_argument("data", "NDArray-or-Symbol", "A CSR array"))
