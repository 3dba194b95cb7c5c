"""Ops that repeat or pad values: tile, repeat, pad (and their gradients)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, Param, assign, register_op
from opsdk.shape import dim_known

from ._layout import backward_shape, data_grad, fail, forward_shape, norm_axis, same_type


def _register_backward(name, param, compute, example):
    """A ``_backward_*`` op reading (head gradient, forward input) and writing the input's gradient."""
    (register_op(name).set_attr_parser(param).set_num_inputs(2).set_num_outputs(1)
        .describe(f"Gradient of {name[len('_backward_'):]}.")
        .set_attr("FInferShape", backward_shape(name))
        .set_attr("FInferType", same_type(name))
        .set_attr("FCompute<cpu>", compute)
        .set_attr("TExamples", [example]))


# -- tile ------------------------------------------------------------------------------
class TileParam(Param):
    reps: tuple[int, ...] = Field(description="Repetitions per axis (numpy.tile rules)")


def _tile_shape(p, s):
    d = s[0]
    n = max(len(d), len(p.reps))
    d = (1,) * (n - len(d)) + d
    reps = (1,) * (n - len(p.reps)) + p.reps
    if any(r < 0 for r in reps):
        fail("tile", f"reps={p.reps} must be non-negative")
    if 0 in reps and not dim_known(0):
        fail("tile", f"reps={p.reps} gives a zero-size output, which MXNet's legacy shape "
                     f"semantics cannot hold (0 means unknown); use mx.np_shape()")
    return [tuple(a * r if dim_known(a) else a for a, r in zip(d, reps))]


def _tile_backward(ctx, inputs, req, outputs, params):
    og, shape = inputs[0], inputs[1].shape
    n = og.ndim
    d = (1,) * (n - len(shape)) + shape
    reps = (1,) * (n - len(params.reps)) + params.reps
    g = og.reshape(tuple(x for pair in zip(reps, d) for x in pair)).sum(axis=tuple(range(0, 2 * n, 2)))
    assign(outputs[0], req[0], g.reshape(shape))


