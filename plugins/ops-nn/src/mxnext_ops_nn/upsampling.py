"""UpSampling of 4-d data: nearest neighbour (1..num_args inputs, each repeated to the first
one's size times scale, then concatenated along the channels or summed) or bilinear (as
MXNet: a depthwise Deconvolution of the data with a (C, 1, k, k) weight input, k = 2*scale -
scale%2, stride scale, pad ceil((scale-1)/2)).
"""

from __future__ import annotations

from math import ceil
from typing import Literal

from opsdk import Field, FloatOnly, Param, ResourceRequest, register_op

from . import _conv_kernels as kern
from ._layer_rules import (backward_node, fail, grad_entries, init_attrs, put, result_shapes,
                           same_type, set_shape)

OP = "UpSampling"


class UpSamplingParam(Param):
    scale: int = Field(ge=1, description="Integer factor by which height and width grow.")
    num_filter: int = Field(0, description="bilinear only: the data's channel count, as the "
                                           "underlying deconvolution needs it.")
    sample_type: Literal["nearest", "bilinear"] = Field(description="Interpolation kind.")
    multi_input_mode: Literal["concat", "sum"] = Field(
        "concat", description="How several nearest-neighbour inputs combine once resized: "
                              "stacked along the channels ('concat') or added ('sum').")
    num_args: int = Field(ge=1, description="Input count. nearest: any number, each resized to "
                                            "the first input's size times scale. bilinear: 2, "
                                            "the data and the weight.")
    workspace: int = Field(512, ge=0, description="Scratch memory cap in MB for the "
                                                  "deconvolution (accepted, not needed on cpu).")


def _bilinear(p):
    return p.sample_type == "bilinear"


def _n_in(p):
    return 2 if _bilinear(p) else p.num_args


def _input_names(p):
    return ["data", "weight"] if _bilinear(p) else [f"arg{i}" for i in range(p.num_args)]


def kernel_size(scale):
    return 2 * scale - scale % 2


def _deconv_geometry(p):
    """(stride, pad) of the bilinear deconvolution (its kernel: kernel_size(scale))."""
    return (p.scale, p.scale), (ceil((p.scale - 1) / 2),) * 2


def _shape(p, ins, outs):
    ins = list(ins)
    x = ins[0]
    if x is None:
        return ins, list(outs)
    names = _input_names(p)
    if len(x) != 4:
        fail(OP, f"input {names[0]!r} should be 4-d (batch, channel, y, x), got {tuple(x)}")
    oh, ow = x[2] * p.scale, x[3] * p.scale
    if _bilinear(p):
        if p.num_filter != x[1]:
            fail(OP, f"bilinear upsampling needs num_filter equal to the data's channels "
                     f"{x[1]}, got num_filter={p.num_filter}")
        k = kernel_size(p.scale)
        set_shape(OP, ins, 1, (x[1], 1, k, k), "input 'weight'")
        return ins, result_shapes(OP, outs, [(x[0], x[1], oh, ow)])
    if any(s is None for s in ins):
        return ins, list(outs)
    channels = 0
    for name, s in zip(names, ins):
        if len(s) != 4:
            fail(OP, f"input {name!r} should be 4-d (batch, channel, y, x), got {tuple(s)}")
        if oh % s[2] or ow % s[3]:
            fail(OP, f"input {name!r} of spatial size {tuple(s[2:])} does not divide the "
                     f"output size {(oh, ow)}")
        if p.multi_input_mode == "sum" and s[1] != x[1]:
            fail(OP, f"multi_input_mode='sum' needs equal channel counts, input {name!r} has "
                     f"{s[1]}, arg0 has {x[1]}")
        channels = x[1] if p.multi_input_mode == "sum" else channels + s[1]
    return ins, result_shapes(OP, outs, [(x[0], channels, oh, ow)])


