"""Deconvolution (1-D, 2-D, 3-D; groups, dilation, stride, pad, adj, target_shape; NC*
layouts, float32) forward and its data, weight and bias gradients, on the convolution plans:
a deconvolution is a convolution run backwards, its data the convolution's output.

MXNet's Deconvolution weight, (in_channels, num_filter / groups, *kernel), is that
convolution's weight as it stands, so no weight is transposed: the forward is the
convolution's data gradient, the data gradient its forward, the weight gradient its weight
gradient with the roles of data and output swapped. ``adj`` (or the ``adj`` a target_shape
implies) is the remainder oneDNN's output-size rule drops, so the padding stays symmetric."""

from __future__ import annotations

import numpy as np
from opsdk import assign, extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, target
from .convolution import covers, geometry, plan

PLEVEL = 20
FORWARD_WINS = 8
"""The least ``num_filter`` where oneDNN's forward was measured faster (bench/layers.py:
with 3 output channels its data-gradient convolution was twice ops-nn's time); the gradients
were faster at every shape measured."""


def pad_of(p, sizes) -> tuple:
    """Per spatial axis the padding: from ``target_shape`` where it gives the axis a
    (non-zero) size, else ``pad`` (MXNet's rule; its shape inference checks the rest)."""
    g = geometry(p)
    n = len(p.kernel)
    target_shape = tuple(p.target_shape) + (0,) * (n - len(p.target_shape))
    pads = []
    for size, k, s, dil, pad, want in zip(sizes, p.kernel, g.stride, g.dilate, g.pad,
                                          target_shape):
        if want:
            pads.append((s * (size - 1) + (k - 1) * (dil + 1) + 1 - want + 1) // 2)
        else:
            pads.append(pad)
    return tuple(pads)


def forward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    x, w, out = inputs[0], inputs[1], outputs[0]
    if not covers(p, *inputs):
        return False
    pl = plan(lib, "data", geometry(p, pad_of(p, x.shape[2:])), out.shape, w.shape, x.shape,
              False)
    if pl is None:
        return False
    res = target(out, req[0], inputs)
    pl.run({d.ARG_DIFF_SRC: res, d.ARG_WEIGHTS: w, d.ARG_DIFF_DST: x})
    if not p.no_bias:
        res += inputs[2].reshape((1, -1) + (1,) * (res.ndim - 2))
    finish(out, req[0], res)
    return True


def backward(lib, ctx, inputs, req, outputs, p):
    og, x, w = inputs
    if not covers(p, og, x, w):
        return False
    g = geometry(p, pad_of(p, x.shape[2:]))
    data_plan = plan(lib, "forward", g, og.shape, w.shape, x.shape, False) if req[0] else None
    weight_plan = plan(lib, "weight", g, og.shape, w.shape, x.shape, False) if req[1] else None
    if (req[0] and data_plan is None) or (req[1] and weight_plan is None):
        return False
    if req[0]:
        dx = target(outputs[0], req[0], inputs)
        data_plan.run({d.ARG_SRC: og, d.ARG_WEIGHTS: w, d.ARG_DST: dx})
        finish(outputs[0], req[0], dx)
    if req[1]:
        dw = target(outputs[1], req[1], inputs)
        weight_plan.run({d.ARG_SRC: og, d.ARG_DIFF_WEIGHTS: dw, d.ARG_DIFF_DST: x})
        finish(outputs[1], req[1], dw)
    if not p.no_bias and req[2]:
        assign(outputs[2], req[2], og.sum(axis=(0,) + tuple(range(2, og.ndim)),
                                          dtype=np.float32))
    return True


extend_op("Deconvolution").set_attr(
    KEY, kernel("Deconvolution", forward, lambda ctx, inputs, p: p.num_filter >= FORWARD_WINS),
    PLEVEL)
extend_op("_backward_Deconvolution").set_attr(KEY, kernel("_backward_Deconvolution", backward),
                                              PLEVEL)
