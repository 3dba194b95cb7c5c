"""LRN (local response normalization across channels) of 4-d data and its backward.

``tmp_norm = knorm + alpha / nsize * sum(x^2 over the nsize channels centred on c)`` (a
hidden output) and ``out = x * tmp_norm^-beta``; channel-window sums are differences of a
cumulative sum over the zero-padded channel axis.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op
from pydantic import model_validator

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, out_entry, put,
                           result_shapes, same_type, set_shape)

OP = "LRN"


class LRNParam(Param):
    alpha: float = Field(1e-4, description="Weight of the windowed sum of squares (divided by "
                                           "nsize).")
    beta: float = Field(0.75, description="Exponent of the normalizing denominator.")
    knorm: float = Field(2.0, description="Constant term of the normalizing denominator.")
    nsize: int = Field(ge=1, description="Number of channels in the window (odd).")

    @model_validator(mode="after")
    def _odd(self):
        if self.nsize % 2 == 0:
            raise ValueError(f"nsize must be odd, so the window is centred on each channel; "
                             f"got {self.nsize}")
        return self


def window_sum(a, nsize):
    """Sum of ``a`` (N, C, ...) over the ``nsize`` channels centred on each channel."""
    h = nsize // 2
    pad = [(0, 0), (h + 1, h)] + [(0, 0)] * (a.ndim - 2)
    c = np.cumsum(np.pad(a, pad), axis=1)
    return c[:, nsize:] - c[:, :-nsize]


def _shape(p, ins, outs):
    x = ins[0] if ins[0] is not None else outs[0]
    if x is None:
        return list(ins), list(outs)
    if len(x) != 4:
        fail(OP, f"data should be 4-d (batch, channel, height, width), got shape {tuple(x)}")
    return [tuple(x)], result_shapes(OP, outs, [tuple(x), tuple(x)], ["output", "tmp_norm"])


def _forward(ctx, inputs, req, outputs, p):
    x = inputs[0].astype(compute_dtype(inputs[0].dtype), copy=False)
    norm = p.knorm + (p.alpha / p.nsize) * window_sum(x * x, p.nsize)
    put(outputs[1], req[1], norm)
    put(outputs[0], req[0], x * norm ** -p.beta)


def _backward(ctx, inputs, req, outputs, p):
    dt = compute_dtype(inputs[0].dtype)
    og, x, norm = (a.astype(dt, copy=False) for a in inputs)
    scaled = norm ** -p.beta
    inner = window_sum(og * x * scaled / norm, p.nsize)
    put(outputs[0], req[0], og * scaled - (2 * p.beta * p.alpha / p.nsize) * x * inner)


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[0], out_entry(node, 1)])
    return grad_entries(n, 1)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    x = next((s for s in ins + outs if s is not None), None)
    if x is not None:
        for i in range(3):
            set_shape(f"_backward_{OP}", ins, i, x, f"input {i}")
        set_shape(f"_backward_{OP}", outs, 0, x, "output 0")
    return ins, outs


(register_op(OP)
    .describe("Local response normalization over neighbouring channels: out = x / (knorm + "
              "alpha/nsize * sum of x^2 over the nsize channels centred on x's)^beta, for 4-d "
              "data.")
    .set_attr_parser(LRNParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "tmp_norm"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, ["data"])))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 5, 3, 2)], "params": {"nsize": 3, "alpha": 0.5}, "domain": (-2, 2)},
        {"inputs": [(1, 4, 2, 2)], "params": {"nsize": "5", "alpha": "1.0", "beta": "0.5",
                                              "knorm": "1.0"}, "domain": (-2, 2)}])
    .add_argument("data", "NDArray-or-Symbol", "4-d input, (batch, channel, height, width)."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of LRN from the output gradient, the data and tmp_norm.")
    .set_attr_parser(LRNParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [(2, 5, 3, 2), (2, 5, 3, 2),
                                        np.full((2, 5, 3, 2), 2.5, np.float32)],
                             "params": {"nsize": 3}}]))
