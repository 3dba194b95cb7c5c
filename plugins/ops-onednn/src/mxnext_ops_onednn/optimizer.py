"""``sgd_update`` and ``multi_sgd_update`` (float32, no gradient clipping): each weight as
one oneDNN binary primitive, ``out = decay * weight + (-step) * grad`` with runtime scales,
outranking ops-nn's kernels on large weights: one pass through memory on the OpenMP threads
where numpy makes two on one thread. The scales are ops-nn's for ``sgd_update``
(``decay = 1 - lr*wd``, ``step = lr*rescale_grad``, in float32), so its values are the same;
``multi_sgd_update`` (which Gluon's Trainer calls) computes MXNet's ``(1 - lr*wd) * w -
lr * (rescale_grad * g)`` as these two scales too, within a unit in the last place of ops-nn's
whole-array expression. Its small weights go to ops-nn's kernel, in the same call."""

from __future__ import annotations

import numpy as np
from opsdk import extend_op

from . import _dnnl as d
from ._dispatch import KEY, below, kernel, plain_f32
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


def _update(lib, w, g, out, req, lr, wd, rescale) -> bool:
    """One weight's update on oneDNN; whether it could (a write of plain float32 arrays of
    one shape, ``out`` the weight itself or apart from the gradient)."""
    if req not in (1, 2) or not plain_f32(w, g, out) or g.shape != w.shape or \
            out.shape != w.shape or (out is not w and np.may_share_memory(out, g)):
        return False
    f = np.float32
    decay, step = f(1) - f(lr) * f(wd), f(lr) * f(rescale)
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


def sgd(lib, ctx, inputs, req, outputs, p):
    return p.clip_gradient < 0 and _update(lib, inputs[0], inputs[1], outputs[0], req[0],
                                           p.lr, p.wd, p.rescale_grad)


def multi_sgd(lib, ctx, inputs, req, outputs, p):
    """The large weights here, then the rest on ops-nn's kernel with theirs masked off."""
    if p.clip_gradient >= 0:
        return False
    done = [inputs[2 * i].size >= _WINS and
            _update(lib, inputs[2 * i], inputs[2 * i + 1], outputs[i], req[i], p.lrs[i],
                    p.wds[i], p.rescale_grad)
            for i in range(p.num_weights)]
    if not any(done):
        return False
    rest = [0 if ran else r for ran, r in zip(done, req)]
    if any(rest):
        below("multi_sgd_update")(ctx, inputs, rest, outputs, p)
    return True


# The rule: bench/layers.py's sgd_update rows. On two cores a 1M-element update ran in
# 0.10 ms against numpy's 0.18; small weights pay the hand-off to the OpenMP threads.
_WINS = 1 << 19


def _wins(ctx, inputs, p) -> bool:
    return inputs[0].size >= _WINS


def _any_wins(ctx, inputs, p) -> bool:
    return any(inputs[2 * i].size >= _WINS for i in range(p.num_weights))


extend_op("sgd_update").set_attr(KEY, kernel("sgd_update", sgd, _wins), PLEVEL)
extend_op("multi_sgd_update").set_attr(
    KEY, kernel("multi_sgd_update", multi_sgd, _any_wins), PLEVEL)
