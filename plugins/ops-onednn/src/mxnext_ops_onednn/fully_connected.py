"""FullyConnected (float32) and its gradient on oneDNN inner products over the row-major
(batch, features) view of the data, outranking ops-nn's kernels."""

from __future__ import annotations

from opsdk import extend_op

from . import _dnnl as d
from ._dispatch import KEY, finish, kernel, plain_f32, target
from ._prim import Desc, Plan, attr_user_scratchpad, cached, create_pd

PLEVEL = 20


def _rows(p, a):
    return a.reshape(a.shape[0], -1) if p.flatten else a.reshape(-1, a.shape[-1])


def _forward_pd(lib, m, k, n, bias, attr=None):
    x, w, y = Desc(lib, (m, k)), Desc(lib, (n, k)), Desc(lib, (m, n))
    b = Desc(lib, (n,)) if bias else None
    return create_pd(lib, "dnnl_inner_product_forward_primitive_desc_create", lib.engine,
                     d.FORWARD_TRAINING, x.md, w.md, b.md if b else None, y.md, attr)


def _build(lib, kind, m, k, n, bias):
    attr = attr_user_scratchpad(lib)
    try:
        if kind == "forward":
            pd = _forward_pd(lib, m, k, n, bias, attr)
            names, outputs = (d.ARG_SRC, d.ARG_WEIGHTS, d.ARG_DST, d.ARG_BIAS), {d.ARG_DST}
        else:
            hint = _forward_pd(lib, m, k, n, bias)
            if hint is None:
                return None
            x, w, y = Desc(lib, (m, k)), Desc(lib, (n, k)), Desc(lib, (m, n))
            try:
                if kind == "data":
                    pd = create_pd(lib, "dnnl_inner_product_backward_data_primitive_desc_create",
                                   lib.engine, x.md, w.md, y.md, hint, attr)
                    names = (d.ARG_DIFF_SRC, d.ARG_WEIGHTS, d.ARG_DIFF_DST)
                    outputs = {d.ARG_DIFF_SRC}
                else:
                    b = Desc(lib, (n,)) if bias else None
                    pd = create_pd(lib,
                                   "dnnl_inner_product_backward_weights_primitive_desc_create",
                                   lib.engine, x.md, w.md, b.md if b else None, y.md, hint, attr)
                    names = (d.ARG_SRC, d.ARG_DIFF_WEIGHTS, d.ARG_DIFF_DST, d.ARG_DIFF_BIAS)
                    outputs = {d.ARG_DIFF_WEIGHTS, d.ARG_DIFF_BIAS}
            finally:
                lib.dnnl_primitive_desc_destroy(hint)
        if pd is None:
            return None
        shapes = ((m, k), (n, k), (m, n), (n,))[:4 if bias else 3]
        return Plan(lib, pd, {a: Desc(lib, s) for a, s in zip(names, shapes)}, outputs)
    finally:
        lib.dnnl_primitive_attr_destroy(attr)


def plan(lib, kind, m, k, n, bias):
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
        args[d.ARG_BIAS] = inputs[2].reshape(-1)
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
    g = og.reshape(m, p.num_hidden)
    want_data, want_weight = bool(req[0]), bool(req[1]) or (bias and bool(req[2]))
    data_plan = plan(lib, "data", m, k, p.num_hidden, False) if want_data else None
    weight_plan = plan(lib, "weight", m, k, p.num_hidden, bias) if want_weight else None
    if (want_data and data_plan is None) or (want_weight and weight_plan is None):
        return False
    if want_weight:
        dw = target(outputs[1], req[1], inputs)
        args = {d.ARG_SRC: x, d.ARG_DIFF_WEIGHTS: dw, d.ARG_DIFF_DST: g}
        if bias:
            db = target(outputs[2].reshape(-1), req[2], inputs)
            args[d.ARG_DIFF_BIAS] = db
        weight_plan.run(args)
        if req[1]:
            finish(outputs[1], req[1], dw)
        if bias and req[2]:
            finish(outputs[2].reshape(-1), req[2], db)
    if want_data:
        dx = _rows(p, outputs[0])
        res = target(dx, req[0], inputs)
        data_plan.run({d.ARG_DIFF_SRC: res, d.ARG_WEIGHTS: w, d.ARG_DIFF_DST: g})
        finish(dx, req[0], res)
    return True


def _measured_faster(ctx, inputs, p) -> bool:
    """Whether oneDNN takes the call: at no shape measured so far. In whole training steps on
    2 cores (bench/executor.py's MLP and LeNet, three interleaved rounds) ops-nn's row blocks
    on the shared kernel threads ran 5-45% more samples/s than this kernel, forward and
    gradients alike; the code stays for a rule measured where it wins (the tests drop the
    rule to check it)."""
    return False


extend_op("FullyConnected").set_attr(
    KEY, kernel("FullyConnected", forward, _measured_faster), PLEVEL)
extend_op("_backward_FullyConnected").set_attr(
    KEY, kernel("_backward_FullyConnected", backward, _measured_faster), PLEVEL)
