"""Correlation (FlowNet's correlation layer) of two NCHW feature maps.

Both inputs are zero-padded by ``pad_size``. Output position (i, j) anchors a
``kernel_size`` square patch at ``(y1, x1) = (i, j) * stride1 + max_displacement`` (its top-left
corner, as MXNet does) in data1; output channel ``t`` compares it with the data2 patch displaced
by ``((t // G - R), (t % G - R)) * stride2`` (``R = max_displacement // stride2``, ``G = 2R + 1``):
the mean over the patch and the channels of the product (``is_multiply``) or of the absolute
difference. The output is (N, G*G, ceil((H + 2 pad - 2 border) / stride1), same for W) with
``border = max_displacement + (kernel_size - 1) // 2``. The padded inputs, channels last, are
the hidden outputs ``tmp1`` and ``tmp2`` the backward reads.

Kernels loop over displacements and kernel taps, each step one strided product of whole maps.
"""

from __future__ import annotations

from math import ceil

from opsdk import Field, FloatOnly, Param, register_op
from pydantic import model_validator

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, out_entry, put,
                           result_shapes, same_type, set_shape)

OP = "Correlation"


class CorrelationParam(Param):
    kernel_size: int = Field(1, ge=0, description="Patch size (odd).")
    max_displacement: int = Field(1, ge=0, description="Largest displacement compared.")
    stride1: int = Field(1, ge=0, description="Step between patch anchors in data1.")
    stride2: int = Field(1, ge=0, description="Step between compared displacements in data2.")
    pad_size: int = Field(0, ge=0, description="Zero padding of both inputs on every side.")
    is_multiply: bool = Field(True, description="Compare by product (True) or by absolute "
                                                "difference (False).")

    @model_validator(mode="after")
    def _check(self):
        if self.kernel_size % 2 == 0:
            raise ValueError(f"kernel_size must be odd, got {self.kernel_size}")
        if self.stride1 < 1 or self.stride2 < 1:
            raise ValueError(f"stride1 and stride2 must be positive, got {self.stride1} and "
                             f"{self.stride2}")
        return self


def _geometry(p, height, width):
    """(top height, top width, grid radius R, grid width G) for a padded map."""
    border = p.max_displacement + (p.kernel_size - 1) // 2
    th = ceil((height + 2 * p.pad_size - 2 * border) / p.stride1)
    tw = ceil((width + 2 * p.pad_size - 2 * border) / p.stride1)
    r = p.max_displacement // p.stride2
    return th, tw, r, 2 * r + 1


def _shape(p, ins, outs):
    ins = list(ins)
    d1, d2 = ins
    for name, s in (("data1", d1), ("data2", d2)):
        if s is not None and len(s) != 4:
            fail(OP, f"input {name!r} should be 4-d (batch, channel, y, x), got {tuple(s)}")
    if d1 is None and d2 is not None:
        ins[0] = d1 = tuple(d2)
    if d1 is None:
        return ins, list(outs)
    set_shape(OP, ins, 1, tuple(d1), "input 'data2' (must match data1)")
    n, c, h, w = d1
    th, tw, _, g = _geometry(p, h, w)
    if th < 1 or tw < 1:
        fail(OP, f"data of spatial size {(h, w)} padded by {p.pad_size} is too small for "
                 f"max_displacement={p.max_displacement} and kernel_size={p.kernel_size}: "
                 f"output size would be {(th, tw)}")
    tmp = (n, h + 2 * p.pad_size, w + 2 * p.pad_size, c)
    return ins, result_shapes(OP, outs, [(n, g * g, th, tw), tmp, tmp],
                              ["output", "tmp1", "tmp2"])


