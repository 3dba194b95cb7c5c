"""``sgd_update`` (float32, no gradient clipping) as one oneDNN binary primitive,
``out = decay * weight + (-step) * grad`` with runtime scales, outranking ops-nn's kernel on
large weights: one pass through memory on the OpenMP threads where numpy makes two on one
thread. The scales are ops-nn's (``decay = 1 - lr*wd``, ``step = lr*rescale_grad``, in
float32), so the values are the same."""

from __future__ import annotations

import numpy as np
from opsdk import extend_op

from . import _dnnl as d
from ._dispatch import KEY, kernel, plain_f32
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20
_DECAY = d.ARG_ATTR_SCALES | d.ARG_SRC
_STEP = d.ARG_ATTR_SCALES | d.ARG_SRC_1


def _build(lib, size, decay):
    x = Desc(lib, (size,))
    attr = attr_user_scratchpad(lib)
    try:
        for arg in ((d.ARG_SRC, d.ARG_SRC_1) if decay else (d.ARG_SRC_1,)):
            lib.check("dnnl_primitive_attr_set_scales_mask", attr, arg, 0)
        pd = create_pd(lib, "dnnl_binary_primitive_desc_create", lib.engine, d.BINARY_ADD,
                       x.md, x.md, x.md, attr)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)
    if pd is None:
        return None
    plain = {d.ARG_SRC: x, d.ARG_SRC_1: Desc(lib, (size,)), d.ARG_DST: Desc(lib, (size,)),
             _STEP: Desc(lib, (1,))}
    if decay:
        plain[_DECAY] = Desc(lib, (1,))
    return Plan(lib, pd, plain, {d.ARG_DST})


def sgd(lib, ctx, inputs, req, outputs, p):
    w, g = inputs
    out = outputs[0]
    if req[0] not in (1, 2) or p.clip_gradient >= 0 or not plain_f32(w, g, out) or \
            g.shape != w.shape or out.shape != w.shape or \
            (out is not w and np.may_share_memory(out, g)):
        return False
    f = np.float32
    decay, step = f(1) - f(p.lr) * f(p.wd), f(p.lr) * f(p.rescale_grad)
    pl = cached(("sgd_update", w.size, decay != 1),
                lambda: _build(lib, w.size, decay != 1))
    if pl is None:
        return False
    args = {d.ARG_SRC: w.reshape(-1), d.ARG_SRC_1: g.reshape(-1), d.ARG_DST: out.reshape(-1),
            _STEP: np.array([-step], f)}
    if decay != 1:
        args[_DECAY] = np.array([decay], f)
    pl.run(args)
    return True


# The rule: bench/layers.py's sgd_update rows. On two cores a 1M-element update ran in
# 0.10 ms against numpy's 0.18; small weights pay the hand-off to the OpenMP threads.
_WINS = 1 << 19


def _wins(ctx, inputs, p) -> bool:
    return inputs[0].size >= _WINS


extend_op("sgd_update").set_attr(KEY, kernel("sgd_update", sgd, _wins), PLEVEL)
