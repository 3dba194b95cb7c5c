"""The optimizer updates as fused elementwise kernels (``FCompute<gpu>``): one launch per
weight where the generic xp body takes four to eight, with MXNet's update rules (the
``mxnext_ops_nn.optimizer`` docs). Weights, gradients and states of one float dtype; any
other mix, or an ``out`` that is not the weight's dtype, runs the generic body."""

from __future__ import annotations

from ._cupy import cupy, generic

__all__ = ["sgd", "sgd_mom", "adam", "multi_sgd", "multi_sgd_mom"]

# g: the clipped, rescaled gradient, as MXNet's kernels form it
_GRAD = "T s = g * rescale; if (clip >= 0) s = s < -clip ? -clip : (s > clip ? clip : s);"
_SOURCES = {
    "sgd": ("T w, T g, T lr, T wd, T rescale, T clip", "T out",
            _GRAD + "out = w - lr * wd * w - lr * s;"),
    "sgd_mom": ("T w, T g, T lr, T wd, T rescale, T clip, T momentum", "T out, T mom",
                _GRAD + "mom = momentum * mom - lr * wd * w - lr * s; out = w + mom;"),
    "adam": ("T w, T g, T lr, T wd, T rescale, T clip, T beta1, T beta2, T eps",
             "T out, T mean, T var",
             "T s = g * rescale + wd * w;"
             "if (clip >= 0) s = s < -clip ? -clip : (s > clip ? clip : s);"
             "mean = beta1 * mean + (1 - beta1) * s;"
             "var = beta2 * var + (1 - beta2) * s * s;"
             "out = w - lr * mean / (sqrt(var) + eps);"),
}
_kernels = {}


def _kernel(name, inplace):
    """The update's kernel; ``inplace``: ``out`` is the weight itself, which the kernel then
    takes as its first output (cupy would copy an input that overlaps an output)."""
    k = _kernels.get((name, inplace))
    if k is None:
        ins, outs, body = _SOURCES[name]
        if inplace:
            ins, body = ins.split(", ", 1)[1], "T w = out;" + body
        k = _kernels[name, inplace] = cupy().ElementwiseKernel(
            ins, outs, body, f"mxnext_{name}_update{'_inplace' if inplace else ''}")
    return k


def _launch(name, w, g, scalars, out, states=()):
    """Update ``name`` of weight ``w`` with gradient ``g`` into ``out`` and ``states``."""
    inplace = out is w or (out.data.ptr == w.data.ptr and out.shape == w.shape
                           and out.strides == w.strides)
    args = (g, *scalars, out, *states)
    _kernel(name, inplace)(*args) if inplace else _kernel(name, False)(w, *args)


def _plain(req, out, *arrays):
    """Whether the fused kernel may write ``out`` (WRITE_TO / in place, one dtype)."""
    dt = out.dtype
    return req in (1, 2) and dt.kind == "f" and all(a.dtype == dt for a in arrays)


def sgd(ctx, inputs, req, outputs, p):
    w, g = inputs
    if not _plain(req[0], outputs[0], w, g):
        return generic("sgd_update", ctx, inputs, req, outputs, p)
    _launch("sgd", w, g, (p.lr, p.wd, p.rescale_grad, p.clip_gradient), outputs[0])


def sgd_mom(ctx, inputs, req, outputs, p):
    w, g, mom = inputs
    if not _plain(req[0], outputs[0], w, g, mom):
        return generic("sgd_mom_update", ctx, inputs, req, outputs, p)
    _launch("sgd_mom", w, g, (p.lr, p.wd, p.rescale_grad, p.clip_gradient, p.momentum),
            outputs[0], (mom,))


def adam(ctx, inputs, req, outputs, p):
    w, g, mean, var = inputs
    if not _plain(req[0], outputs[0], w, g, mean, var):
        return generic("adam_update", ctx, inputs, req, outputs, p)
    _launch("adam", w, g, (p.lr, p.wd, p.rescale_grad, p.clip_gradient, p.beta1, p.beta2,
                           p.epsilon), outputs[0], (mean, var))


def _multi(name, stride):
    def compute(ctx, inputs, req, outputs, p):
        groups = [inputs[i * stride:(i + 1) * stride] for i in range(p.num_weights)]
        if not all(_plain(r, o, *grp) for r, o, grp in zip(req, outputs, groups)):
            return generic(f"multi_{name}_update", ctx, inputs, req, outputs, p)
        for i, (w, g, *mom) in enumerate(groups):
            scalars = (p.lrs[i], p.wds[i], p.rescale_grad, p.clip_gradient)
            _launch(name, w, g, scalars + ((p.momentum,) if mom else ()), outputs[i], mom)
    compute.__name__ = f"multi_{name}_update"
    return compute


multi_sgd = _multi("sgd", 2)
multi_sgd_mom = _multi("sgd_mom", 3)
