"""BatchNorm (channel axis 1, 2-D to 5-D float32 data) forward and gradient on oneDNN's
batch normalization, outranking ops-nn's kernels with MXNet's semantics kept around it.

oneDNN computes the batch mean and biased variance (training) or reads the moving ones
(``use_global_stats`` or inference); the kernel outputs the inverse standard deviation as
MXNet's BatchNorm does, and its gradient updates the moving statistics
(``moving = moving * momentum + batch * (1 - momentum)``) in a training step, as ops-nn's.
``fix_gamma`` gives a scale of ones and a zero gamma gradient. ``eps == 0`` falls back
(MXNet then gives a constant channel an inverse deviation of 0, oneDNN infinity)."""

from __future__ import annotations

import numpy as np
from opsdk import assign, extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20
WINS = 1 << 18
"""Rule drawn from bench/layers.py (the plugin's README has the figures). oneDNN's batch norm
runs on channel-blocked layouts, so each call pays reorders that numpy does not; it ran
training steps (batch statistics) of ``WINS`` elements and more in 0.46-0.70x ops-nn's time,
forward and gradient, with AVX-512 and with AVX2 alike; smaller ones, and inference (one
scale-and-shift pass in numpy), stay with ops-nn."""
_VECTORS = (d.ARG_SCALE, d.ARG_SHIFT, d.ARG_MEAN, d.ARG_VARIANCE)


def covers(p, x, *arrays) -> bool:
    return 2 <= x.ndim <= 5 and p.axis % x.ndim == 1 and p.eps > 0 and plain_f32(x, *arrays)


def _training(ctx, p) -> bool:
    return ctx.is_train and not p.use_global_stats


def _flags(training: bool) -> int:
    return d.BN_SCALE | d.BN_SHIFT | (0 if training else d.BN_GLOBAL_STATS)


def _inner(lib, shape):
    """The layout the primitive runs on: channel-blocked (oneDNN's plain-layout batch norm is
    its reference code, several times slower); 2-d data stays as it is."""
    if len(shape) == 2:
        return Desc(lib, shape)
    return Desc(lib, shape, tag=d.TAG_BLOCKED[lib.block][len(shape)])


def _forward_pd(lib, shape, eps, training, attr=None):
    x, y = _inner(lib, shape), _inner(lib, shape)
    prop = d.FORWARD_TRAINING if training else d.FORWARD_INFERENCE
    return create_pd(lib, "dnnl_batch_normalization_forward_primitive_desc_create", lib.engine,
                     prop, x.md, y.md, eps, _flags(training), attr)


def _build(lib, kind, shape, eps, training):
    attr = attr_user_scratchpad(lib)
    vectors = {arg: Desc(lib, shape[1:2]) for arg in _VECTORS}
    try:
        if kind == "forward":
            pd = _forward_pd(lib, shape, eps, training, attr)
            plain = {d.ARG_SRC: Desc(lib, shape), d.ARG_DST: Desc(lib, shape), **vectors}
            outputs = {d.ARG_DST} | ({d.ARG_MEAN, d.ARG_VARIANCE} if training else set())
        else:
            hint = _forward_pd(lib, shape, eps, training)
            if hint is None:
                return None
            dx, dy, x = (_inner(lib, shape) for _ in range(3))
            try:
                pd = create_pd(lib, "dnnl_batch_normalization_backward_primitive_desc_create",
                               lib.engine, d.BACKWARD, dx.md, dy.md, x.md, eps,
                               _flags(training), hint, attr)
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
            del vectors[d.ARG_SHIFT]
            plain = {d.ARG_DIFF_SRC: Desc(lib, shape), d.ARG_DIFF_DST: Desc(lib, shape),
                     d.ARG_SRC: Desc(lib, shape), **vectors,
                     d.ARG_DIFF_SCALE: Desc(lib, shape[1:2]),
                     d.ARG_DIFF_SHIFT: Desc(lib, shape[1:2])}
            outputs = {d.ARG_DIFF_SRC, d.ARG_DIFF_SCALE, d.ARG_DIFF_SHIFT}
        return None if pd is None else Plan(lib, pd, plain, outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def plan(lib, kind, shape, eps, training):
    eps = float(np.float32(eps))
    return cached(("BatchNorm", kind, shape, eps, training),
                  lambda: _build(lib, kind, shape, eps, training))


def _scale(p, gamma):
    return np.ones_like(gamma) if p.fix_gamma else gamma


def forward(lib, ctx, inputs, req, outputs, p):
    x, gamma, beta, mm, mv = inputs
    if not covers(p, x, gamma, beta, mm, mv):
        return False
    training = _training(ctx, p)
    pl = plan(lib, "forward", x.shape, p.eps, training)
    if pl is None:
        return False
    c = x.shape[1]
    mean, var = (np.empty(c, np.float32), np.empty(c, np.float32)) if training else (mm, mv)
    res = target(outputs[0], req[0], inputs) if req[0] else np.empty(x.shape, np.float32)
    pl.run({d.ARG_SRC: x, d.ARG_DST: res, d.ARG_SCALE: _scale(p, gamma), d.ARG_SHIFT: beta,
            d.ARG_MEAN: mean, d.ARG_VARIANCE: var})
    if req[0]:
        finish(outputs[0], req[0], res)
    assign(outputs[1], req[1], mean)
    assign(outputs[2], req[2], 1 / np.sqrt(var + np.float32(p.eps)))
    return True


def _update_moving(p, mm, mv, mean, var) -> None:
    for moving, batch in ((mm, mean), (mv, var)):
        moving *= p.momentum
        moving += batch * (1 - p.momentum)


def backward(lib, ctx, inputs, req, outputs, p):
    og, mean, invstd, x, gamma, mm, mv = inputs
    if not covers(p, x, og, mean, invstd, gamma, mm, mv):
        return False
    training = _training(ctx, p)
    pl = plan(lib, "backward", x.shape, p.eps, training)
    if pl is None:
        return False
    if training:
        var = 1 / (invstd * invstd) - np.float32(p.eps)
        _update_moving(p, mm, mv, mean, var)
    else:
        mean, var = mm, mv
    c = x.shape[1]
    dx = target(outputs[0], req[0], inputs) if req[0] else np.empty(x.shape, np.float32)
    dgamma, dbeta = np.empty(c, np.float32), np.empty(c, np.float32)
    pl.run({d.ARG_DIFF_SRC: dx, d.ARG_DIFF_DST: og, d.ARG_SRC: x, d.ARG_SCALE: _scale(p, gamma),
            d.ARG_MEAN: mean, d.ARG_VARIANCE: var, d.ARG_DIFF_SCALE: dgamma,
            d.ARG_DIFF_SHIFT: dbeta})
    if req[0]:
        finish(outputs[0], req[0], dx)
    assign(outputs[1], req[1], np.zeros_like(dgamma) if p.fix_gamma else dgamma)
    assign(outputs[2], req[2], dbeta)
    return True


def _forward_wins(ctx, inputs, p) -> bool:
    return _training(ctx, p) and inputs[0].size >= WINS


def _backward_wins(ctx, inputs, p) -> bool:
    return _training(ctx, p) and inputs[3].size >= WINS


extend_op("BatchNorm").set_attr(KEY, kernel("BatchNorm", forward, _forward_wins), PLEVEL)
extend_op("_backward_BatchNorm").set_attr(
    KEY, kernel("_backward_BatchNorm", backward, _backward_wins), PLEVEL)
