"""Embedding: rows of a (input_dim, output_dim) weight picked by integer-valued indices
(truncated, clipped to [0, input_dim)), and its backward: the dense weight gradient sums the
output gradient rows of equal indices (sorted once, one ``add.reduceat``)."""

from __future__ import annotations

import numpy as np
from opsdk import DType, Field, Param, register_op

from ._layer_rules import (backward_node, grad_entries, put, result_shapes, set_shape,
                           set_type)

OP = "Embedding"
SPARSE = "_contrib_SparseEmbedding"


class _TableParam(Param):
    input_dim: int = Field(ge=1, description="Number of rows of the table (distinct indices).")
    output_dim: int = Field(ge=1, description="Length of each looked-up vector.")
    dtype: DType = Field("float32", description="Element type of the weight table.")


class EmbeddingParam(_TableParam):
    sparse_grad: bool = Field(False, description="Ask for a row_sparse weight gradient (a "
                                                 "row_sparse gradient buffer receives it).")


class SparseEmbeddingParam(_TableParam):
    deterministic: bool = Field(False, description="MXNet's switch for a deterministic (slower) "
                                                   "GPU backward; the host kernel always is.")


def _shape(p, ins, outs):
    ins = list(ins)
    set_shape(OP, ins, 1, (p.input_dim, p.output_dim), "input 'weight'")
    if ins[0] is None:
        return ins, list(outs)
    return ins, result_shapes(OP, outs, [tuple(ins[0]) + (p.output_dim,)])


def _type(p, ins, outs):
    ins, outs = list(ins), list(outs)
    t = next((v for v in (ins[1], outs[0]) if v is not None), p.dtype)
    set_type(OP, ins, 1, t, "input 'weight'")
    set_type(OP, outs, 0, t, "output 'output'")
    return ins, outs


def indices(data, input_dim):
    """Row indices: truncated toward zero and clipped into [0, input_dim) (MXNet's clip)."""
    return np.clip(data.astype(np.int64), 0, input_dim - 1)


def _forward(ctx, inputs, req, outputs, p):
    if req[0]:
        put(outputs[0], req[0], inputs[1][indices(inputs[0], p.input_dim)])


def _backward(ctx, inputs, req, outputs, p):
    og, data = inputs
    put(outputs[0], req[0], ctx.xp.zeros(data.shape, outputs[0].dtype))
    if not req[1]:
        return
    idx = indices(data, p.input_dim).ravel()
    rows = og.reshape(-1, p.output_dim)
    grad = ctx.xp.zeros((p.input_dim, p.output_dim), rows.dtype)
    if idx.size and ctx.xp is not np:   # a device's arrays: its scatter-add
        ctx.xp.add.at(grad, idx, rows)
    elif idx.size:
        order = np.argsort(idx, kind="stable")
        sidx = idx[order]
        starts = np.flatnonzero(np.r_[True, sidx[1:] != sidx[:-1]])
        grad[sidx[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    put(outputs[1], req[1], grad)


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[0]])
    return grad_entries(n, 2)


def _sparse_grad(node, og):
    n = backward_node(f"_backward_{SPARSE}", node, [og[0], node.inputs[0]])
    return grad_entries(n, 2)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    set_shape(f"_backward_{OP}", outs, 1, (p.input_dim, p.output_dim), "output 1")
    if ins[1] is None and outs[0] is not None:
        ins[1] = tuple(outs[0])
    if ins[1] is not None:
        set_shape(f"_backward_{OP}", outs, 0, ins[1], "output 0")
        set_shape(f"_backward_{OP}", ins, 0, tuple(ins[1]) + (p.output_dim,), "input 'ograd'")
    return ins, outs


def _backward_type(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if ins[1] is not None:
        set_type(f"_backward_{OP}", outs, 0, ins[1], "output 0")
    elif outs[0] is not None:
        ins[1] = np.dtype(outs[0])
    g = ins[0] if ins[0] is not None else outs[1]
    if g is not None:
        set_type(f"_backward_{OP}", ins, 0, g, "input 'ograd'")
        set_type(f"_backward_{OP}", outs, 1, g, "output 1")
    return ins, outs


_IDX = np.array([[0, 3, 3], [1, 0, 3]], np.float32)


def _lookup(name, param, grad, doc, examples):
    """Register a table-lookup op (Embedding, SparseEmbedding): ``output[..., :] =
    weight[data[...], :]``, its gradient rule ``grad``. Like MXNet's, it declares no output
    names (the quantize pass names a node reading it ``<name>_0_quantize``)."""
    return (register_op(name).describe(doc)
            .set_attr_parser(param)
            .set_num_inputs(2).set_num_outputs(1)
            .set_attr("FListInputNames", lambda p: ["data", "weight"])
            .set_attr("FInferShape", _shape)
            .set_attr("FInferType", _type)
            .set_attr("FCompute<cpu>", _forward)
            .set_attr("FGradient", grad)
            .set_attr("TExamples", examples)
            .add_argument("data", "NDArray-or-Symbol", "Indices to look up (any shape).")
            .add_argument("weight", "NDArray-or-Symbol",
                          "Table of shape (input_dim, output_dim)."))


def _lookup_backward(name, param, doc):
    """Register ``_backward_<name>``: Embedding's gradient under ``param``."""
    (register_op(f"_backward_{name}")
        .describe(doc)
        .set_attr_parser(param)
        .set_attr("TIsBackward", True)
        .set_num_inputs(2).set_num_outputs(2)
        .set_attr("FInferShape", _backward_shape)
        .set_attr("FInferType", _backward_type)
        .set_attr("FCompute<cpu>", _backward)
        .set_attr("TExamples", [{"inputs": [(2, 3, 5), _IDX],
                                 "params": {"input_dim": 4, "output_dim": 5}}]))


(_lookup(OP, EmbeddingParam, _grad,
         "Table lookup: each index in data selects a row of weight, output[..., :] = "
         "weight[data[...], :], indices clipped to [0, input_dim).", [
             {"inputs": [_IDX, (4, 5)], "params": {"input_dim": 4, "output_dim": 5},
              "grad": [1]},
             {"inputs": [np.array([2, 7, -1, 0], np.int64), (5, 3)],
              "dtype": ["int64", "float64"],
              "params": {"input_dim": "5", "output_dim": "3", "dtype": "float64",
                         "sparse_grad": "False"}}])
    .add_alias("_npx_embedding").add_alias("_sparse_Embedding"))

_lookup_backward(OP, EmbeddingParam,
                 "Gradient of Embedding: zeros for the indices and, for the weight, the sum "
                 "of the output gradient rows of each index.")

_lookup(SPARSE, SparseEmbeddingParam, _sparse_grad,
        "Embedding whose weight gradient is row_sparse (MXNet's SparseEmbedding): the "
        "same lookup, output[..., :] = weight[data[...], :].",
        [{"inputs": [_IDX, (4, 5)], "params": {"input_dim": 4, "output_dim": 5},
          "grad": [1]}])

_lookup_backward(SPARSE, SparseEmbeddingParam, "Gradient of SparseEmbedding (as Embedding's).")