def _pairs(p, th, tw):
    """(output channel, tap slices in padded data1, tap slices in padded data2) for every
    displacement and kernel tap."""
    _, _, r, g = _geometry(p, 0, 0)
    s1, md = p.stride1, p.max_displacement
    for t in range(g * g):
        dy, dx = (t // g - r) * p.stride2, (t % g - r) * p.stride2
        for kh in range(p.kernel_size):
            for kw in range(p.kernel_size):
                y, x = md + kh, md + kw
                a = (slice(y, y + s1 * (th - 1) + 1, s1), slice(x, x + s1 * (tw - 1) + 1, s1))
                b = (slice(y + dy, y + dy + s1 * (th - 1) + 1, s1),
                     slice(x + dx, x + dx + s1 * (tw - 1) + 1, s1))
                yield t, (Ellipsis,) + a, (Ellipsis,) + b


def _padded(xp, x, pad, dt):
    return xp.pad(x.astype(dt, copy=False), [(0, 0), (0, 0), (pad, pad), (pad, pad)])


def _forward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dt = compute_dtype(inputs[0].dtype)
    a, b = (_padded(xp, x, p.pad_size, dt) for x in inputs)
    out = outputs[0]
    n, channels, th, tw = out.shape
    acc = xp.zeros((n, channels, th, tw), dt)
    for t, sa, sb in _pairs(p, th, tw):
        pa, pb = a[sa], b[sb]
        acc[:, t] += (pa * pb if p.is_multiply else xp.abs(pa - pb)).sum(axis=1)
    put(out, req[0], acc / (p.kernel_size ** 2 * inputs[0].shape[1]))
    put(outputs[1], req[1], a.transpose(0, 2, 3, 1))
    put(outputs[2], req[2], b.transpose(0, 2, 3, 1))


def _backward(ctx, inputs, req, outputs, p):
    if not (req[0] or req[1]):
        return
    xp = ctx.xp
    dt = compute_dtype(inputs[0].dtype)
    og, a, b = (x.astype(dt, copy=False) for x in inputs)
    a, b = a.transpose(0, 3, 1, 2), b.transpose(0, 3, 1, 2)
    ga, gb = xp.zeros(a.shape, dt), xp.zeros(b.shape, dt)
    th, tw = og.shape[2:]
    og = og / (p.kernel_size ** 2 * a.shape[1])
    for t, sa, sb in _pairs(p, th, tw):
        g = og[:, t:t + 1]
        if p.is_multiply:
            ga[sa] += g * b[sb]
            gb[sb] += g * a[sa]
        else:
            sign = xp.where(a[sa] >= b[sb], 1, -1).astype(dt)
            ga[sa] += g * sign
            gb[sb] -= g * sign
    q = p.pad_size
    crop = (Ellipsis, slice(q, a.shape[2] - q), slice(q, a.shape[3] - q))
    put(outputs[0], req[0], ga[crop])
    put(outputs[1], req[1], gb[crop])


def _grad(node, og):
    n = backward_node(f"_backward_{OP}", node, [og[0], out_entry(node, 1), out_entry(node, 2)])
    return grad_entries(n, 2)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{OP}"
    q = p.pad_size
    data = next((tuple(o) for o in outs if o is not None), None)
    tmp = next((tuple(s) for s in ins[1:] if s is not None), None)
    if tmp is None and data is not None:
        tmp = (data[0], data[2] + 2 * q, data[3] + 2 * q, data[1])
    if tmp is None:
        return ins, outs
    n, ph, pw, c = tmp
    data = (n, c, ph - 2 * q, pw - 2 * q)
    th, tw, _, g = _geometry(p, data[2], data[3])
    for i, s in ((0, (n, g * g, th, tw)), (1, tmp), (2, tmp)):
        set_shape(op, ins, i, s, f"input {i}")
    for k in (0, 1):
        set_shape(op, outs, k, data, f"output {k}")
    return ins, outs


(register_op(OP)
    .describe("Correlation of two feature maps (FlowNet): for each data1 patch position and "
              "each displacement within max_displacement, the mean over the patch and the "
              "channels of data1 * data2 (or |data1 - data2|) at the displaced data2 patch.")
    .set_attr_parser(CorrelationParam)
    .set_num_inputs(2).set_num_outputs(3)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", lambda p: ["data1", "data2"])
    .set_attr("FListOutputNames", lambda p: ["output", "tmp1", "tmp2"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, ["data1", "data2"])))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(2, 2, 5, 5), (2, 2, 5, 5)], "params": {"max_displacement": 1,
                                                            "pad_size": 1}},
        {"inputs": [(1, 2, 6, 5), (1, 2, 6, 5)],
         "params": {"kernel_size": "3", "max_displacement": "2", "stride1": "2",
                    "stride2": "2", "pad_size": "2"}, "dtype": "float64"},
        {"inputs": [(1, 1, 4, 4), (1, 1, 4, 4)],
         "params": {"kernel_size": 3, "max_displacement": 1, "pad_size": 2,
                    "is_multiply": False}, "dtype": "float64"}])
    .add_argument("data1", "NDArray-or-Symbol", "First feature map, (batch, channel, y, x).")
    .add_argument("data2", "NDArray-or-Symbol", "Second feature map, same shape as data1."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of Correlation for both inputs, from the head gradient and the padded "
              "inputs tmp1, tmp2.")
    .set_attr_parser(CorrelationParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(2, 9, 5, 5), (2, 7, 7, 2), (2, 7, 7, 2)],
         "params": {"max_displacement": 1, "pad_size": 1}}]))
