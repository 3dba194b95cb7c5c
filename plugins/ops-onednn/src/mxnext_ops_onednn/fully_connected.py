"""FullyConnected (float32) and its gradient as oneDNN matmuls over the row-major
(batch, features) view of the data, outranking ops-nn's kernels where they win.

The three products read the arrays where they lie: the weight (num_hidden, k) is the
forward's right operand transposed, and the output gradient the weight gradient's left
operand transposed (strided descriptors, no copy). The bias rides in the forward matmul; its
gradient is numpy's column sum."""

from __future__ import annotations

from opsdk import assign, extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20


def _rows(p, a):
    return a.reshape(a.shape[0], -1) if p.flatten else a.reshape(-1, a.shape[-1])


def _operands(lib, kind, m, k, n):
    """(src, weights, dst) descriptors of ``kind``'s product: forward ``x @ W^T``, data
    ``g @ W``, weight ``g^T @ x``."""
    if kind == "forward":
        return Desc(lib, (m, k)), Desc(lib, (k, n), strides=(1, k)), Desc(lib, (m, n))
    if kind == "data":
        return Desc(lib, (m, n)), Desc(lib, (n, k)), Desc(lib, (m, k))
    return Desc(lib, (n, m), strides=(1, n)), Desc(lib, (m, k)), Desc(lib, (n, k))


def _build(lib, kind, m, k, n, bias):
    src, weights, dst = _operands(lib, kind, m, k, n)
    descs = {d.ARG_SRC: src, d.ARG_WEIGHTS: weights, d.ARG_DST: dst}
    if bias:
        descs[d.ARG_BIAS] = Desc(lib, (1, n))
    attr = attr_user_scratchpad(lib)
    try:
        pd = create_pd(lib, "dnnl_matmul_primitive_desc_create", lib.engine, src.md,
                       weights.md, descs[d.ARG_BIAS].md if bias else None, dst.md, attr)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)
    return None if pd is None else Plan(lib, pd, descs, {d.ARG_DST})


def plan(lib, kind, m, k, n, bias=False):
    """The plan of ``kind``'s product; a small one (below ``_SHARED`` multiply-adds) runs
    on this thread alone, where handing it to a second OpenMP thread costs more than it
    saves."""
    if m * k * n < _SHARED:
        lib.use_threads(1)
    return cached(("FullyConnected", kind, m, k, n, bias),
                  lambda: _build(lib, kind, m, k, n, bias))


def forward(lib, ctx, inputs, req, outputs, p):
    if not req[0]:
        return True
    if not plain_f32(*inputs, outputs[0]):
        return False
    x, w = _rows(p, inputs[0]), inputs[1]
    bias = not p.no_bias
    m, k = x.shape
    pl = plan(lib, "forward", m, k, p.num_hidden, bias)
    if pl is None:
        return False
    y = outputs[0].reshape(m, p.num_hidden)
    res = target(y, req[0], inputs)
    args = {d.ARG_SRC: x, d.ARG_WEIGHTS: w, d.ARG_DST: res}
    if bias:
        args[d.ARG_BIAS] = inputs[2]
    pl.run(args)
    finish(y, req[0], res)
    return True


def backward(lib, ctx, inputs, req, outputs, p):
    og, x, w = inputs[:3]
    bias = not p.no_bias
    if not plain_f32(og, x, w, *(o for o, r in zip(outputs, req) if r)):
        return False         # (a gradient not asked for may be a placeholder of any layout)
    x = _rows(p, x)
    m, k = x.shape
    n = p.num_hidden
    g = og.reshape(m, n)
    data_plan = plan(lib, "data", m, k, n) if req[0] else None
    weight_plan = plan(lib, "weight", m, k, n) if req[1] else None
    if (req[0] and data_plan is None) or (req[1] and weight_plan is None):
        return False
    if req[1]:
        dw = target(outputs[1], req[1], inputs)
        weight_plan.run({d.ARG_SRC: g, d.ARG_WEIGHTS: x, d.ARG_DST: dw})
        finish(outputs[1], req[1], dw)
    if bias and req[2]:
        assign(outputs[2], req[2], g.sum(axis=0).reshape(outputs[2].shape))
    if req[0]:
        dx = _rows(p, outputs[0])
        res = target(dx, req[0], inputs)
        data_plan.run({d.ARG_SRC: g, d.ARG_WEIGHTS: w, d.ARG_DST: res})
        finish(dx, req[0], res)
    return True


# The rules: plugins/ops-onednn/bench/layers.py's fully-connected rows on a 2-core AMD EPYC
# with AVX-512 (Zen 5), and bench/executor.py's MLP step. oneDNN's matmul ran the forward
# products of 2^24 multiply-adds and more in 0.71-0.79x ops-nn's time, and the gradients of
# 2^25 and more in 0.84-1.0x; the gradient at 64x800x500 lost (1.1x). On one thread, the
# products of 2^20 to 2^22 (the MLP's last layer, 128x1024x10) ran as fast forward and
# in 0.4-0.7x the time of OpenBLAS's one thread backward; smaller ones lost 2-4x (its fixed
# cost), and between 2^22 and the rules' sizes it was at best even. With AVX2 alone
# (ONEDNN_MAX_CPU_ISA=AVX2, OpenBLAS's Haswell kernels) it ran the MLP's products at best as
# fast, and up to 1.7x slower.
_SHARED = 1 << 22


def _wins(first: int, least: int):
    """The rule of the op whose data is ``inputs[first]`` (the weight follows it): a
    product of at least ``least`` multiply-adds, or a small one on one thread (2^20 to
    ``_SHARED``), on a core with AVX-512."""
    def rule(ctx, inputs, p) -> bool:
        n, k = inputs[first + 1].shape
        macs = inputs[first].size // k * k * n
        return (macs >= least or 1 << 20 <= macs < _SHARED) and d.avx512()
    return rule


extend_op("FullyConnected").set_attr(
    KEY, kernel("FullyConnected", forward, _wins(0, 1 << 24)), PLEVEL)
extend_op("_backward_FullyConnected").set_attr(
    KEY, kernel("_backward_FullyConnected", backward, _wins(1, 1 << 25)), PLEVEL)
