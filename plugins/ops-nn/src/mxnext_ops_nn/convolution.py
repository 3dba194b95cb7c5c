"""Convolution (1-D, 2-D, 3-D, grouped, dilated) and its backward, on the im2col + GEMM
kernels of ``_conv_kernels``. Kernel taps that only ever read padding (``opsdk.shape.
used_taps``: a 3x3 kernel over a 1x1 image) are cut off first; they add nothing."""

from __future__ import annotations

from functools import lru_cache
from typing import Literal

from opsdk import AMP_FLOAT_DTYPES, Field, FloatOnly, Param, ResourceRequest, register_op
from opsdk.shape import dim_known, dim_op, unknown_dim, used_taps
from pydantic import model_validator

from . import _conv_kernels as kern
from ._layer_rules import (backward_node, check_spatial, fail, grad_entries, put, result_shapes,
                           same_type, set_shape, spatial)

OP = "Convolution"
_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}
_AXES = {1: "(batch, channel, width)", 2: "(batch, channel, height, width)",
         3: "(batch, channel, depth, height, width)"}


class ConvolutionParam(Param):
    kernel: tuple[int, ...] = Field(
        description="Window extent per spatial axis: (w,), (h, w) or (d, h, w).")
    stride: tuple[int, ...] = Field(
        (), description="Step between window positions per spatial axis, (w,), (h, w) or "
                        "(d, h, w); empty means 1 everywhere.")
    dilate: tuple[int, ...] = Field(
        (), description="Spacing between kernel taps per spatial axis, (w,), (h, w) or "
                        "(d, h, w); empty means 1 everywhere.")
    pad: tuple[int, ...] = Field(
        (), description="Zeros added on both sides of each spatial axis, (w,), (h, w) or "
                        "(d, h, w); empty means none.")
    num_filter: int = Field(ge=1, description="Count of output channels.")
    num_group: int = Field(1, ge=1, description="Split the channels into this many groups "
                                                "that are convolved independently.")
    workspace: int = Field(1024, ge=0, description="Scratch memory cap in MB (accepted, not "
                                                   "needed on cpu).")
    no_bias: bool = Field(False, description="Leave out the bias input.")
    cudnn_tune: Literal["off", "limited_workspace", "fastest"] | None = Field(
        None, description="How cuDNN benchmarks its algorithms before choosing one "
                          "(accepted, ignored on cpu).")
    cudnn_off: bool = Field(False, description="Avoid cuDNN for this op (ignored on cpu).")
    layout: Literal["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"] | None = Field(
        None, description="Axis order of data, weight and output; None picks NCW, NCHW or "
                          "NCDHW by kernel rank, and those are all cpu supports.")

    @model_validator(mode="after")
    def _spatial(self):
        check_spatial(self.kernel, {"stride": self.stride, "dilate": self.dilate, "pad": self.pad},
                      positive=("kernel", "stride", "dilate"))
        return self


@lru_cache(maxsize=1024)
def geometry(p):
    """(stride, dilate, pad) with MXNet's defaults filled in."""
    n = len(p.kernel)
    return spatial(p.stride, n, 1), spatial(p.dilate, n, 1), spatial(p.pad, n, 0)


def input_names(p):
    return ["data", "weight"] if p.no_bias else ["data", "weight", "bias"]


def check_data(op, p, x):
    """The data shape fits the kernel's dimensionality, layout and groups."""
    nd = len(p.kernel)
    want = _LAYOUTS[nd]
    if p.layout is not None and p.layout != want:
        fail(op, f"layout {p.layout!r} is not supported on cpu for a {nd}-d kernel "
                 f"(only {want!r}, as in MXNet)")
    if len(x) != nd + 2:
        fail(op, f"data should be {nd + 2}-d {_AXES[nd]} for kernel {p.kernel}, got shape {x}")
    if dim_known(x[1]) and x[1] % p.num_group:
        fail(op, f"data has {x[1]} channels, not divisible by num_group={p.num_group}")
    if p.num_filter % p.num_group:
        fail(op, f"num_filter={p.num_filter} is not divisible by num_group={p.num_group}")


