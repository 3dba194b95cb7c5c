"""``_contrib_DeformableConvolution`` (Dai et al., 2017) and
``_contrib_ModulatedDeformableConvolution`` (Zhu et al., 2019): 2-D convolutions whose
kernel taps sample the data at learnt offsets (the modulated form also scales each sample
by a mask), with MXNet 1.9's parameters, shape rules and cpu sampling (``_deform_kernels``).

MXNet 1.9 has no cpu backward for the modulated op; this one is the derivative of its
forward (zero-padded bilinear sampling), as MXNet's gpu kernels compute it.
"""

from __future__ import annotations

from typing import Literal

from opsdk import AMP_FLOAT_DTYPES, Field, FloatOnly, Param, register_op
from opsdk.shape import dim_known
from pydantic import model_validator

from . import _deform_kernels as dk
from ._layer_rules import (backward_node, check_spatial, compute_dtype, fail, grad_entries,
                           namespace, put, result_shapes, same_type, set_shape, spatial)
from .convolution import conv_out_shape

DEFORM = "_contrib_DeformableConvolution"
MODULATED = "_contrib_ModulatedDeformableConvolution"


class DeformableConvolutionParam(Param):
    kernel: tuple[int, ...] = Field(description="Window extent (h, w).")
    stride: tuple[int, ...] = Field((), description="Step between windows (h, w); empty: 1.")
    dilate: tuple[int, ...] = Field((), description="Spacing between taps (h, w); empty: 1.")
    pad: tuple[int, ...] = Field((), description="Zero padding (h, w); empty: none.")
    num_filter: int = Field(ge=1, description="Count of output channels.")
    num_group: int = Field(1, ge=1, description="Channel groups convolved independently.")
    num_deformable_group: int = Field(1, ge=1, description="Channel groups sharing one set "
                                                           "of offsets (and mask).")
    workspace: int = Field(1024, ge=0, description="Scratch cap in MB (accepted, unused).")
    no_bias: bool = Field(False, description="Leave out the bias input.")
    layout: Literal["NCW", "NCHW", "NCDHW"] | None = Field(
        None, description="Axis order; only NCHW (the default) is implemented, as in MXNet.")

    @model_validator(mode="after")
    def _spatial(self):
        check_spatial(self.kernel, {"stride": self.stride, "dilate": self.dilate, "pad": self.pad},
                      positive=("kernel", "stride", "dilate"))
        return self


class ModulatedDeformableConvolutionParam(DeformableConvolutionParam):
    im2col_step: int = Field(64, ge=1, description="Images per im2col pass in MXNet: the "
                                                   "batch must be smaller or a multiple.")


def _geometry(p):
    return spatial(p.stride, 2, 1), spatial(p.dilate, 2, 1), spatial(p.pad, 2, 0)


def _modulated(p):
    return isinstance(p, ModulatedDeformableConvolutionParam)


def _names(p):
    names = ["data", "offset"] + (["mask"] if _modulated(p) else []) + ["weight"]
    return names if p.no_bias else names + ["bias"]


def _check(op, p, x):
    if len(p.kernel) != 2 or p.layout not in (None, "NCHW"):
        fail(op, f"only 2-D NCHW is implemented (as in MXNet), got kernel {p.kernel} and "
                 f"layout {p.layout}")
    if len(x) != 4:
        fail(op, f"data should be 4-D (batch, channel, height, width), got shape {x}")
    for what, n in (("num_group", p.num_group), ("num_deformable_group",
                                                 p.num_deformable_group)):
        if dim_known(x[1]) and x[1] % n:
            fail(op, f"data has {x[1]} channels, not divisible by {what}={n}")
    if p.num_filter % p.num_group:
        fail(op, f"num_filter={p.num_filter} is not divisible by num_group={p.num_group}")
    if _modulated(p):
        if p.num_filter % p.num_deformable_group:
            fail(op, f"num_filter={p.num_filter} is not divisible by num_deformable_group="
                     f"{p.num_deformable_group}")
        if dim_known(x[0]) and x[0] > p.im2col_step and x[0] % p.im2col_step:
            fail(op, f"batch {x[0]} must be at most or a multiple of im2col_step="
                     f"{p.im2col_step}")


