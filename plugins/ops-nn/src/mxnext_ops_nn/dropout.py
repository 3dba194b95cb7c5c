"""Dropout: outputs ``data * mask`` and the mask (0 or 1/(1-p) per element, or per slice
along ``axes``; NaN everywhere when p == 1, as MXNet's 0 * 1/0), drawn from the PARALLEL_RANDOM
resource when training (or always, mode='always'); otherwise the identity with a mask of
ones. The backward multiplies by the mask."""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, NodeEntry, Param, ResourceRequest, make_node, register_op

from ._layer_rules import (backward_node, grad_entries, norm_axis, out_entry, put,
                           result_shapes, same_type, set_shape, set_type)

OP = "Dropout"


class DropoutParam(Param):
    p: float = Field(0.5, ge=0, le=1, description="Probability that an element is zeroed.")
    mode: Literal["training", "always"] = Field(
        "training", description="'training' drops only in training mode; 'always' drops in "
                                "inference too.")
    axes: tuple[int, ...] = Field((), description="Axes along which one mask value is shared "
                                                  "(variational dropout).")
    cudnn_off: bool | None = Field(False, description="Avoid the cuDNN implementation "
                                                      "(ignored on cpu).")


def _mask_shape(p, shape):
    shared = {norm_axis(OP, a, len(shape), "axes entry") for a in p.axes}
    return tuple(1 if i in shared else n for i, n in enumerate(shape))


def _shape(p, ins, outs):
    x = ins[0] if ins[0] is not None else outs[0]
    if x is None:
        return list(ins), list(outs)
    return [tuple(x)], result_shapes(OP, outs, [tuple(x), _mask_shape(p, tuple(x))],
                                     ["output", "mask"])


def _type(p, ins, outs):
    ins, outs = list(ins), list(outs)
    t = next((v for v in ins + outs if v is not None), None)
    if t is not None:
        set_type(OP, ins, 0, t, "input 'data'")
        set_type(OP, outs, 0, t, "output 'output'")
        set_type(OP, outs, 1, t, "output 'mask'")
    return ins, outs


def _forward(ctx, inputs, req, outputs, p):
    if not req[0]:
        return
    x, out, mask = inputs[0], outputs[0], outputs[1]
    keep = 1.0 - p.p
    if keep < 1 and (ctx.is_train or p.mode == "always"):
        keep32 = np.float32(1) - np.float32(p.p)      # MXNet's pkeep, whatever the dtype
        draw = _keep(ctx, mask.shape, x.dtype, p, keep32)
        # p == 1: MXNet's mask is 0 * (1/0), NaN, and so are the output and the gradient
        m = (draw * (np.float32(1) / keep32) if keep > 0
             else ctx.xp.full(mask.shape, np.nan)).astype(x.dtype)
        put(mask, req[1], m)
        put(out, req[0], x * m)
    else:
        put(mask, req[1], ctx.xp.ones(mask.shape, mask.dtype))
        if req[0] != 2:           # in place: the output already is the data
            put(out, req[0], x)


def _keep(ctx, shape, dtype, p, keep32):
    """Which mask entries are kept. On MXNet's CPU streams, its kernels' rule: a float32
    uniform ``u`` per entry, kept where ``u <= keep32`` (``u < keep32`` with ``axes``), so a
    seed gives MXNet's masks."""
    streams = ctx.requested[0].get_parallel_random()
    if streams is None:
        return ctx.requested[0].get_random().random(shape) < 1.0 - p.p
    u = streams.uniform(int(np.prod(shape, dtype=np.int64)), dtype).astype(np.float32)
    return (u < keep32 if p.axes else u <= keep32).reshape(shape)


def _backward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], inputs[0] * inputs[1])


def _grad(node, og):
    return grad_entries(backward_node(f"_backward_{OP}", node, [og[0], out_entry(node, 1)]), 1)


def _backward_grad(node, og):
    """Second order, as MXNet: the head gradient is masked again; the mask gets zeros."""
    again = backward_node(f"_backward_{OP}", node, [og[0], node.inputs[1]])
    return [NodeEntry(again, 0, 0), NodeEntry(make_node("zeros_like", [node.inputs[1]]), 0, 0)]


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    g = next((s for s in (ins[0], outs[0]) if s is not None), None)
    if g is not None:
        set_shape(f"_backward_{OP}", ins, 0, g, "input 'ograd'")
        set_shape(f"_backward_{OP}", outs, 0, g, "output 0")
        set_shape(f"_backward_{OP}", ins, 1, _mask_shape(p, tuple(g)), "input 'mask'")
    return ins, outs


def _random(p):
    return [ResourceRequest.PARALLEL_RANDOM] if p.p > 0 else []      # MXNet's CPU streams


(register_op(OP).add_alias("_npx_dropout")
    .describe("Dropout: when training (or mode='always'), each element (each slice "
              "along axes) is zeroed with probability p and the rest are scaled by 1/(1-p); "
              "otherwise the identity. Second (hidden) output: the mask.")
    .set_attr_parser(DropoutParam)
    .set_num_inputs(1).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "mask"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(_type))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FResourceRequest", _random)
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(4, 5)]},
        {"inputs": [(3, 4, 5)], "params": {"p": "0.3", "axes": "(1,)", "cudnn_off": "None"}},
        {"inputs": [(3, 4)], "params": {"p": 0.0}},
        {"inputs": [(2, 3)], "params": {"p": 1.0}},
        {"inputs": [(3, 4)], "params": {"p": 0.2, "mode": "always", "axes": (0, -1)}}])
    .add_argument("data", "NDArray-or-Symbol", "Array to drop elements from."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Dropout: the output gradient times the mask.")
    .set_attr_parser(DropoutParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("FGradient", _backward_grad)
    .set_attr("TExamples", [{"inputs": [(3, 4, 5), (3, 1, 5)], "params": {"axes": (1,)},
                             "grad": [0]}]))