def _nearest(x, s):
    n, c, h, w = x.shape
    return x[:, :, :, None, :, None].repeat(s, axis=3).repeat(s, axis=5).reshape(n, c, h * s,
                                                                                    w * s)


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    out = outputs[0]
    if _bilinear(p):
        stride, pad = _deconv_geometry(p)
        kern.conv_data_grad(inputs[0], inputs[1], stride, (1, 1), pad, p.num_filter, out,
                            req[0], ctx.requested[0].get_space)
        return
    oh = out.shape[2]
    if p.multi_input_mode == "sum":
        total = sum(_nearest(x, oh // x.shape[2]) for x in inputs)
        put(out, req[0], total)
        return
    start = 0
    for x in inputs:
        put(out[:, start:start + x.shape[1]], req[0], _nearest(x, oh // x.shape[2]))
        start += x.shape[1]


def _backward(ctx, inputs, req, outputs, p):
    og = inputs[0]
    if _bilinear(p):
        x, w = inputs[1], inputs[2]
        stride, pad = _deconv_geometry(p)
        get = ctx.requested[0].get_space
        if req[1]:
            put(outputs[1], req[1], kern.conv_weight_grad(x, og, w.shape, stride, (1, 1), pad,
                                                          p.num_filter, get))
        if req[0]:
            kern.conv_forward(og, w, stride, (1, 1), pad, pad, p.num_filter, outputs[0],
                              req[0], get)
        return
    start = 0
    for k, gx in enumerate(outputs):
        n, c, h, w = gx.shape
        s = og.shape[2] // h
        part = og if p.multi_input_mode == "sum" else og[:, start:start + c]
        put(gx, req[k], part.reshape(n, c, h, s, w, s).sum(axis=(3, 5)))
        start += c


def _grad(node, og):
    p = node.params
    if _bilinear(p):
        reads = [og[0], node.inputs[0], node.inputs[1]]
    else:     # one input: shapes follow from the head; several: they need the inputs' shapes
        reads = [og[0]] + (list(node.inputs) if p.num_args > 1 else [])
    return grad_entries(backward_node(f"_backward_{OP}", node, reads), len(node.inputs))


def _backward_n_in(p):
    return 3 if _bilinear(p) else (1 if p.num_args == 1 else 1 + p.num_args)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if _bilinear(p) or p.num_args > 1:
        for k in range(len(outs)):
            if ins[k + 1] is not None:
                set_shape(f"_backward_{OP}", outs, k, ins[k + 1], f"output {k}")
            elif outs[k] is not None:
                ins[k + 1] = tuple(outs[k])
        return ins, outs
    g = ins[0]
    if g is None and outs[0] is not None:
        n, c, h, w = outs[0]
        ins[0] = (n, c, h * p.scale, w * p.scale)
    elif g is not None:
        if g[2] % p.scale or g[3] % p.scale:
            fail(f"_backward_{OP}", f"head gradient {tuple(g)} is not a multiple of "
                                    f"scale={p.scale}")
        set_shape(f"_backward_{OP}", outs, 0, (g[0], g[1], g[2] // p.scale, g[3] // p.scale),
                  "output 0")
    return ins, outs


def _resources(p):
    return [ResourceRequest.TEMP_SPACE] if _bilinear(p) else []


(register_op(OP)
    .describe("Upsamples 4-d data by an integer scale: nearest neighbour (several inputs are "
              "brought to the first one's size times scale, then concatenated or summed) or "
              "bilinear (a depthwise deconvolution with a weight input).")
    .set_attr_parser(UpSamplingParam)
    .set_num_inputs(_n_in).set_num_outputs(1)
    .set_attr("key_var_num_args", "num_args")
    .set_attr("FListInputNames", _input_names)
    .set_attr("FSetInputVarAttrOnCompose", init_attrs({1: '["bilinear", {}]'}))
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, _input_names)))
    .set_attr("FResourceRequest", _resources)
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 2, 3)], "params": {"scale": 2, "sample_type": "nearest",
                                              "num_args": 1}},
        {"inputs": [(1, 2, 2, 2), (1, 3, 4, 4)],
         "params": {"scale": "2", "sample_type": "nearest", "num_args": "2"}},
        {"inputs": [(1, 2, 2, 2), (1, 2, 1, 1)],
         "params": {"scale": 3, "sample_type": "nearest", "num_args": 2,
                    "multi_input_mode": "sum"}},
        {"inputs": [(2, 3, 3, 2), (3, 1, 4, 4)],
         "params": {"scale": 2, "sample_type": "bilinear", "num_filter": 3, "num_args": 2,
                    "workspace": "512"}},
        {"inputs": [(1, 2, 2, 2), (2, 1, 5, 5)],
         "params": {"scale": 3, "sample_type": "bilinear", "num_filter": 2, "num_args": 2}}])
    .add_argument("data", "NDArray-or-Symbol[]", "The 4-d inputs (nearest), or the data then "
                  "the weight (bilinear)."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of UpSampling: window sums of the output gradient (nearest) or the "
              "deconvolution's gradients (bilinear).")
    .set_attr_parser(UpSamplingParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(_backward_n_in).set_num_outputs(_n_in)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FResourceRequest", _resources)
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4, 6)], "params": {"scale": 2, "sample_type": "nearest",
                                              "num_args": 1}},
        {"inputs": [(2, 3, 6, 4), (2, 3, 3, 2), (3, 1, 4, 4)],
         "params": {"scale": 2, "sample_type": "bilinear", "num_filter": 3, "num_args": 2}}]))
