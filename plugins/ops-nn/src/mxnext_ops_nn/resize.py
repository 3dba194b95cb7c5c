"""_contrib_BilinearResize2D and _contrib_AdaptiveAvgPooling2D of NCHW data.

Both are separable: along each spatial axis the output is a fixed (out, in) matrix times the
input, so a resize is ``A_h @ x @ A_w.T`` per channel and its gradient ``A_h.T @ g @ A_w``.
Bilinear rows hold MXNet's two interpolation weights (source position computed in float32,
``scale * dst`` with align_corners, else ``scale * (dst + 0.5) - 0.5`` clamped at 0); adaptive
pooling rows average ``[floor(o * in / out), ceil((o + 1) * in / out))``.

The backward ops read the forward inputs for their shapes only (MXNet's read nothing but the
head gradient and take shapes from the forward node).
"""

from __future__ import annotations

from math import ceil, floor
from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op
from pydantic import model_validator

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, put,
                           result_shapes, same_type, set_shape)

RESIZE = "_contrib_BilinearResize2D"
ADAPTIVE = "_contrib_AdaptiveAvgPooling2D"
RESIZE_BWD = "_backward_contrib_BilinearResize2D"
ADAPTIVE_BWD = "_backward_contrib_AdaptiveAvgPooling2D"


def _apply(xp, x, mh, mw, dtype):
    """``mh @ x @ mw.T`` over the last two axes of 4-d ``x``, computed in ``dtype``."""
    return xp.einsum("oh,nchw,pw->ncop", mh, x.astype(dtype, copy=False), mw, optimize=True)


def _check_4d(op, shape, name="data"):
    if len(shape) != 4:
        fail(op, f"input {name!r} should be 4-d (batch, channel, height, width), got "
                 f"{tuple(shape)}")


