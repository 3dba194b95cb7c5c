"""2-D max pooling and its gradient as one kernel each (``FCompute<gpu>``), where the generic
xp body makes several passes per window tap (nine taps: ~50 launches for the gradient).
MXNet's rules: the maximum of the window's positions inside the input, the gradient going
to the first position holding it (row-major window order). NCHW float32/float64, 'valid' or
'full' convention; any other pooling runs the generic body."""

from __future__ import annotations

from ._cupy import cupy, generic

__all__ = ["forward", "backward"]

_WINDOW = """
    int ow = i % OW, oh = (i / OW) % OH, nc = i / (OW * OH);
    int h0 = oh * SH - PH, w0 = ow * SW - PW;
    long long base = (long long)nc * H * W;
    T best = 0; long long arg = -1;
    for (int kh = 0; kh < KH; ++kh) {
        int h = h0 + kh;
        if (h < 0 || h >= H) continue;
        for (int kw = 0; kw < KW; ++kw) {
            int w = w0 + kw;
            if (w < 0 || w >= W) continue;
            T v = x[base + h * W + w];
            if (arg < 0 || v > best) { best = v; arg = base + h * W + w; }
        }
    }
"""
_ARGS = "int32 H, int32 W, int32 OH, int32 OW, int32 KH, int32 KW, int32 SH, int32 SW, " \
        "int32 PH, int32 PW"
_k = {}


def _kernel(name):
    k = _k.get(name)
    if k is None:
        cp = cupy()
        if name == "fwd":
            k = cp.ElementwiseKernel(f"raw T x, {_ARGS}", "T y",
                                     _WINDOW + "y = best;", "mxnext_maxpool2d")
        else:
            k = cp.ElementwiseKernel(f"raw T x, T og, {_ARGS}", "raw T gx",
                                     _WINDOW + "if (arg >= 0) atomicAdd(&gx[arg], og);",
                                     "mxnext_maxpool2d_grad")
        _k[name] = k
    return k


def _usable(p, x):
    return (p.pool_type == "max" and not p.global_pool and len(p.kernel) == 2
            and p.layout in (None, "NCHW") and p.pooling_convention in ("valid", "full")
            and x.dtype.kind == "f" and x.itemsize >= 4)


def _geometry(p, x, y):
    stride = tuple(p.stride) or (1, 1)
    pad = tuple(p.pad) or (0, 0)
    return (x.shape[2], x.shape[3], y.shape[2], y.shape[3], *p.kernel, *stride, *pad)


def forward(ctx, inputs, req, outputs, p):
    x, y = inputs[0], outputs[0]
    if not _usable(p, x) or not req[0]:
        return generic("Pooling", ctx, inputs, req, outputs, p)
    x = cupy().ascontiguousarray(x)
    if req[0] == 3:
        y += _kernel("fwd")(x, *_geometry(p, x, y), size=y.size).reshape(y.shape)
    else:
        _kernel("fwd")(x, *_geometry(p, x, y), y)


def backward(ctx, inputs, req, outputs, p):
    og, x, y = inputs
    gx = outputs[0]
    if not _usable(p, x) or not req[0] or og.dtype != x.dtype or gx.dtype != x.dtype:
        return generic("_backward_Pooling", ctx, inputs, req, outputs, p)
    cp = cupy()
    x = cp.ascontiguousarray(x)
    direct = req[0] in (1, 2) and gx.flags.c_contiguous
    acc = gx if direct else cp.empty(x.shape, x.dtype)
    acc.fill(0)
    _kernel("bwd")(x, cp.ascontiguousarray(og), *_geometry(p, x, og), acc)
    if not direct:
        if req[0] == 3:
            gx += acc
        else:
            gx[...] = acc
