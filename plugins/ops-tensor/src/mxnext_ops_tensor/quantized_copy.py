"""Quantized ops that move int8/uint8 values without arithmetic (MXNet 1.9's
``quantization/quantized_flatten`` and ``quantized_indexing_op.cc``): _contrib_quantized_flatten
and _contrib_quantized_embedding. Each passes its (min, max) range on; the gradient is zero."""

from __future__ import annotations

import math

import numpy as np
from opsdk import DType, Field, MakeZeroGradNodes, Param, TypeInferError, assign, register_op
from opsdk.shape import merge_shape

from ._common import check_outs

_ONE = (1,)
_F32 = np.dtype(np.float32)
_QUANTIZED = (np.dtype(np.int8), np.dtype(np.uint8))


def _set_type(op, types, i, t, what):
    if types[i] is not None and np.dtype(types[i]) != np.dtype(t):
        raise TypeInferError(f"Operator {op!r}: {what} has dtype {np.dtype(types[i])}, "
                             f"expected {np.dtype(t)}")
    types[i] = np.dtype(t)


def _pass_range(inputs, req, outputs, first):
    """Outputs 1 and 2 are the range inputs ``first`` and ``first + 1``."""
    assign(outputs[1], req[1], inputs[first])
    assign(outputs[2], req[2], inputs[first + 1])


# -- _contrib_quantized_flatten ------------------------------------------------------------
def _flatten_shape(params, ins, outs):
    op = "_contrib_quantized_flatten"
    ins = list(ins)
    for i in (1, 2):
        ins[i] = merge_shape(op, ins[i], _ONE, f"input {i} (a range)")
    d = ins[0]
    if d is None or any(n is None or n < 0 for n in d):
        return ins, list(outs)
    return ins, check_outs(op, outs, [(d[0], math.prod(d[1:])), _ONE, _ONE])


def _flatten_type(params, ins, outs):
    op = "_contrib_quantized_flatten"
    ins, outs = list(ins), list(outs)
    for i, what in ((1, "input 1 (min_data)"), (2, "input 2 (max_data)")):
        _set_type(op, ins, i, _F32, what)
    if ins[0] is not None:
        _set_type(op, outs, 0, ins[0], "output 0")
    for i in (1, 2):
        _set_type(op, outs, i, _F32, f"output {i}")
    return ins, outs


def _flatten(ctx, inputs, req, outputs, params):
    x = inputs[0]
    if x.dtype not in _QUANTIZED:
        raise TypeInferError(f"Operator '_contrib_quantized_flatten': data has dtype {x.dtype}, "
                             f"expected int8 or uint8")
    assign(outputs[0], req[0], x.reshape(outputs[0].shape))
    _pass_range(inputs, req, outputs, 1)


(register_op("_contrib_quantized_flatten")
    .describe("Flatten of int8/uint8 data to (batch, rest), with its (min, max) range passed "
              "on. Inference only.")
    .set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "min_data", "max_data"])
    .set_attr("FListOutputNames", lambda p: ["output", "min_output", "max_output"])
    .set_attr("FInferShape", _flatten_shape)
    .set_attr("FInferType", _flatten_type)
    .set_attr("FInplaceOption", lambda p: [(0, 0), (1, 1), (2, 2)])
    .set_attr("FCompute<cpu>", _flatten)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("FQuantizes", "Flatten")
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4), np.array([-1.0], _F32), np.array([2.0], _F32)],
         "dtype": ["int8", "float32", "float32"], "domain": [(-128, 128), (0, 1), (0, 1)],
         "ref": lambda x, lo, hi: [x.reshape(2, 12), lo, hi], "grad": False},
        {"inputs": [(5,), np.array([0.0], _F32), np.array([2.0], _F32)],
         "dtype": ["uint8", "float32", "float32"], "domain": [(0, 256), (0, 1), (0, 1)],
         "ref": lambda x, lo, hi: [x.reshape(5, 1), lo, hi], "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_argument("min_data", "NDArray-or-Symbol", "The minimum scalar value possibly produced "
                                                   "for the data")
    .add_argument("max_data", "NDArray-or-Symbol", "The maximum scalar value possibly produced "
                                                   "for the data"))