def _backward_shape(op):
    """Backward rule: input 0 is the head gradient, the rest are the forward inputs, whose
    shapes the gradients take."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for k in range(len(ins) - 1):
            if ins[k + 1] is not None:
                set_shape(op, outs, k, tuple(ins[k + 1]), f"output {k}")
            elif outs[k] is not None:
                ins[k + 1] = tuple(outs[k])
        return ins, outs
    return infer


# ---- BilinearResize2D ------------------------------------------------------------------------

class BilinearResize2DParam(Param):
    height: int = Field(1, ge=1, description="Output height in mode 'size' when scale_height "
                                             "is not given.")
    width: int = Field(1, ge=1, description="Output width in mode 'size' when scale_width is "
                                            "not given.")
    scale_height: float | None = Field(
        None, description="Height factor: mode 'size' (output = int(scale * height)) and "
                          "'odd_scale'.")
    scale_width: float | None = Field(
        None, description="Width factor: mode 'size' (output = int(scale * width)) and "
                          "'odd_scale'.")
    mode: Literal["size", "odd_scale", "like", "to_even_down", "to_even_up", "to_odd_down",
                  "to_odd_up"] = Field(
        "size", description="How the output size is chosen: 'size' from height/width or the "
                            "scales; 'odd_scale' scales an odd size as (size - 1) * scale + 1; "
                            "'like' takes the second input's height and width; 'to_even_down', "
                            "'to_even_up', 'to_odd_down', 'to_odd_up' move each size by one to "
                            "the requested parity when needed.")
    align_corners: bool = Field(
        True, description="Map the corner pixels of input and output onto each other (else "
                          "pixel areas are scaled, as half-pixel-centre resizing).")


def _like(p):
    return p.mode == "like"


def _resize_names(p):
    return ["data", "like"] if _like(p) else ["data"]


def _scaled(op, size, scale, name):
    if scale is None:
        fail(op, f"mode='odd_scale' needs {name}, got None")
    return int(size * scale) if size % 2 == 0 else int((size - 1) * scale) + 1


def _target(p, data, like):
    h, w = data[2], data[3]
    if p.mode == "size":
        return (int(p.scale_height * h) if p.scale_height is not None else p.height,
                int(p.scale_width * w) if p.scale_width is not None else p.width)
    if p.mode == "odd_scale":
        return (_scaled(RESIZE, h, p.scale_height, "scale_height"),
                _scaled(RESIZE, w, p.scale_width, "scale_width"))
    if p.mode == "like":
        return like[2], like[3]
    parity = 0 if "even" in p.mode else 1
    step = -1 if p.mode.endswith("down") else 1
    return tuple(s if s % 2 == parity else s + step for s in (h, w))


def _resize_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if data is None:
        return ins, list(outs)
    _check_4d(RESIZE, data)
    like = None
    if _like(p):
        like = ins[1]
        if like is None:
            return ins, list(outs)
        _check_4d(RESIZE, like, "like")
    oh, ow = _target(p, data, like)
    if oh < 1 or ow < 1:
        fail(RESIZE, f"mode={p.mode!r} gives an empty output size {(oh, ow)} for data "
                     f"{tuple(data)}")
    return ins, result_shapes(RESIZE, outs, [(data[0], data[1], oh, ow)])


def _interp_matrix(xp, n_in, n_out, align_corners):
    """(n_out, n_in) bilinear weights, as MXNet computes them (float32 positions)."""
    f32 = np.float32
    if n_out > 1:
        scale = f32(n_in - 1) / f32(n_out - 1) if align_corners else f32(n_in) / f32(n_out)
    else:
        scale = f32(0)
    dst = np.arange(n_out)
    if align_corners:
        src = scale * dst.astype(f32)
    else:
        src = np.maximum(np.float64(scale) * (dst + 0.5) - 0.5, 0).astype(f32)
    low = src.astype(np.int64)
    nxt = np.where(low < n_in - 1, 1, 0)
    lam = src - low.astype(f32)
    m = np.zeros((n_out, n_in), f32)
    np.add.at(m, (dst, low), 1 - lam)
    np.add.at(m, (dst, low + nxt), lam)
    return xp.asarray(m)


def _resize_matrices(xp, in_hw, out_hw, p):
    return [_interp_matrix(xp, i, o, p.align_corners) for i, o in zip(in_hw, out_hw)]


def _resize_forward(ctx, inputs, req, outputs, p):
    x, out = inputs[0], outputs[0]
    if x.shape[2:] == out.shape[2:]:
        put(out, req[0], x)
        return
    mh, mw = _resize_matrices(ctx.xp, x.shape[2:], out.shape[2:], p)
    put(out, req[0], _apply(ctx.xp, x, mh, mw, compute_dtype(x.dtype)))


def _resize_backward(ctx, inputs, req, outputs, p):
    og, g = inputs[0], outputs[0]
    if req[0]:
        if og.shape[2:] == g.shape[2:]:
            put(g, req[0], og)
        else:
            mh, mw = _resize_matrices(ctx.xp, g.shape[2:], og.shape[2:], p)
            put(g, req[0], _apply(ctx.xp, og, mh.T, mw.T, compute_dtype(og.dtype)))
    if _like(p):
        put(outputs[1], req[1], ctx.xp.zeros(outputs[1].shape, outputs[1].dtype))


def _resize_grad(node, og):
    return grad_entries(backward_node(RESIZE_BWD, node, [og[0]] + list(node.inputs)),
                        len(node.inputs))


(register_op(RESIZE)
    .describe("Resizes 4-d data (NCHW) by bilinear interpolation to a size given by mode: "
              "height/width or scale factors ('size'), the parity modes, 'odd_scale', or the "
              "height and width of a second input ('like').")
    .set_attr_parser(BilinearResize2DParam)
    .set_num_inputs(lambda p: len(_resize_names(p))).set_num_outputs(1)
    .set_attr("FListInputNames", _resize_names)
    .set_attr("FInferShape", _resize_shape)
    .set_attr("FInferType", FloatOnly(same_type(RESIZE, _resize_names)))
    .set_attr("FCompute<cpu>", _resize_forward)
    .set_attr("FGradient", _resize_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 3, 4)], "params": {"height": 5, "width": 7}},
        {"inputs": [(1, 2, 6, 5)], "params": {"height": "4", "width": "3",
                                              "align_corners": "False"}},
        {"inputs": [(1, 1, 4, 4)], "params": {"scale_height": 1.5, "scale_width": 0.5}},
        {"inputs": [(1, 2, 5, 4)], "params": {"mode": "odd_scale", "scale_height": 2,
                                              "scale_width": 0.5}},
        {"inputs": [(1, 1, 5, 4), (2, 3, 3, 6)], "params": {"mode": "like"}, "grad": [0]},
        {"inputs": [(1, 1, 5, 4)], "params": {"mode": "to_even_up", "align_corners": False}},
        {"inputs": [(1, 1, 3, 4)], "params": {"mode": "to_odd_down"}},
        {"inputs": [(1, 1, 3, 4)], "params": {"height": 3, "width": 4}}])
    .add_argument("data", "NDArray-or-Symbol", "Input data, (batch, channel, height, width).")
    .add_argument("like", "NDArray-or-Symbol", "mode='like' only: data is resized to this "
                  "array's height and width."))

(register_op(RESIZE_BWD)
    .describe("Gradient of BilinearResize2D (zeros for the 'like' input). Reads the forward "
              "inputs for their shapes.")
    .set_attr_parser(BilinearResize2DParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: 1 + len(_resize_names(p)))
    .set_num_outputs(lambda p: len(_resize_names(p)))
    .set_attr("FInferShape", _backward_shape(RESIZE_BWD))
    .set_attr("FInferType", same_type(RESIZE_BWD))
    .set_attr("FCompute<cpu>", _resize_backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 5, 7), (2, 2, 3, 4)], "params": {"height": 5, "width": 7}}]))


# ---- AdaptiveAvgPooling2D --------------------------------------------------------------------

class AdaptiveAvgPooling2DParam(Param):
    output_size: tuple[int, ...] = Field(
        (), description="Output (height, width), or one int for both; empty means (1, 1).")

    @model_validator(mode="after")
    def _check(self):
        if len(self.output_size) > 2 or any(s < 1 for s in self.output_size):
            raise ValueError(f"output_size must be one or two positive sizes, got "
                             f"{self.output_size}")
        return self

    def hw(self):
        if not self.output_size:
            return 1, 1
        if len(self.output_size) == 1:
            return self.output_size * 2
        return self.output_size


def _adaptive_shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None:
        return ins, list(outs)
    _check_4d(ADAPTIVE, ins[0])
    return ins, result_shapes(ADAPTIVE, outs, [tuple(ins[0][:2]) + tuple(p.hw())])


def _pool_matrix(xp, n_in, n_out):
    """(n_out, n_in) averaging weights of adaptive pooling along one axis."""
    m = np.zeros((n_out, n_in), np.float64)
    for o in range(n_out):
        lo = floor(np.float32(o * n_in) / np.float32(n_out))
        hi = ceil(np.float32((o + 1) * n_in) / np.float32(n_out))
        m[o, lo:hi] = 1.0 / (hi - lo)
    return xp.asarray(m)


def _adaptive_forward(ctx, inputs, req, outputs, p):
    x, out = inputs[0], outputs[0]
    dt = compute_dtype(x.dtype)
    mh, mw = (_pool_matrix(ctx.xp, i, o).astype(dt) for i, o in zip(x.shape[2:],
                                                                    out.shape[2:]))
    put(out, req[0], _apply(ctx.xp, x, mh, mw, dt))


def _adaptive_backward(ctx, inputs, req, outputs, p):
    og, g = inputs[0], outputs[0]
    dt = compute_dtype(og.dtype)
    mh, mw = (_pool_matrix(ctx.xp, i, o).astype(dt) for i, o in zip(g.shape[2:],
                                                                    og.shape[2:]))
    put(g, req[0], _apply(ctx.xp, og, mh.T, mw.T, dt))


def _adaptive_grad(node, og):
    return grad_entries(backward_node(ADAPTIVE_BWD, node, [og[0], node.inputs[0]]), 1)


(register_op(ADAPTIVE)
    .describe("Adaptive average pooling of 4-d data (NCHW) to a fixed output height and "
              "width: output cell (i, j) averages input rows [floor(i*H/h), ceil((i+1)*H/h)) "
              "and the matching columns.")
    .set_attr_parser(AdaptiveAvgPooling2DParam)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", _adaptive_shape)
    .set_attr("FInferType", FloatOnly(same_type(ADAPTIVE, ["data"])))
    .set_attr("FCompute<cpu>", _adaptive_forward)
    .set_attr("FGradient", _adaptive_grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 5, 7)], "params": {"output_size": (3, 4)}},
        {"inputs": [(1, 3, 4, 4)], "params": {"output_size": "2"}},
        {"inputs": [(1, 2, 3, 5)]},
        {"inputs": [(1, 1, 3, 2)], "params": {"output_size": (5, 4)}, "dtype": "float64"}])
    .add_argument("data", "NDArray-or-Symbol", "Input data, (batch, channel, height, width)."))

(register_op(ADAPTIVE_BWD)
    .describe("Gradient of AdaptiveAvgPooling2D. Reads the forward data for its shape.")
    .set_attr_parser(AdaptiveAvgPooling2DParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape(ADAPTIVE_BWD))
    .set_attr("FInferType", same_type(ADAPTIVE_BWD))
    .set_attr("FCompute<cpu>", _adaptive_backward)
    .set_attr("TExamples", [{"inputs": [(2, 2, 3, 4), (2, 2, 5, 7)],
                             "params": {"output_size": (3, 4)}}]))
