"""L2Normalization: data divided by its L2 norm sqrt(sum x^2 + eps) per instance, per
spatial position across channels (mode='channel') or per channel across space
(mode='spatial'); the norm is a hidden second output. The backward reads the output
gradient, the output and the norm."""

from __future__ import annotations

from math import prod
from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op

from ._layer_rules import (backward_node, fail, grad_entries, out_entry, put, result_shapes,
                           same_type, set_shape)

OP = "L2Normalization"


class L2NormalizationParam(Param):
    eps: float = Field(1e-10, description="Added to the sum of squares before the square root.")
    mode: Literal["instance", "spatial", "channel"] = Field(
        "instance", description="Which elements share a norm: a whole sample ('instance'), "
                                "the channels at one position ('channel') or the positions of "
                                "one channel ('spatial').")


def _view(p, shape):
    """(rows, reduced, cols) view and the reduced axis (1) of it."""
    if p.mode == "instance":
        return (shape[0], prod(shape[1:]), 1)
    if p.mode == "channel":
        return (shape[0], shape[1], prod(shape[2:]))
    return (shape[0] * shape[1], prod(shape[2:]), 1)


def _norm_shape(p, shape):
    if p.mode == "instance":
        return (shape[0],)
    if len(shape) < 3:
        fail(OP, f"mode={p.mode!r} needs data of at least 3 dims, got {shape}")
    if p.mode == "channel":
        return (shape[0], 1) + tuple(shape[2:])
    return (shape[0], shape[1])


def _shape(p, ins, outs):
    x = ins[0] if ins[0] is not None else outs[0]
    if x is None:
        return list(ins), list(outs)
    x = tuple(x)
    if not x:
        fail(OP, "data must have at least 1 dim, got a scalar")
    return [x], result_shapes(OP, outs, [x, _norm_shape(p, x)], ["output", "norm"])


def _forward(ctx, inputs, req, outputs, p):
    x3 = inputs[0].reshape(_view(p, inputs[0].shape))
    norm = np.sqrt(np.einsum("arb,arb->ab", x3, x3) + p.eps)[:, None, :]
    put(outputs[1], req[1], norm.reshape(outputs[1].shape))
    put(outputs[0].reshape(x3.shape), req[0], x3 / norm)


def _backward(ctx, inputs, req, outputs, p):
    og, y, norm = inputs
    shape = _view(p, y.shape)
    g3, y3 = og.reshape(shape), y.reshape(shape)
    n = norm.reshape(shape[0], 1, shape[2])
    dot = np.einsum("arb,arb->ab", g3, y3)[:, None, :]
    put(outputs[0].reshape(shape), req[0], (g3 - y3 * dot) / n)


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], out_entry(node, 0), out_entry(node, 1)])
    return grad_entries(n, 1)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    x = next((s for s in (ins[0], ins[1], outs[0]) if s is not None), None)
    if x is not None:
        x = tuple(x)
        for i, s in ((0, x), (1, x), (2, _norm_shape(p, x))):
            set_shape(f"_backward_{OP}", ins, i, s, f"input {i}")
        set_shape(f"_backward_{OP}", outs, 0, x, "output 0")
    return ins, outs


(register_op(OP)
    .describe("Scales data to unit L2 norm, per instance (all but the first axis), per "
              "spatial position across channels (channel) or per channel across the spatial "
              "axes (spatial): out = data / sqrt(sum(data^2) + eps).")
    .set_attr_parser(L2NormalizationParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "norm"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, ["data"])))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [{"inputs": [(3, 4, 2)]},
                            {"inputs": [(2, 3, 2, 2)], "params": {"mode": "channel"}},
                            {"inputs": [(2, 3, 4)], "params": {"mode": "spatial",
                                                               "eps": "1e-6"}},
                            {"inputs": [(5,)]}])
    .add_argument("data", "NDArray-or-Symbol", "Input array to normalize."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of L2Normalization from the output gradient, the output and the norm.")
    .set_attr_parser(L2NormalizationParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [(2, 3, 4), (2, 3, 4), np.ones((2, 1, 4), np.float32)],
                             "params": {"mode": "channel"}}]))
