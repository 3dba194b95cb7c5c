"""Pooling (max and avg, 'valid' convention or global; 1-D, 2-D, 3-D; channels-first,
float32) and its gradient on oneDNN (on channel-blocked layouts), outranking ops-nn's
kernels. Max pooling's gradient reruns the forward pass for oneDNN's workspace (where each
window's maximum is)."""

from __future__ import annotations

import numpy as np
from opsdk import extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd, dims_of

PLEVEL = 20
_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def covers(p, x, *arrays) -> bool:
    nd = x.ndim - 2
    if p.global_pool:
        shaped = True
    else:
        shaped = len(p.kernel) == nd and p.pooling_convention == "valid"
    return (nd in _LAYOUTS and p.layout in (None, _LAYOUTS[nd]) and shaped
            and p.pool_type in ("max", "avg") and plain_f32(x, *arrays))


def geometry(p, x_shape):
    """(kernel, stride, pad), MXNet's defaults filled in; global pooling spans the input."""
    nd = len(x_shape) - 2
    if p.global_pool:
        return tuple(x_shape[2:]), (1,) * nd, (0,) * nd
    return p.kernel, tuple(p.stride[:nd]) or (1,) * nd, tuple(p.pad[:nd]) or (0,) * nd


def _blocked(lib, shape):
    """Pooling runs on channel-blocked layouts (its plain-layout code is several times
    slower); the plan reorders to and from them."""
    return Desc(lib, shape, tag=d.TAG_BLOCKED[lib.block][len(shape)])


def _alg(p):
    if p.pool_type == "max":
        return d.POOLING_MAX
    return d.POOLING_AVG_EXCLUDE_PADDING if p.count_include_pad is False \
        else d.POOLING_AVG_INCLUDE_PADDING


def _forward_pd(lib, p, x_shape, y_shape, attr=None):
    kernel, stride, pad = geometry(p, x_shape)
    x, y = _blocked(lib, x_shape), _blocked(lib, y_shape)
    return create_pd(lib, "dnnl_pooling_forward_primitive_desc_create", lib.engine,
                     d.FORWARD_TRAINING, _alg(p), x.md, y.md, dims_of(stride), dims_of(kernel),
                     dims_of((0,) * len(kernel)), dims_of(pad), dims_of(pad), attr)


def _build(lib, kind, p, x_shape, y_shape):
    attr = attr_user_scratchpad(lib)
    try:
        if kind == "forward":
            pd = _forward_pd(lib, p, x_shape, y_shape, attr)
            plain = {d.ARG_SRC: Desc(lib, x_shape), d.ARG_DST: Desc(lib, y_shape)}
            outputs = {d.ARG_DST}
        else:
            hint = _forward_pd(lib, p, x_shape, y_shape)
            if hint is None:
                return None
            kernel, stride, pad = geometry(p, x_shape)
            dx, dy = _blocked(lib, x_shape), _blocked(lib, y_shape)
            try:
                pd = create_pd(lib, "dnnl_pooling_backward_primitive_desc_create", lib.engine,
                               _alg(p), dx.md, dy.md, dims_of(stride),
                               dims_of(kernel), dims_of((0,) * len(kernel)), dims_of(pad),
                               dims_of(pad), hint, attr)
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
            plain = {d.ARG_DIFF_SRC: Desc(lib, x_shape), d.ARG_DIFF_DST: Desc(lib, y_shape)}
            outputs = {d.ARG_DIFF_SRC}
        return None if pd is None else Plan(lib, pd, plain, outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def plan(lib, kind, p, x_shape, y_shape):
    key = ("Pooling", kind, x_shape, y_shape, _alg(p), geometry(p, x_shape))
    return cached(key, lambda: _build(lib, kind, p, x_shape, y_shape))


def forward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    x, y = inputs[0], outputs[0]
    if not covers(p, x):
        return False
    pl = plan(lib, "forward", p, x.shape, y.shape)
    if pl is None:
        return False
    res = target(y, req[0], inputs)
    pl.run({d.ARG_SRC: x, d.ARG_DST: res})
    finish(y, req[0], res)
    return True


def backward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    og, x, _ = inputs
    if not covers(p, x, og):
        return False
    fwd = plan(lib, "forward", p, x.shape, og.shape)
    bwd = plan(lib, "backward", p, x.shape, og.shape)
    if fwd is None or bwd is None:
        return False
    workspace = None
    if p.pool_type == "max":
        workspace = np.empty(fwd.workspace_size(), np.uint8)
        fwd.run({d.ARG_SRC: x, d.ARG_DST: np.empty(og.shape, np.float32)}, workspace)
    dx = target(outputs[0], req[0], inputs)
    bwd.run({d.ARG_DIFF_SRC: dx, d.ARG_DIFF_DST: og}, workspace)
    finish(outputs[0], req[0], dx)
    return True


# The rule: bench/layers.py's pooling rows (AVX-512, and AVX2 alone, alike). oneDNN pays two
# reorders per call (and max pooling's gradient a second forward pass), so where the windows
# tile the data it won only from 2^20 elements (0.5-0.7x ops-nn's time at (32,64,32,32));
# LeNet's (64,20,24,24) and (64,50,8,8) ran 1.0-1.5x, and global pooling's gradient 3x.
# Overlapping or padded windows, which ops-nn adds up tap by tap, ran 0.15-0.35x.
_TILED_WINS = 1 << 20


def _wins(x_index: int):
    def rule(ctx, inputs, p) -> bool:
        if p.global_pool:
            return False
        kernel, stride, pad = geometry(p, inputs[x_index].shape)
        tiled = not any(pad) and all(s >= k for k, s in zip(kernel, stride))
        return not tiled or inputs[x_index].size >= _TILED_WINS
    return rule


extend_op("Pooling").set_attr(KEY, kernel("Pooling", forward, _wins(0)), PLEVEL)
extend_op("_backward_Pooling").set_attr(
    KEY, kernel("_backward_Pooling", backward, _wins(1)), PLEVEL)
