"""Normalisation by per-sample moments: LayerNorm (over one axis), GroupNorm (over channel
groups and space, one gamma/beta per group as in MXNet 1.x) and InstanceNorm (over space,
per channel), with their backward ops.

Each views the data as (P, C, Q) with gamma/beta along axis 1: LayerNorm reduces over axis
1 (the normalised axis), GroupNorm and InstanceNorm over axis 2. The hidden outputs hold the
mean and the standard deviation sqrt(var + eps) (InstanceNorm: the variance); gradients do
not flow through them.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, norm_axis,
                           out_entry, put, result_shapes, same_type, set_shape)

_NAMES = ["data", "gamma", "beta"]


class LayerNormParam(Param):
    axis: int = Field(-1, description="Axis whose elements are normalized together, typically "
                                      "the channel axis; negative counts from the end.")
    eps: float = Field(1e-5, description="Added to the variance before the square root.")
    output_mean_var: bool = Field(False, description="Also return the mean and standard "
                                                     "deviation that were used.")


class GroupNormParam(Param):
    num_groups: int = Field(1, ge=1, description="How many groups the channels form.")
    eps: float = Field(1e-5, description="Added to the variance before the square root.")
    output_mean_var: bool = Field(False, description="Also return the mean and standard "
                                                     "deviation of each group.")


class InstanceNormParam(Param):
    eps: float = Field(1e-3, description="Added to the variance before the square root.")


class _Kind:
    """How one op lays its data out as (P, C, Q), reduces, and shapes its moments."""

    def __init__(self, name, view, reduce, moments, param_size, std_output=True):
        self.name, self.view, self.reduce = name, view, reduce
        self.moments, self.param_size = moments, param_size
        self.std_output = std_output

    def check(self, p, x):
        if self.name != "LayerNorm" and len(x) < 3:
            fail(self.name, f"data should have at least 3 dims (batch, channel, ...), got {x}")
        if self.name == "GroupNorm" and x[1] % p.num_groups:
            fail(self.name, f"data has {x[1]} channels, not divisible by "
                            f"num_groups={p.num_groups}")


def _ln_view(p, shape):
    a = norm_axis("LayerNorm", p.axis, len(shape))
    return int(np.prod(shape[:a])), shape[a], int(np.prod(shape[a + 1:]))


def _ln_moments(p, shape):
    a = norm_axis("LayerNorm", p.axis, len(shape))
    return shape[:a] + (1,) + shape[a + 1:]


KINDS = {
    "LayerNorm": _Kind("LayerNorm", _ln_view, 1, _ln_moments,
                       lambda p, s: s[norm_axis("LayerNorm", p.axis, len(s))]),
    "GroupNorm": _Kind("GroupNorm",
                       lambda p, s: (s[0], p.num_groups, int(np.prod(s[1:])) // p.num_groups), 2,
                       lambda p, s: (s[0], p.num_groups), lambda p, s: p.num_groups),
    "InstanceNorm": _Kind("InstanceNorm", lambda p, s: (s[0], s[1], int(np.prod(s[2:]))), 2,
                          lambda p, s: (s[0], s[1]), lambda p, s: s[1], std_output=False),
}


def _shape_rule(kind):
    def infer(p, ins, outs):
        ins, x = list(ins), ins[0]
        if x is None:
            return ins, list(outs)
        x = tuple(x)
        if not x:
            fail(kind.name, "data must have at least 1 dim, got a scalar")
        kind.check(p, x)
        c = kind.param_size(p, x)
        for i in (1, 2):
            set_shape(kind.name, ins, i, (c,), f"input {_NAMES[i]!r}")
        m = kind.moments(p, x)
        return ins, result_shapes(kind.name, outs, [x, m, m])
    return infer


def _forward(kind):
    def compute(ctx, inputs, req, outputs, p):
        x, gamma, beta = inputs
        dt = compute_dtype(x.dtype)
        x3 = x.reshape(kind.view(p, x.shape)).astype(dt, copy=False)
        mean = x3.mean(axis=kind.reduce, keepdims=True)
        d = x3 - mean
        var = np.mean(d * d, axis=kind.reduce, keepdims=True)
        std = np.sqrt(var + p.eps)
        put(outputs[1], req[1], mean.reshape(outputs[1].shape))
        put(outputs[2], req[2], (std if kind.std_output else var).reshape(outputs[2].shape))
        if req[0]:
            d /= std
            d *= gamma.reshape(1, -1, 1)
            d += beta.reshape(1, -1, 1)
            put(outputs[0].reshape(x3.shape), req[0], d)
    return compute


def _backward(kind):
    def compute(ctx, inputs, req, outputs, p):
        og, x, gamma, mean, second = inputs
        dt = compute_dtype(x.dtype)
        shape = kind.view(p, x.shape)
        x3, g3 = (a.reshape(shape).astype(dt, copy=False) for a in (x, og))
        red = kind.reduce
        keep = list(shape)
        keep[red] = 1
        std = second.reshape(keep).astype(dt, copy=False)
        if not kind.std_output:
            std = np.sqrt(std + p.eps)
        xhat = (x3 - mean.reshape(keep)) / std
        others = tuple(i for i in range(3) if i != 1)
        # gamma/beta sum over every row: accumulate in float64, as accurate as MXNet's
        # compensated (Kahan) sum reducer, where numpy adds strided rows one by one
        put(outputs[1], req[1], (g3 * xhat).sum(axis=others, dtype=np.float64))
        put(outputs[2], req[2], g3.sum(axis=others, dtype=np.float64))
        if req[0]:
            gh = g3 * gamma.reshape(1, -1, 1)
            gx = (gh - gh.mean(axis=red, keepdims=True)
                  - xhat * (gh * xhat).mean(axis=red, keepdims=True)) / std
            put(outputs[0].reshape(shape), req[0], gx)
    return compute


def _grad(name):
    def grad(node, og):
        i = node.inputs
        n = backward_node(f"_backward_{name}", node,
                          [og[0], i[0], i[1], out_entry(node, 1), out_entry(node, 2)])
        return grad_entries(n, 3)
    return grad


def _backward_shape(kind):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        x = next((s for s in (ins[1], ins[0], outs[0]) if s is not None), None)
        if x is None:
            return ins, outs
        x = tuple(x)
        c, m = kind.param_size(p, x), kind.moments(p, x)
        op = f"_backward_{kind.name}"
        for i, s in ((0, x), (1, x), (2, (c,)), (3, m), (4, m)):
            set_shape(op, ins, i, s, f"input {i}")
        return ins, result_shapes(op, outs, [x, (c,), (c,)])
    return infer


def _register(name, param, doc, examples, bwd_example, output_names, visible, inplace):
    kind = KINDS[name]
    b = (register_op(name).describe(doc).set_attr_parser(param)
         .set_num_inputs(3).set_num_outputs(3)
         .set_attr("FNumVisibleOutputs", visible)
         .set_attr("FListInputNames", lambda p: list(_NAMES))
         .set_attr("FListOutputNames", lambda p: list(output_names))
         .set_attr("FInferShape", _shape_rule(kind))
         .set_attr("FInferType", FloatOnly(same_type(name, _NAMES)))
         .set_attr("FCompute<cpu>", _forward(kind))
         .set_attr("FGradient", _grad(name))
         .set_attr("TExamples", examples)
         .add_argument("data", "NDArray-or-Symbol", "Array to normalize.")
         .add_argument("gamma", "NDArray-or-Symbol", "Multiplier applied after normalizing.")
         .add_argument("beta", "NDArray-or-Symbol", "Offset added after scaling."))
    if inplace:
        b.set_attr("FInplaceOption", lambda p: [(0, 0)])
    if name == "LayerNorm":
        b.add_alias("_npx_layer_norm")
    (register_op(f"_backward_{name}")
        .describe(f"Gradient of {name} wrt data, gamma and beta from the output gradient, the "
                  f"data, gamma and the saved moments.")
        .set_attr_parser(param)
        .set_attr("TIsBackward", True)
        .set_num_inputs(5).set_num_outputs(3)
        .set_attr("FInferShape", _backward_shape(kind))
        .set_attr("FInferType", same_type(f"_backward_{name}"))
        .set_attr("FCompute<cpu>", _backward(kind))
        .set_attr("TExamples", [bwd_example]))


def _visible(p):
    return 3 if p.output_mean_var else 1


_register("LayerNorm", LayerNormParam,
          "Layer normalization: centres data along axis (the last by default) and divides by "
          "the standard deviation there, then applies gamma and beta (each as long as that "
          "axis).",
          [{"inputs": [(3, 5), (5,), (5,)]},
           {"inputs": [(2, 4, 3), (4,), (4,)], "params": {"axis": "1", "eps": "1e-3"}},
           {"inputs": [(2, 3, 2), (2,), (2,)], "params": {"output_mean_var": True},
            "grad": False}],
          {"inputs": [(2, 3), (2, 3), (3,), (2, 1), np.ones((2, 1), np.float32)]},
          ["output", "mean", "std"], _visible, True)
_register("GroupNorm", GroupNormParam,
          "Group normalization: every sample's channels form num_groups equal groups, each "
          "standardized over its channels and spatial positions together, then multiplied by "
          "that group's gamma and offset by its beta.",
          [{"inputs": [(2, 4, 3), (2,), (2,)], "params": {"num_groups": 2}},
           {"inputs": [(2, 3, 2, 2), (1,), (1,)]},
           {"inputs": [(2, 4, 3), (4,), (4,)], "params": {"num_groups": 4,
                                                          "output_mean_var": True},
            "grad": False}],
          {"inputs": [(2, 4, 3), (2, 4, 3), (2,), (2, 2), np.ones((2, 2), np.float32)],
           "params": {"num_groups": 2}},
          ["output", "mean", "std"], _visible, True)
_register("InstanceNorm", InstanceNormParam,
          "Instance normalization: every (sample, channel) slice is standardized over its "
          "spatial positions, then multiplied by the channel's gamma and offset by its beta.",
          [{"inputs": [(2, 3, 4), (3,), (3,)]},
           {"inputs": [(2, 2, 3, 2), (2,), (2,)], "params": {"eps": 0.01}}],
          {"inputs": [(2, 3, 4), (2, 3, 4), (3,), (2, 3), np.ones((2, 3), np.float32)]},
          ["output", "mean", "var"], 1, False)