def conv_out_shape(op, p, x):
    """The output shape for data ``x``; a spatial size stays unknown where the data's is."""
    stride, dilate, pad = geometry(p)
    out = []
    for i, (n, k, s, d, q) in enumerate(zip(x[2:], p.kernel, stride, dilate, pad)):
        dk = (k - 1) * d + 1
        if dim_known(n) and dk > n + 2 * q:
            fail(op, f"kernel size {dk} (dilated) exceeds input {n} padded to {n + 2 * q} "
                     f"on spatial axis {i}")
        out.append(dim_op(lambda n: (n + 2 * q - dk) // s + 1, n))
    return (x[0], p.num_filter) + tuple(out)


def _data_from_output(p, out, w):
    """The data shape the output and weight imply, as far as they do: MXNet fills the batch
    and, at stride 1, the spatial sizes back from the output (the channels come from a known
    weight)."""
    if out is None or len(out) != len(p.kernel) + 2:
        return None
    stride, dilate, pad = geometry(p)
    u = unknown_dim()
    sp = tuple(o + (k - 1) * d - 2 * q if s == 1 and dim_known(o) else u
               for o, k, s, d, q in zip(out[2:], p.kernel, stride, dilate, pad))
    c = w[1] * p.num_group if w is not None and dim_known(w[1]) else u
    return (out[0], c) + sp


def _shape(p, ins, outs):
    ins = list(ins)
    set_shape(OP, ins, 0, _data_from_output(p, outs[0], ins[1]), "input 'data'")
    x = ins[0]
    if x is None:
        return ins, list(outs)
    check_data(OP, p, x)
    set_shape(OP, ins, 1, (p.num_filter, dim_op(lambda c: c // p.num_group, x[1])) + p.kernel,
              "input 'weight'")
    if not p.no_bias:
        set_shape(OP, ins, 2, (p.num_filter,), "input 'bias'")
    outs = result_shapes(OP, outs, [conv_out_shape(OP, p, x)])
    set_shape(OP, ins, 0, _data_from_output(p, outs[0], ins[1]), "input 'data'")
    return ins, outs


def space(ctx):
    """Scratch memory of the op's TEMP_SPACE resource."""
    return ctx.requested[0].get_space


def _temp_space(p):
    return [ResourceRequest.TEMP_SPACE]


def _cut(p, x_shape, symmetric=False):
    """(taps, lo, hi) of the convolution with the kernel cut to the taps that read data (see
    ``used_taps``), or None (also where the cut pads unevenly and ``symmetric`` asks)."""
    stride, dilate, pad = geometry(p)
    axes = used_taps(tuple(x_shape[2:]), tuple(p.kernel), stride, dilate, pad)
    if axes is None or (symmetric and any(lo != hi or lo < 0 for _, _, lo, hi in axes)):
        return None
    taps = (slice(None), slice(None)) + tuple(slice(t0, t1) for t0, t1, _, _ in axes)
    return taps, tuple(a[2] for a in axes), tuple(a[3] for a in axes)


def _forward(ctx, inputs, req, outputs, p):
    if req[0]:
        stride, dilate, pad = geometry(p)
        w, lo, hi = inputs[1], pad, pad
        cut = _cut(p, inputs[0].shape)
        if cut is not None:
            taps, lo, hi = cut
            w = w[taps]
        kern.conv_forward(inputs[0], w, stride, dilate, lo, hi, p.num_group,
                          outputs[0], req[0], space(ctx), None if p.no_bias else inputs[2])


def bias_grad(og):
    return og.reshape(og.shape[0], og.shape[1], -1).sum(axis=2).sum(axis=0)


def _backward(ctx, inputs, req, outputs, p):
    og, x, w = inputs
    stride, dilate, pad = geometry(p)
    taps, cut = None, _cut(p, x.shape, symmetric=True)
    if cut is not None:
        taps, pad, _ = cut
    wc = w if taps is None else w[taps]
    if req[1]:
        gw = kern.conv_weight_grad(og, x, wc.shape, stride, dilate, pad, p.num_group,
                                   space(ctx))
        if taps is None:
            put(outputs[1], req[1], gw)
        else:                                   # the cut taps' gradient is zero
            if req[1] != 3:
                outputs[1][...] = 0
            put(outputs[1][taps], req[1], gw)
    if not p.no_bias and req[2]:
        put(outputs[2], req[2], bias_grad(og))
    if req[0]:
        kern.conv_data_grad(og, wc, stride, dilate, pad, p.num_group, outputs[0], req[0],
                            space(ctx))


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[0], node.inputs[1]])
    return grad_entries(n, len(node.inputs))


def backward_shape(op, head_shape):
    """FInferShape of (head gradient, data, weight) -> (data, weight[, bias]) gradients;
    ``head_shape(op, p, data_shape)`` is the forward output's shape."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        if ins[1] is not None:
            set_shape(op, ins, 0, head_shape(op, p, ins[1]), "head gradient")
        new = [ins[1], ins[2]] + ([] if p.no_bias else [(p.num_filter,)])
        for k, s in enumerate(new):
            if s is not None:
                set_shape(op, outs, k, s, f"output {k}")
        for k in (0, 1):
            if outs[k] is not None:
                set_shape(op, ins, k + 1, outs[k], f"input {k + 1}")
        return ins, outs
    return infer


_EXAMPLES = [
    {"inputs": [(2, 3, 7), (4, 3, 3), (4,)], "params": {"kernel": "(3,)", "num_filter": "4"}},
    {"inputs": [(2, 4, 5, 6), (6, 2, 3, 3), (6,)],
     "params": {"kernel": (3, 3), "num_filter": 6, "num_group": 2, "pad": (1, 1),
                "stride": (2, 1)}},
    {"inputs": [(1, 2, 6, 5), (3, 2, 2, 3)],
     "params": {"kernel": "(2, 3)", "num_filter": 3, "dilate": "(2, 1)", "no_bias": "True",
                "workspace": "1024", "cudnn_tune": "None", "cudnn_off": "False"}},
    {"inputs": [(2, 2, 3, 4, 3), (2, 2, 2, 2, 2), (2,)],
     "params": {"kernel": (2, 2, 2), "num_filter": 2, "pad": (1, 0, 1), "layout": "NCDHW"}},
    {"inputs": [(2, 3, 4, 4), (5, 3, 1, 1), (5,)], "params": {"kernel": (1, 1), "num_filter": 5}},
    {"inputs": [(3, 4, 5, 6), (4, 4, 3, 3), (4,)],          # in place (as large as the data)
     "params": {"kernel": (3, 3), "num_filter": 4, "pad": (1, 1)}},
    {"inputs": [(2, 8, 8, 8), (8, 8, 3, 3), (8,)],          # in place, the Winograd path
     "params": {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1)}},
]

(register_op(OP).add_alias("_npx_convolution")
    .describe("1-D, 2-D or 3-D cross-correlation of data with the weight filters, plus bias; "
              "supports stride, dilation, zero padding and grouped channels.")
    .set_attr_parser(ConvolutionParam)
    .set_num_inputs(lambda p: 2 if p.no_bias else 3).set_num_outputs(1)
    .set_attr("FListInputNames", input_names)
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, input_names), accepted=AMP_FLOAT_DTYPES))
    .set_attr("FResourceRequest", _temp_space)
    # output item b depends on data item b only, and each chunk of items is read whole into
    # scratch before its outputs are written: in place where both have the same size
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", _EXAMPLES)
    .add_argument("data", "NDArray-or-Symbol", "Input, (batch, channel, *spatial).")
    .add_argument("weight", "NDArray-or-Symbol",
                  "Filters, (num_filter, channel/num_group, *kernel).")
    .add_argument("bias", "NDArray-or-Symbol", "Per-channel offset (absent with no_bias)."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Convolution wrt data, weight and bias, from the output gradient, "
              "the data and the weight.")
    .set_attr_parser(ConvolutionParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(lambda p: 2 if p.no_bias else 3)
    .set_attr("FInferShape", backward_shape(f"_backward_{OP}", conv_out_shape))
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FResourceRequest", _temp_space)
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 6, 3, 6), (2, 4, 5, 6), (6, 2, 3, 3)],
         "params": {"kernel": (3, 3), "num_filter": 6, "num_group": 2, "pad": (1, 1),
                    "stride": (2, 1)}},
        {"inputs": [(2, 4, 5), (2, 3, 7), (4, 3, 3)],
         "params": {"kernel": (3,), "num_filter": 4, "no_bias": True}}]))
