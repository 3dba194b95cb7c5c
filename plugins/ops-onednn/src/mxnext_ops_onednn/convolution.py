"""Convolution (1-D, 2-D, 3-D; groups, dilation, stride, padding; NC* layouts, float32)
forward, data gradient and weight gradient on oneDNN, outranking ops-nn's kernels."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from opsdk import extend_op
from opsdk.shape import used_taps

from . import _dnnl as d
from ._dispatch import KEY, below, calls, finish, kernel, part_wins, plain_f32, target, wins
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd, dims_of

PLEVEL = 20
_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


class Geometry(NamedTuple):
    """What a convolution primitive is made of besides its shapes: per spatial axis the
    stride, the dilation counted from 0 (oneDNN's) and the padding of both ends; and the
    groups."""
    stride: tuple
    dilate: tuple
    pad: tuple
    groups: int


def geometry(p, pad=None) -> Geometry:
    """``p``'s geometry, MXNet's defaults filled in; ``pad`` replaces ``p.pad`` (a
    Deconvolution's comes from its target_shape)."""
    n = len(p.kernel)
    dilate = p.dilate or (1,) * n
    return Geometry(tuple(p.stride or (1,) * n), tuple(x - 1 for x in dilate),
                    tuple(pad if pad is not None else p.pad or (0,) * n), p.num_group)


def covers(p, *arrays) -> bool:
    nd = len(p.kernel)
    return nd in _LAYOUTS and p.layout in (None, _LAYOUTS[nd]) and plain_f32(*arrays)


def _weight_dims(w_shape, groups):
    f, cg = w_shape[:2]
    if groups == 1:
        return tuple(w_shape)
    return (groups, f // groups, cg) + tuple(w_shape[2:])


def _descs(lib, x_shape, w_shape, y_shape, groups, any: bool):
    return (Desc(lib, x_shape, any), Desc(lib, _weight_dims(w_shape, groups), any),
            Desc(lib, y_shape, any))


def _geo_dims(g: Geometry):
    return dims_of(g.stride), dims_of(g.dilate), dims_of(g.pad), dims_of(g.pad)


def _forward_pd(lib, g, x_shape, w_shape, y_shape, bias: bool, attr=None):
    x, w, y = _descs(lib, x_shape, w_shape, y_shape, g.groups, any=True)
    b = Desc(lib, (w_shape[0],), any=True) if bias else None
    return create_pd(lib, "dnnl_convolution_forward_primitive_desc_create", lib.engine,
                     d.FORWARD_TRAINING, d.CONVOLUTION_DIRECT, x.md, w.md,
                     b.md if b else None, y.md, *_geo_dims(g), attr)


def _plain(lib, x_shape, w_shape, y_shape, groups, names, bias: bool):
    x, w, y = _descs(lib, x_shape, w_shape, y_shape, groups, any=False)
    out = dict(zip(names, (x, w, y)))
    if bias:
        out[names[3]] = Desc(lib, (w_shape[0],))
    return out


def _build(lib, kind, g, x_shape, w_shape, y_shape, bias):
    attr = attr_user_scratchpad(lib)
    try:
        if kind == "forward":
            pd = _forward_pd(lib, g, x_shape, w_shape, y_shape, bias, attr)
            names = (d.ARG_SRC, d.ARG_WEIGHTS, d.ARG_DST, d.ARG_BIAS)
            outputs = {d.ARG_DST}
        else:
            hint = _forward_pd(lib, g, x_shape, w_shape, y_shape, bias)
            if hint is None:
                return None
            try:
                pd = _backward_pd(lib, kind, g, x_shape, w_shape, y_shape, bias, attr, hint)
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
            if kind == "data":
                names, outputs = (d.ARG_DIFF_SRC, d.ARG_WEIGHTS, d.ARG_DIFF_DST), {d.ARG_DIFF_SRC}
            else:
                names = (d.ARG_SRC, d.ARG_DIFF_WEIGHTS, d.ARG_DIFF_DST, d.ARG_DIFF_BIAS)
                outputs = {d.ARG_DIFF_WEIGHTS, d.ARG_DIFF_BIAS}
        if pd is None:
            return None
        return Plan(lib, pd, _plain(lib, x_shape, w_shape, y_shape, g.groups, names, bias),
                    outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def _backward_pd(lib, kind, g, x_shape, w_shape, y_shape, bias, attr, hint):
    x, w, y = _descs(lib, x_shape, w_shape, y_shape, g.groups, any=True)
    geo = _geo_dims(g)
    if kind == "data":
        return create_pd(lib, "dnnl_convolution_backward_data_primitive_desc_create",
                         lib.engine, d.CONVOLUTION_DIRECT, x.md, w.md, y.md, *geo, hint, attr)
    b = Desc(lib, (w_shape[0],), any=True) if bias else None
    return create_pd(lib, "dnnl_convolution_backward_weights_primitive_desc_create",
                     lib.engine, d.CONVOLUTION_DIRECT, x.md, w.md, b.md if b else None, y.md,
                     *geo, hint, attr)


def plan(lib, kind, g: Geometry, x_shape, w_shape, y_shape, bias: bool):
    """The cached plan of ``kind`` (forward, data, weight) for these shapes and geometry
    (the weight's shape holds the kernel)."""
    key = ("Convolution", kind, x_shape, w_shape, y_shape, bias, g)
    return cached(key, lambda: _build(lib, kind, g, x_shape, w_shape, y_shape, bias))


def forward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    x, w = inputs[0], inputs[1]
    bias = not p.no_bias
    if not covers(p, *inputs):
        return False
    y = outputs[0]
    pl = plan(lib, "forward", geometry(p), x.shape, w.shape, y.shape, bias)
    if pl is None:
        return False
    res = target(y, req[0], inputs)
    args = {d.ARG_SRC: x, d.ARG_WEIGHTS: w, d.ARG_DST: res}
    if bias:
        args[d.ARG_BIAS] = inputs[2]
    pl.run(args)
    finish(y, req[0], res)
    return True


_BACKWARD = "_backward_Convolution"


def backward(lib, ctx, inputs, req, outputs, p):
    """The data gradient and the weight (and bias) gradients, each on oneDNN where its part
    rule says so; a part that does not win goes to ops-nn's kernel (the other part's request
    masked off), and a call where no part wins goes there whole."""
    og, x, w = inputs
    if not covers(p, og, x, w):
        return False
    bias = not p.no_bias
    want_data = bool(req[0]) and part_wins(_BACKWARD + ":data", ctx, inputs, p)
    want_weight = (bool(req[1]) or (bias and bool(req[2]))) and \
        part_wins(_BACKWARD + ":weight", ctx, inputs, p)
    g = geometry(p)
    data_plan = plan(lib, "data", g, x.shape, w.shape, og.shape, False) if want_data else None
    weight_plan = plan(lib, "weight", g, x.shape, w.shape, og.shape, bias) \
        if want_weight else None
    if not (want_data or want_weight) or (want_data and data_plan is None) or \
            (want_weight and weight_plan is None):
        return False
    if want_data:
        dx = target(outputs[0], req[0], inputs)
        data_plan.run({d.ARG_DIFF_SRC: dx, d.ARG_WEIGHTS: w, d.ARG_DIFF_DST: og})
        finish(outputs[0], req[0], dx)
    if want_weight:
        _weight_gradient(weight_plan, inputs, req, outputs, bias)
    _rest_below(ctx, inputs, req, outputs, p, want_data, want_weight)
    return True


def _rest_below(ctx, inputs, req, outputs, p, data_done: bool, weight_done: bool) -> None:
    """The requested gradients oneDNN did not compute, on ops-nn's kernel."""
    rest = [0 if (k == 0 and data_done) or (k > 0 and weight_done) else r
            for k, r in enumerate(req)]
    if any(rest):
        calls[_BACKWARD + (":data" if rest[0] else ":weight"), "fallback"] += 1
        below(_BACKWARD)(ctx, inputs, rest, outputs, p)


def _weight_gradient(weight_plan, inputs, req, outputs, bias: bool) -> None:
    og, x, _ = inputs
    dw = target(outputs[1], req[1], inputs)
    args = {d.ARG_SRC: x, d.ARG_DIFF_WEIGHTS: dw, d.ARG_DIFF_DST: og}
    if bias:
        db = target(outputs[2], req[2], inputs)
        args[d.ARG_DIFF_BIAS] = db
    weight_plan.run(args)
    if req[1]:
        finish(outputs[1], req[1], dw)
    if bias and req[2]:
        finish(outputs[2], req[2], db)


# The rules: bench/layers.py's conv rows (ResNet-18 on 3x32x32 in bench/gluon.py and
# bench/executor.py, LeNet), at 1 and 2 threads. oneDNN loses on few output pixels per image
# (its weight gradient there runs a gemm with a per-thread reduction: 3-4x ops-nn's time at
# 1x1 and 2x2), on 1x1 kernels over small images, and on one or three input channels.
def _pixels(shape) -> int:
    return int(np.prod(shape[2:], dtype=np.int64))


def _out_pixels(x_shape, p) -> int:
    g = geometry(p)
    return int(np.prod([(n + 2 * pad - (dl + 1) * (k - 1) - 1) // s + 1 for n, k, s, dl, pad in
                        zip(x_shape[2:], p.kernel, g.stride, g.dilate, g.pad)]))


def _taps_cut(x_shape, p) -> bool:
    """Whether some kernel taps only read padding: ops-nn cuts them off and computes the
    rest (a 3x3 kernel over ResNet's 1x1 images: a ninth of the work), which oneDNN does
    not."""
    g = geometry(p)
    return used_taps(tuple(x_shape[2:]), tuple(p.kernel), g.stride,
                     tuple(k + 1 for k in g.dilate), g.pad) is not None


def _forward_wins(ctx, inputs, p) -> bool:
    out = _out_pixels(inputs[0].shape, p)
    return (out >= 64 or (out >= 16 and int(np.prod(p.kernel)) > 1)) and \
        not _taps_cut(inputs[0].shape, p)


def _data_wins(ctx, inputs, p) -> bool:
    og, x = inputs[0], inputs[1]
    return x.shape[1] >= 8 and (int(np.prod(p.kernel)) > 1 or _pixels(og.shape) > 256) and \
        not _taps_cut(x.shape, p)


def _weight_wins(ctx, inputs, p) -> bool:
    """One input channel (LeNet's first layer) lost 2.1-2.5x with AVX2 and won 0.35x with
    AVX-512."""
    og, x = inputs[0], inputs[1]
    return _pixels(og.shape) >= 16 and (x.shape[1] >= 2 or d.avx512()) and \
        not _taps_cut(x.shape, p)


def _backward_wins(ctx, inputs, p) -> bool:
    return part_wins(_BACKWARD + ":data", ctx, inputs, p) or \
        part_wins(_BACKWARD + ":weight", ctx, inputs, p)


wins[_BACKWARD + ":data"] = _data_wins
wins[_BACKWARD + ":weight"] = _weight_wins
extend_op("Convolution").set_attr(KEY, kernel("Convolution", forward, _forward_wins), PLEVEL)
extend_op(_BACKWARD).set_attr(KEY, kernel(_BACKWARD, backward, _backward_wins), PLEVEL)