def _shape(op):
    def infer(p, ins, outs):
        ins = list(ins)
        x = ins[0]
        if x is None:
            return ins, list(outs)
        _check(op, p, x)
        out = conv_out_shape(op, p, x)
        taps, g = p.kernel[0] * p.kernel[1], p.num_deformable_group
        names = _names(p)
        set_shape(op, ins, 1, (x[0], 2 * taps * g) + out[2:], "input 'offset'")
        if _modulated(p):
            set_shape(op, ins, 2, (x[0], taps * g) + out[2:], "input 'mask'")
        w = names.index("weight")
        set_shape(op, ins, w, (p.num_filter, x[1] // p.num_group if dim_known(x[1]) else x[1])
                  + p.kernel, "input 'weight'")
        if not p.no_bias:
            set_shape(op, ins, w + 1, (p.num_filter,), "input 'bias'")
        return ins, result_shapes(op, outs, [out])
    return infer


def _unpack(p, inputs, dt):
    """(data, offset (N, G, K, 2, L), mask (N, G, K*L) or None, weight) in ``dt``."""
    x, off = inputs[0].astype(dt, copy=False), inputs[1].astype(dt, copy=False)
    n, g, taps = x.shape[0], p.num_deformable_group, p.kernel[0] * p.kernel[1]
    off = off.reshape(n, g, taps, 2, -1)
    mask = inputs[2].astype(dt, copy=False).reshape(n, g, -1) if _modulated(p) else None
    return x, off, mask, inputs[3 if _modulated(p) else 2].astype(dt, copy=False)


def _plan(xp, p, x, off, out_hw):
    stride, dilate, pad = _geometry(p)
    rows, cols = dk.sample_points(xp, off, p.kernel, out_hw, stride, dilate, pad)
    return dk.corners(xp, rows, cols, x.shape[2], x.shape[3], clamp=not _modulated(p))


def _masked(cols, mask):
    """Sampled columns (N, G, C/G, K*L) scaled by the modulated op's mask (N, G, K*L)."""
    return cols if mask is None else cols * mask[:, :, None, :]


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    out = outputs[0]
    xp = namespace(out)
    x, off, mask, w = _unpack(p, inputs, compute_dtype(inputs[0].dtype))
    n, f, ho, wo = out.shape
    cols = _masked(dk.columns(xp, x, _plan(xp, p, x, off, (ho, wo))), mask)
    y = dk.grouped_product(xp, w, cols.reshape(n, x.shape[1], -1, ho * wo), p.num_group)
    if not p.no_bias:
        y = y + inputs[-1].astype(y.dtype, copy=False)[None, :, None]
    put(out, req[0], y.reshape(out.shape))


def _backward(ctx, inputs, req, outputs, p):
    """Inputs: head gradient, then the forward inputs but the bias; outputs: the gradient of
    every forward input."""
    og = inputs[0]
    xp = namespace(og)
    x, off, mask, w = _unpack(p, inputs[1:], compute_dtype(og.dtype))
    n, f, ho, wo = og.shape
    plan = _plan(xp, p, x, off, (ho, wo))
    raw = dk.columns(xp, x, plan)                            # unmasked samples
    cols = _masked(raw, mask)
    shape4 = (n, x.shape[1], -1, ho * wo)
    d_cols, d_w = dk.grouped_product_grads(xp, w, cols.reshape(shape4),
                                           og.astype(x.dtype, copy=False).reshape(n, f, -1),
                                           p.num_group)
    d_cols = d_cols.reshape(raw.shape)
    k = 3 if mask is not None else 2
    put(outputs[k], req[k], d_w)
    if not p.no_bias:
        put(outputs[k + 1], req[k + 1], og.reshape(n, f, -1).sum(axis=(0, 2)))
    if mask is not None:
        put(outputs[2], req[2], (d_cols * raw).sum(axis=2).reshape(outputs[2].shape))
        d_cols = _masked(d_cols, mask)
    if req[0] or req[1]:
        d_x, d_rows, d_cols_pos = dk.columns_grads(xp, x, plan, d_cols)
        put(outputs[0], req[0], d_x)
        d_off = xp.stack([d_rows.reshape(off.shape[:3] + (-1,)),
                          d_cols_pos.reshape(off.shape[:3] + (-1,))], axis=3)
        put(outputs[1], req[1], d_off.reshape(outputs[1].shape))


def _grad(op):
    def grad(node, og):
        n = backward_node(f"_backward_{op}", node, [og[0]] + list(node.inputs[
            :len(node.inputs) - (0 if node.params.no_bias else 1)]))
        return grad_entries(n, len(node.inputs))
    return grad


def _backward_shape(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for k in range(len(ins) - 1):
            if ins[k + 1] is not None:
                set_shape(op, outs, k, ins[k + 1], f"output {k}")
        if not p.no_bias:
            set_shape(op, outs, len(ins) - 1, (p.num_filter,), "bias gradient")
        return ins, outs
    return infer


_DEFORM_EXAMPLES = [
    {"inputs": [(2, 4, 5, 6), (2, 18, 5, 6), (3, 4, 3, 3), (3,)],
     "params": {"kernel": (3, 3), "num_filter": 3, "pad": (1, 1)}, "rtol": 0.05, "atol": 1e-3},
    {"inputs": [(1, 4, 6, 5), (1, 16, 3, 4), (4, 2, 2, 2)],
     "params": {"kernel": "(2, 2)", "num_filter": "4", "stride": "(2, 1)", "num_group": "2",
                "num_deformable_group": "2", "no_bias": "True"}, "rtol": 0.05, "atol": 1e-3},
]
_MODULATED_EXAMPLES = [
    {"inputs": [(2, 4, 5, 6), (2, 18, 5, 6), (2, 9, 5, 6), (4, 4, 3, 3), (4,)],
     "params": {"kernel": (3, 3), "num_filter": 4, "pad": (2, 2), "dilate": (2, 2)},
     "rtol": 0.05, "atol": 1e-3},
    {"inputs": [(1, 4, 6, 5), (1, 16, 3, 4), (1, 8, 3, 4), (4, 2, 2, 2)],
     "params": {"kernel": (2, 2), "num_filter": 4, "stride": (2, 1), "num_group": 2,
                "num_deformable_group": 2, "no_bias": True}, "rtol": 0.05, "atol": 1e-3},
]


_ARGS = {
    "data": "Input (batch, channel, height, width).",
    "offset": "(dy, dx) per tap and deformable group: (batch, 2*kh*kw*num_deformable_group, "
              "out_h, out_w).",
    "mask": "Scale per tap and deformable group: (batch, kh*kw*num_deformable_group, out_h, "
            "out_w).",
    "weight": "Filters (num_filter, channel/num_group, kh, kw).",
    "bias": "Per-filter offset (absent with no_bias).",
}


def _register(op, param, examples, what):
    n_in = 4 if param is DeformableConvolutionParam else 5
    builder = (register_op(op)
        .describe(what)
        .set_attr_parser(param)
        .set_num_inputs(lambda p: n_in - p.no_bias).set_num_outputs(1)
        .set_attr("FListInputNames", _names)
        .set_attr("FListOutputNames", lambda p: ["output"])
        .set_attr("FInferShape", _shape(op))
        .set_attr("FInferType", FloatOnly(same_type(op, _names), accepted=AMP_FLOAT_DTYPES))
        .set_attr("FCompute<cpu>", _forward)
        .set_attr("FGradient", _grad(op))
        .set_attr("TExamples", examples))
    for name in _names(param(kernel=(1, 1), num_filter=1)):
        builder.add_argument(name, "NDArray-or-Symbol", _ARGS[name])
    (register_op(f"_backward_{op}")
        .describe(f"Gradient of {op} wrt every input, from the output gradient and the "
                  f"inputs but the bias.")
        .set_attr_parser(param)
        .set_attr("TIsBackward", True)
        .set_num_inputs(n_in).set_num_outputs(lambda p: n_in - p.no_bias)
        .set_attr("FInferShape", _backward_shape(f"_backward_{op}"))
        .set_attr("FInferType", same_type(f"_backward_{op}"))
        .set_attr("FCompute<cpu>", _backward))


_register(DEFORM, DeformableConvolutionParam, _DEFORM_EXAMPLES,
          "2-D convolution whose taps sample the data bilinearly at the grid place plus a "
          "learnt offset (Dai et al., 2017).")
_register(MODULATED, ModulatedDeformableConvolutionParam, _MODULATED_EXAMPLES,
          "Deformable convolution whose samples are also scaled by a mask input, (batch, "
          "kh*kw*num_deformable_group, out_h, out_w) (Zhu et al., 2019).")
