"""Activation (relu, sigmoid, tanh, softrelu) and its gradient (relu, sigmoid, tanh) as oneDNN
eltwise primitives over the flattened array, outranking ops-nn's kernels.

oneDNN has no softsign, and its softrelu gradient reads the input where MXNet's backward gets
the output: those calls fall back. The gradient uses the ``use_dst_for_bwd`` algorithms,
which read the forward output as MXNet's backward does."""

from __future__ import annotations

from opsdk import extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20
_FORWARD = {"relu": d.ELTWISE_RELU_DST, "sigmoid": d.ELTWISE_LOGISTIC_DST,
            "tanh": d.ELTWISE_TANH_DST, "softrelu": d.ELTWISE_SOFT_RELU}
_BACKWARD = {k: v for k, v in _FORWARD.items() if k != "softrelu"}
# alpha of each algorithm: softrelu is log(1 + exp(alpha x)) / alpha in oneDNN 3
_ALPHA = {"softrelu": 1.0}
# where oneDNN was measured faster (bench/layers.py; the plugin's README): act_type -> the
# least size; relu and tanh never (numpy's loops are as fast and need no thread hand-off)
FORWARD_WINS = {"sigmoid": 1 << 19, "softrelu": 1 << 16}
BACKWARD_WINS = {"sigmoid": 1 << 21}
# and on a core with AVX-512 also: tanh's gradient (LeNet's (64,20,24,24): 0.63x ops-nn's
# time there, 1.08x with AVX2 alone)
AVX512_BACKWARD_WINS = {"tanh": 1 << 19}


def _forward_pd(lib, alg, alpha, size, attr=None):
    x, y = Desc(lib, (size,)), Desc(lib, (size,))
    return create_pd(lib, "dnnl_eltwise_forward_primitive_desc_create", lib.engine,
                     d.FORWARD_TRAINING, alg, x.md, y.md, alpha, 0.0, attr)


def _build(lib, kind, alg, alpha, size):
    attr = attr_user_scratchpad(lib)
    try:
        if kind == "forward":
            pd = _forward_pd(lib, alg, alpha, size, attr)
            plain = {d.ARG_SRC: Desc(lib, (size,)), d.ARG_DST: Desc(lib, (size,))}
            outputs = {d.ARG_DST}
        else:
            hint = _forward_pd(lib, alg, alpha, size)
            if hint is None:
                return None
            dx, dy, y = (Desc(lib, (size,)) for _ in range(3))
            try:
                pd = create_pd(lib, "dnnl_eltwise_backward_primitive_desc_create", lib.engine,
                               alg, dx.md, dy.md, y.md, alpha, 0.0, hint, attr)
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
            plain = {d.ARG_DIFF_SRC: dx, d.ARG_DIFF_DST: dy, d.ARG_DST: y}
            outputs = {d.ARG_DIFF_SRC}
        return None if pd is None else Plan(lib, pd, plain, outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def plan(lib, kind, act_type, size):
    alg = (_FORWARD if kind == "forward" else _BACKWARD)[act_type]
    alpha = _ALPHA.get(act_type, 0.0)
    return cached(("Activation", kind, alg, size), lambda: _build(lib, kind, alg, alpha, size))


def _same_buffer(a, b) -> bool:
    return a.ctypes.data == b.ctypes.data and a.shape == b.shape


def _result(out, req, x):
    """``out`` itself where it is written, even when it is ``x`` (eltwise runs in place)."""
    if req in (1, 2) and plain_f32(out) and _same_buffer(out, x):
        return out
    return target(out, req, [x])


def forward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    x, y = inputs[0], outputs[0]
    if p.act_type not in _FORWARD or not plain_f32(x):
        return False
    pl = plan(lib, "forward", p.act_type, x.size)
    if pl is None:
        return False
    res = _result(y, req[0], x)
    pl.run({d.ARG_SRC: x.reshape(-1), d.ARG_DST: res.reshape(-1)})
    finish(y, req[0], res)
    return True


def backward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    og, y = inputs
    if p.act_type not in _BACKWARD or not plain_f32(og, y):
        return False
    pl = plan(lib, "backward", p.act_type, og.size)
    if pl is None:
        return False
    res = target(outputs[0], req[0], inputs)
    pl.run({d.ARG_DIFF_SRC: res.reshape(-1), d.ARG_DIFF_DST: og.reshape(-1),
            d.ARG_DST: y.reshape(-1)})
    finish(outputs[0], req[0], res)
    return True


def _rule(least: dict, avx512_least: dict | None = None):
    def rule(ctx, inputs, p) -> bool:
        n, never = inputs[0].size, float("inf")
        return n >= least.get(p.act_type, never) or (
            avx512_least is not None and n >= avx512_least.get(p.act_type, never) and
            d.avx512())
    return rule


extend_op("Activation").set_attr(KEY, kernel("Activation", forward, _rule(FORWARD_WINS)),
                                 PLEVEL)
extend_op("_backward_Activation").set_attr(
    KEY, kernel("_backward_Activation", backward,
                _rule(BACKWARD_WINS, AVX512_BACKWARD_WINS)), PLEVEL)
