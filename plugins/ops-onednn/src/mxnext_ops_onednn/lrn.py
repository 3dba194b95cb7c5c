"""LRN across channels (4-d float32 data) and its gradient on oneDNN, outranking ops-nn's
kernels. oneDNN's formula is MXNet's: ``out = x * (knorm + alpha/nsize * window sum of
x^2)^-beta``.

The hidden output ``tmp_norm`` (what ops-nn's gradient reads) is still written, with numpy,
whenever it is requested; oneDNN's gradient does not read it but reruns the forward pass for
its workspace, as the Pooling gradient does."""

from __future__ import annotations

import numpy as np
from opsdk import assign, extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20
FORWARD_WINS = 1 << 16
"""The least data size where oneDNN's forward was measured faster (bench/layers.py). Its
gradient never was: on AVX2 oneDNN runs its reference LRN gradient (and reruns the forward),
several times slower than ops-nn's, so that rule sends every call to ops-nn."""


def covers(x, *arrays) -> bool:
    return x.ndim == 4 and plain_f32(x, *arrays)


def _terms(p):
    """(local size, alpha, beta, k) as oneDNN takes them."""
    return p.nsize, float(p.alpha), float(p.beta), float(p.knorm)


def _forward_pd(lib, shape, terms, prop, attr=None):
    x, y = Desc(lib, shape), Desc(lib, shape)
    return create_pd(lib, "dnnl_lrn_forward_primitive_desc_create", lib.engine, prop,
                     d.LRN_ACROSS_CHANNELS, x.md, y.md, *terms, attr)


def _build(lib, kind, shape, terms):
    attr = attr_user_scratchpad(lib)
    try:
        if kind in ("forward", "training"):
            prop = d.FORWARD_INFERENCE if kind == "forward" else d.FORWARD_TRAINING
            pd = _forward_pd(lib, shape, terms, prop, attr)
            plain = {d.ARG_SRC: Desc(lib, shape), d.ARG_DST: Desc(lib, shape)}
            outputs = {d.ARG_DST}
        else:
            hint = _forward_pd(lib, shape, terms, d.FORWARD_TRAINING)
            if hint is None:
                return None
            dx, dy, x = (Desc(lib, shape) for _ in range(3))
            try:
                pd = create_pd(lib, "dnnl_lrn_backward_primitive_desc_create", lib.engine,
                               d.LRN_ACROSS_CHANNELS, dx.md, dy.md, x.md, *terms, hint, attr)
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
            plain = {d.ARG_DIFF_SRC: dx, d.ARG_DIFF_DST: dy, d.ARG_SRC: x}
            outputs = {d.ARG_DIFF_SRC}
        return None if pd is None else Plan(lib, pd, plain, outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def plan(lib, kind, shape, p):
    terms = _terms(p)
    return cached(("LRN", kind, shape, terms), lambda: _build(lib, kind, shape, terms))


def norm(x, p):
    """``knorm + alpha/nsize * (sum of x^2 over the nsize channels centred on each)``: the
    window sums are differences of a cumulative sum along the zero-padded channel axis."""
    h = p.nsize // 2
    c = np.cumsum(np.pad(x * x, [(0, 0), (h + 1, h), (0, 0), (0, 0)]), axis=1)
    out = c[:, p.nsize:] - c[:, :-p.nsize]
    out *= np.float32(p.alpha / p.nsize)
    out += np.float32(p.knorm)
    return out


def forward(lib, ctx, inputs, req, outputs, p):
    x = inputs[0]
    if not covers(x):
        return False
    pl = plan(lib, "forward", x.shape, p)
    if pl is None:
        return False
    if req[0]:
        res = target(outputs[0], req[0], inputs)
        pl.run({d.ARG_SRC: x, d.ARG_DST: res})
        finish(outputs[0], req[0], res)
    if req[1]:
        assign(outputs[1], req[1], norm(x, p))
    return True


def backward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    og, x, _ = inputs
    if not covers(x, og):
        return False
    fwd, bwd = plan(lib, "training", x.shape, p), plan(lib, "backward", x.shape, p)
    if fwd is None or bwd is None:
        return False
    workspace = None
    if fwd.workspace_size():
        workspace = np.empty(fwd.workspace_size(), np.uint8)
        fwd.run({d.ARG_SRC: x, d.ARG_DST: np.empty(x.shape, np.float32)}, workspace)
    dx = target(outputs[0], req[0], inputs)
    bwd.run({d.ARG_DIFF_SRC: dx, d.ARG_DIFF_DST: og, d.ARG_SRC: x}, workspace)
    finish(outputs[0], req[0], dx)
    return True


extend_op("LRN").set_attr(
    KEY, kernel("LRN", forward, lambda ctx, inputs, p: inputs[0].size >= FORWARD_WINS), PLEVEL)
extend_op("_backward_LRN").set_attr(
    KEY, kernel("_backward_LRN", backward, lambda ctx, inputs, p: False), PLEVEL)
