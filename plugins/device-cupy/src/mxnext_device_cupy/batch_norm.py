"""BatchNorm's forward and backward as a few fused kernels (``FCompute<gpu>``): two
per-channel reductions, one per-channel kernel for the statistics, one elementwise pass
for the output or the data gradient, where the generic xp body makes eight to twelve
passes and full-size temporaries. The rules are those of ``mxnext_ops_nn.batch_norm``
(MXNet 1.9's): batch statistics when training, the moving ones otherwise, the moving
statistics updated by the backward of a training step. float32 and float64 data on any
channel axis; float16 data (float32 statistics) runs the generic body.
"""

from __future__ import annotations

from ._cupy import cupy, generic

__all__ = ["forward", "backward"]

_k = {}

_SOURCES = {
    # (sum of squared deviations from m) over the reduced axes
    "sqdev": ("reduce", "T x, T m", "T y", "(x - m) * (x - m)"),
    # sum of (x - m) * g over the reduced axes
    "dot": ("reduce", "T x, T g, T m", "T y", "(x - m) * g"),
    # per channel: mean, var -> the affine scale and shift, and hidden output 2
    "stats": ("map", "T mean, T var, T gamma, T beta, T eps, bool fix, bool var_out",
              "T scale, T shift, T second",
              "T inv = (var == 0 && eps == 0) ? 0 : 1 / sqrt(var + eps);"
              "scale = fix ? inv : inv * gamma; shift = beta - mean * scale;"
              "second = var_out ? var : inv;"),
    "affine": ("map", "T x, T scale, T shift", "T y", "y = x * scale + shift"),
    # per channel for the backward: the data gradient's coefficients, gamma's gradient, and
    # (training) the moving statistics' update
    "bstats": ("map", "T sum_g, T dotp, T mean, T second, T gamma, T eps, T n, T momentum, "
               "bool fix, bool var_out, bool training",
               "T iw, T k, T cg, T dgamma, T mm, T mv",
               "T var, inv;"
               "if (training) {"
               "  if (var_out) { var = second; inv = (var == 0 && eps == 0) ? 0 : 1 / sqrt(var + eps); }"
               "  else { inv = second; var = 1 / (second * second) - eps; }"
               "  mm = mm * momentum + mean * (1 - momentum);"
               "  mv = mv * momentum + var * (1 - momentum);"
               "  k = dotp * inv * inv / n; cg = sum_g / n;"
               "} else { inv = second; k = 0; cg = 0; }"
               "iw = fix ? inv : inv * gamma;"
               "dgamma = fix ? 0 : dotp * inv;"),
    "dx": ("map", "T g, T x, T m, T cg, T k, T iw", "T y", "y = (g - cg - (x - m) * k) * iw"),
}


def _kernel(name):
    k = _k.get(name)
    if k is None:
        kind, ins, outs, body = _SOURCES[name]
        cp = cupy()
        if kind == "reduce":
            k = cp.ReductionKernel(ins, outs, body, "a + b", "y = a", "0", f"mxnext_bn_{name}")
        else:
            k = cp.ElementwiseKernel(ins, outs, body, f"mxnext_bn_{name}")
        _k[name] = k
    return k


def _var_out(op_name):
    return op_name != "BatchNorm"


def _usable(x, *arrays):
    return x.dtype.kind == "f" and x.itemsize >= 4 and all(a.dtype == x.dtype for a in arrays)


def _views(x, axis):
    """``x`` as (outer, C, inner)."""
    a = axis % x.ndim
    outer = 1
    for n in x.shape[:a]:
        outer *= n
    return x.reshape(outer, x.shape[a], -1)


def _per_channel(reduce, *arrays):
    """A reduction of (outer, C, inner) arrays to (C,): over the contiguous inner axis first,
    then the outer one (cupy reduces a contiguous axis far faster than axes (0, 2) at once)."""
    return reduce(*arrays, axis=2).sum(axis=0)


def _put(out, req, value):
    if req == 3:
        out += value
    elif req:
        out[...] = value


def _forward(op_name):
    var_out = _var_out(op_name)

    def forward(ctx, inputs, req, outputs, p):
        x, gamma, beta, mm, mv = inputs
        if not _usable(x, gamma, beta, mm, mv, *outputs):
            return generic(op_name, ctx, inputs, req, outputs, p)
        cp = cupy()
        x3 = _views(x, p.axis)
        bc = (1, -1, 1)
        if ctx.is_train and not p.use_global_stats:
            n = x3.shape[0] * x3.shape[2]
            mean = _per_channel(cp.sum, x3) / n
            var = _per_channel(_kernel("sqdev"), x3, mean.reshape(bc)) / n
        else:
            mean, var = mm, mv
        c = x3.shape[1]
        scale, shift, second = (cp.empty(c, x.dtype) for _ in range(3))
        _kernel("stats")(mean, var, gamma, beta, p.eps, p.fix_gamma, var_out,
                         scale, shift, second)
        _put(outputs[1], req[1], mean)
        _put(outputs[2], req[2], var if var_out else second)
        if req[0]:
            out3 = outputs[0].reshape(x3.shape)
            if req[0] == 3:
                out3 += _kernel("affine")(x3, scale.reshape(bc), shift.reshape(bc))
            else:
                _kernel("affine")(x3, scale.reshape(bc), shift.reshape(bc), out3)
    forward.__name__ = f"{op_name}_forward"
    return forward


def _backward(op_name):
    var_out = _var_out(op_name)

    def backward(ctx, inputs, req, outputs, p):
        og, mean, second, x, gamma, mm, mv = inputs
        if not _usable(x, og, mean, second, gamma, mm, mv, *outputs):
            return generic(f"_backward_{op_name}", ctx, inputs, req, outputs, p)
        cp = cupy()
        x3 = _views(x, p.axis)
        g3 = og.reshape(x3.shape)
        bc = (1, -1, 1)
        n = x3.shape[0] * x3.shape[2]
        training = ctx.is_train and not p.use_global_stats
        if not training:    # the moving statistics, as the forward used them (mm is written
            mean = mm.copy()  # by the kernel below only when training, but is an output there)
            second = cp.empty_like(mv)
            _kernel("stats")(mean, mv, gamma, gamma, p.eps, True, False,
                             cp.empty_like(mv), cp.empty_like(mv), second)
        sum_g = _per_channel(cp.sum, g3)
        dotp = _per_channel(_kernel("dot"), x3, g3, mean.reshape(bc))
        c = x3.shape[1]
        iw, k, cg, dgamma = (cp.empty(c, x.dtype) for _ in range(4))
        _kernel("bstats")(sum_g, dotp, mean, second, gamma, p.eps, n, p.momentum, p.fix_gamma,
                          var_out, training, iw, k, cg, dgamma, mm, mv)
        if req[0]:
            out3 = outputs[0].reshape(x3.shape)
            if req[0] == 3:
                out3 += _kernel("dx")(g3, x3, mean.reshape(bc), cg.reshape(bc), k.reshape(bc),
                                      iw.reshape(bc))
            else:
                _kernel("dx")(g3, x3, mean.reshape(bc), cg.reshape(bc), k.reshape(bc),
                              iw.reshape(bc), out3)
        _put(outputs[1], req[1], dgamma)
        _put(outputs[2], req[2], sum_g)
    backward.__name__ = f"_backward_{op_name}"
    return backward


OPS = ("BatchNorm", "BatchNorm_v1", "_contrib_SyncBatchNorm")
forward = {op: _forward(op) for op in OPS}
backward = {op: _backward(op) for op in OPS}