# -- _contrib_quantized_embedding ----------------------------------------------------------
class QuantizedEmbeddingParam(Param):
    """Embedding's parameters (MXNet reuses EmbeddingParam)."""
    input_dim: int = Field(ge=1, description="Vocabulary size of the input indices.")
    output_dim: int = Field(ge=1, description="Dimension of the embedding vectors.")
    dtype: DType = Field("float32", description="Data type of weight.")
    sparse_grad: bool = Field(False, description="Compute row sparse gradient in the backward "
                                                 "calculation.")


def _embedding_shape(params, ins, outs):
    op = "_contrib_quantized_embedding"
    ins = list(ins)
    ins[1] = merge_shape(op, ins[1], (params.input_dim, params.output_dim), "input 1 (weight)")
    for i in (2, 3):
        ins[i] = merge_shape(op, ins[i], _ONE, f"input {i} (a range)")
    if ins[0] is None:
        return ins, list(outs)
    return ins, check_outs(op, outs, [tuple(ins[0]) + (params.output_dim,), _ONE, _ONE])


def _embedding_type(params, ins, outs):
    op = "_contrib_quantized_embedding"
    ins, outs = list(ins), list(outs)
    _set_type(op, ins, 1, np.int8, "input 1 (weight)")
    for i in (2, 3):
        _set_type(op, ins, i, _F32, f"input {i}")
    for i, t in enumerate((np.int8, _F32, _F32)):
        _set_type(op, outs, i, t, f"output {i}")
    return ins, outs


def _embedding_quantizable(attrs):
    """Only a float32 Embedding has a quantized form (MXNet's FQuantizedOp)."""
    return attrs.get("dtype", "float32") == "float32"


def _embedding(ctx, inputs, req, outputs, params):
    """Rows of the int8 weight at the indices (truncated, clipped into [0, input_dim))."""
    data, weight = inputs[0], inputs[1]
    rows = ctx.xp.clip(data.astype(np.int64), 0, params.input_dim - 1)
    assign(outputs[0], req[0], weight[rows])
    _pass_range(inputs, req, outputs, 2)


(register_op("_contrib_quantized_embedding")
    .describe("Embedding lookup in an int8 weight table: the rows at the (clipped) indices, "
              "with the weight's (min, max) range passed on. Inference only.")
    .set_attr_parser(QuantizedEmbeddingParam).set_num_inputs(4).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "weight", "min_weight", "max_weight"])
    .set_attr("FListOutputNames", lambda p: ["output", "min_output", "max_output"])
    .set_attr("FInferShape", _embedding_shape)
    .set_attr("FInferType", _embedding_type)
    .set_attr("FCompute<cpu>", _embedding)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("FQuantizes", "Embedding")
    .set_attr("FQuantizable", _embedding_quantizable)
    .set_attr("FAvoidQuantizeInput", lambda attrs, index: index == 0)     # the indices
    .set_attr("TExamples", [
        {"inputs": [np.array([[0.0, 4.0], [2.0, 9.0]], _F32), (5, 3),
                    np.array([-1.0], _F32), np.array([1.0], _F32)],
         "dtype": ["float32", "int8", "float32", "float32"],
         "domain": [(0, 1), (-128, 128), (0, 1), (0, 1)],
         "params": {"input_dim": 5, "output_dim": 3},
         "ref": lambda d, w, lo, hi, **p: [w[np.clip(d.astype(int), 0, 4)], lo, hi],
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "The input array to the embedding operator.")
    .add_argument("weight", "NDArray-or-Symbol", "The embedding weight matrix.")
    .add_argument("min_weight", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_weight", "NDArray-or-Symbol", "Maximum value of data."))