(register_op("tile")
    .describe("Copies of the whole input laid side by side, reps[i] of them along axis i.")
    .set_attr_parser(TileParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("tile", _tile_shape))
    .set_attr("FInferType", same_type("tile"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(o[0], r[0], ctx.xp.tile(i[0], p.reps)))
    .set_attr("FGradient", data_grad("_backward_tile"))
    .set_attr("TExamples", [{"inputs": [(2, 3)], "params": {"reps": "(2, 2)"}},
                            {"inputs": [(2, 3)], "params": {"reps": (2, 1, 3)}},
                            {"inputs": [(2, 3, 2)], "params": {"reps": (3,)}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))
_register_backward("_backward_tile", TileParam, _tile_backward,
                   {"inputs": [(4, 6), (2, 3)], "params": {"reps": (2, 2)}})


# -- repeat ----------------------------------------------------------------------------
class RepeatParam(Param):
    repeats: int = Field(ge=0, description="Copies made of every element")
    axis: int | None = Field(None, description="Axis to repeat along; None: flattened input")


def _repeat_shape(p, s):
    d = s[0]
    if p.axis is None:
        return [(int(np.prod(d)) * p.repeats,)]
    a = norm_axis("repeat", p.axis, len(d))
    return [d[:a] + (d[a] * p.repeats,) + d[a + 1:]]


def _repeat_backward(ctx, inputs, req, outputs, params):
    og, shape = inputs[0], inputs[1].shape
    if params.axis is None:
        g = og.reshape(-1, params.repeats).sum(axis=1).reshape(shape)
    else:
        a = params.axis % len(shape)
        g = og.reshape(shape[:a] + (shape[a], params.repeats) + shape[a + 1:]).sum(axis=a + 1)
    assign(outputs[0], req[0], g)


(register_op("repeat")
    .describe("Writes every element repeats times in a row, along axis or over the flattened "
              "input.")
    .set_attr_parser(RepeatParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("repeat", _repeat_shape))
    .set_attr("FInferType", same_type("repeat"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
        o[0], r[0], ctx.xp.repeat(i[0], p.repeats, p.axis)))
    .set_attr("FGradient", data_grad("_backward_repeat"))
    .set_attr("TExamples", [{"inputs": [(2, 3)], "params": {"repeats": 2}},
                            {"inputs": [(2, 3)], "params": {"repeats": 3, "axis": -1}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))
_register_backward("_backward_repeat", RepeatParam, _repeat_backward,
                   {"inputs": [(2, 6), (2, 3)], "params": {"repeats": 2, "axis": 1}})


# -- pad -------------------------------------------------------------------------------
class PadParam(Param):
    mode: Literal["constant", "edge", "reflect"] = Field("constant", description="Padding mode")
    pad_width: tuple[int, ...] = Field(description="(before, after) pairs, one per axis")
    constant_value: float = Field(0.0, description="Fill value for mode='constant'")


def _pairs(p, ndim):
    w = p.pad_width
    if len(w) != 2 * ndim or any(x < 0 for x in w):
        fail("pad", f"pad_width={w} needs {2 * ndim} non-negative values for {ndim} dims")
    return [(w[2 * k], w[2 * k + 1]) for k in range(ndim)]


def _pad_shape(p, s):
    d = s[0]
    pairs = _pairs(p, len(d))
    if p.mode == "reflect" and any(max(b, a) >= n for (b, a), n in zip(pairs, d) if b or a):
        fail("pad", f"mode='reflect' needs pads smaller than the axis, got {p.pad_width} for {d}")
    return [tuple(n + b + a for n, (b, a) in zip(d, pairs))]


def _pad_compute(ctx, inputs, req, outputs, params):
    x = inputs[0]
    kw = {"constant_values": params.constant_value} if params.mode == "constant" else {}
    assign(outputs[0], req[0], ctx.xp.pad(x, _pairs(params, x.ndim), mode=params.mode, **kw))


def _pad_backward(ctx, inputs, req, outputs, params):
    """Adjoint of pad: pad the index map the same way, then sum the head gradient per source."""
    xp, og, shape = ctx.xp, inputs[0], inputs[1].shape
    size = int(np.prod(shape))
    index = xp.arange(size).reshape(shape)
    kw = {"constant_values": size} if params.mode == "constant" else {}
    padded = xp.pad(index, _pairs(params, len(shape)), mode=params.mode, **kw)
    g = xp.bincount(padded.reshape(-1), weights=og.reshape(-1).astype(np.float64),
                    minlength=size + 1)[:size]
    assign(outputs[0], req[0], g.reshape(shape).astype(og.dtype))


(register_op("Pad").add_alias("pad")
    .describe("Widens every axis by pad_width, filling with a constant, the edge values or a "
              "mirror image.")
    .set_attr_parser(PadParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("pad", _pad_shape))
    .set_attr("FInferType", FloatOnly(same_type("pad")))
    .set_attr("FCompute<cpu>", _pad_compute)
    .set_attr("FGradient", data_grad("_backward_Pad"))
    .set_attr("TExamples", [
        {"inputs": [(1, 2, 3, 3)], "params": {"pad_width": (0, 0, 0, 0, 1, 1, 2, 1),
                                               "constant_value": 1.5}},
        {"inputs": [(1, 2, 3, 3)], "params": {"mode": "edge", "pad_width": (0, 0, 0, 0, 2, 1, 1, 2)}},
        {"inputs": [(1, 2, 3, 3)], "params": {"mode": "reflect",
                                               "pad_width": "(0, 0, 0, 0, 2, 1, 1, 2)"}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))
_register_backward("_backward_Pad", PadParam, _pad_backward,
                   {"inputs": [(1, 1, 5, 3), (1, 1, 3, 3)], "params": {
                       "mode": "reflect", "pad_width": (0, 0, 0, 0, 1, 1, 0, 0)}})
