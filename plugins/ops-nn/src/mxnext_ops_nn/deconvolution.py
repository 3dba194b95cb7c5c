"""Deconvolution (transposed convolution, 1-D/2-D/3-D): the data gradient of a convolution
run forward, with MXNet's ``adj`` and ``target_shape`` output sizing."""

from __future__ import annotations

from functools import lru_cache

from opsdk import Field, FloatOnly, register_op
from opsdk.shape import dim_known, dim_op
from pydantic import model_validator

from . import _conv_kernels as kern
from ._layer_rules import (backward_node, check_spatial, fail, grad_entries, put, result_shapes,
                           same_type, set_shape, spatial)
from .convolution import (ConvolutionParam, backward_shape, bias_grad, check_data, geometry,
                          input_names, space, _temp_space)

OP = "Deconvolution"


class DeconvolutionParam(ConvolutionParam):
    kernel: tuple[int, ...] = Field(description="Window extent per spatial axis, (w,), (h, w) "
                                                "or (d, h, w): that of the convolution being "
                                                "transposed.")
    adj: tuple[int, ...] = Field((), description="Extra output length per spatial axis, each "
                                                 "below the stride; derived from target_shape "
                                                 "instead when that is given.")
    target_shape: tuple[int, ...] = Field((), description="Wanted output spatial size, (w,), "
                                                          "(h, w) or (d, h, w); pad and adj "
                                                          "follow from it.")
    num_filter: int = Field(ge=1, description="Count of output channels.")
    workspace: int = Field(512, ge=0, description="Scratch memory cap in MB (accepted, not "
                                                  "needed on cpu).")
    no_bias: bool = Field(True, description="Leave out the bias input.")

    @model_validator(mode="after")
    def _spatial(self):
        check_spatial(self.kernel, {"stride": self.stride, "dilate": self.dilate, "pad": self.pad,
                                    "adj": self.adj, "target_shape": self.target_shape},
                      positive=("kernel", "stride", "dilate"))
        return self


@lru_cache(maxsize=1024)
def _pad_adj(p, sizes):
    """Per-dim (pad, adj) for input spatial ``sizes`` (MXNet's InferPad): from
    ``target_shape`` where it is given (non-zero), else from ``pad``/``adj``."""
    stride, dilate, pad = geometry(p)
    adj = spatial(p.adj, len(p.kernel), 0)
    target = spatial(p.target_shape, len(p.kernel), 0)
    pads, adjs = [], []
    for i, (n, k, s, d) in enumerate(zip(sizes, p.kernel, stride, dilate)):
        if target[i] and dim_known(n):
            total = s * (n - 1) + (k - 1) * d + 1 - target[i]
            if total < 0:
                fail(OP, f"target_shape {p.target_shape} is too big for input size {n} on "
                         f"spatial axis {i}")
            pads.append((total + 1) // 2)
            adjs.append(total % 2)
        else:
            pads.append(pad[i])
            adjs.append(adj[i])
        if adjs[-1] > s - 1:
            fail(OP, f"adj={adjs[-1]} on spatial axis {i} must be smaller than stride={s}")
    return tuple(pads), tuple(adjs)


def deconv_out_shape(op, p, x):
    """The output shape for data ``x``; a spatial size stays unknown where the data's is."""
    stride, dilate, _ = geometry(p)
    pads, adjs = _pad_adj(p, tuple(x[2:]))
    out = tuple(dim_op(lambda n: s * (n - 1) + (k - 1) * d + 1 - 2 * q + a, n)
                for n, k, s, d, q, a in zip(x[2:], p.kernel, stride, dilate, pads, adjs))
    if any(dim_known(n) and o <= 0 for n, o in zip(x[2:], out)):
        fail(op, f"output spatial size {out} is not positive (data {x}, pad {pads})")
    return (x[0], p.num_filter) + out


def _shape(p, ins, outs):
    ins = list(ins)
    x = ins[0]
    if x is None:
        return ins, list(outs)
    check_data(OP, p, x)
    set_shape(OP, ins, 1, (x[1], p.num_filter // p.num_group) + p.kernel, "input 'weight'")
    if not p.no_bias:
        set_shape(OP, ins, 2, (p.num_filter,), "input 'bias'")
    return ins, result_shapes(OP, outs, [deconv_out_shape(OP, p, x)])


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    x, w, out = inputs[0], inputs[1], outputs[0]
    stride, dilate, _ = geometry(p)
    pads, _ = _pad_adj(p, x.shape[2:])
    kern.conv_data_grad(x, w, stride, dilate, pads, p.num_group, out, req[0], space(ctx))
    if not p.no_bias:
        out += inputs[2].reshape((1, -1) + (1,) * (out.ndim - 2)).astype(out.dtype, copy=False)


def _backward(ctx, inputs, req, outputs, p):
    og, x, w = inputs
    stride, dilate, _ = geometry(p)
    pads, _ = _pad_adj(p, x.shape[2:])
    if req[1]:
        put(outputs[1], req[1], kern.conv_weight_grad(x, og, w.shape, stride, dilate, pads,
                                                      p.num_group, space(ctx)))
    if not p.no_bias and req[2]:
        put(outputs[2], req[2], bias_grad(og))
    if req[0]:
        kern.conv_forward(og, w, stride, dilate, pads, pads, p.num_group, outputs[0], req[0],
                          space(ctx))


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[0], node.inputs[1]])
    return grad_entries(n, len(node.inputs))


(register_op(OP).add_alias("_npx_deconvolution")
    .describe("Transposed convolution in 1-D, 2-D or 3-D, i.e. a convolution's data gradient "
              "run forward, of data with weight (in_channels, num_filter/num_group, *kernel), "
              "plus bias; output size stride*(in-1) + dilated kernel - 2*pad + adj, or "
              "target_shape.")
    .set_attr_parser(DeconvolutionParam)
    .set_num_inputs(lambda p: 2 if p.no_bias else 3).set_num_outputs(1)
    .set_attr("FListInputNames", input_names)
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, input_names)))
    .set_attr("FResourceRequest", _temp_space)
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4), (3, 2, 3), (2,)],
         "params": {"kernel": (3,), "num_filter": 2, "stride": (2,), "adj": (1,),
                    "no_bias": False}},
        {"inputs": [(2, 4, 3, 3), (4, 3, 3, 3)],
         "params": {"kernel": "(3, 3)", "num_filter": 6, "num_group": 2, "stride": (2, 2),
                    "pad": (1, 1), "workspace": "512", "cudnn_tune": "None"}},
        {"inputs": [(1, 2, 3, 4), (2, 2, 2, 3), (2,)],
         "params": {"kernel": (2, 3), "num_filter": 2, "dilate": (2, 1), "no_bias": "False",
                    "target_shape": (5, 6)}},
        {"inputs": [(2, 2, 2, 3, 2), (2, 1, 2, 2, 2)],
         "params": {"kernel": (2, 2, 2), "num_filter": 1, "stride": (1, 2, 1)}},
        {"inputs": [(2, 3, 5, 4), (3, 2, 3, 3)],
         "params": {"kernel": (3, 3), "num_filter": 2, "pad": (1, 1)}}])
    .add_argument("data", "NDArray-or-Symbol", "Input, (batch, in_channels, *spatial).")
    .add_argument("weight", "NDArray-or-Symbol",
                  "Filters, (in_channels, num_filter/num_group, *kernel).")
    .add_argument("bias", "NDArray-or-Symbol", "Per-channel offset (absent with no_bias)."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Deconvolution wrt data, weight and bias, from the output gradient, "
              "the data and the weight.")
    .set_attr_parser(DeconvolutionParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(lambda p: 2 if p.no_bias else 3)
    .set_attr("FInferShape", backward_shape(f"_backward_{OP}", deconv_out_shape))
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FResourceRequest", _temp_space)
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 10), (2, 3, 4), (3, 2, 3)],
         "params": {"kernel": (3,), "num_filter": 2, "stride": (2,), "adj": (1,),
                    "no_bias": False}}]))
