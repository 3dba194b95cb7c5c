"""softmax, log_softmax and softmin over the last axis (and SoftmaxOutput's forward) as one
kernel launch each way (``FCompute<gpu>``): a thread block per row reduces the row's maximum
and sum in shared memory, where the generic xp body takes six launches and full-size
temporaries. The generic body's arithmetic: ``s = (x - max) / t``, ``exp(s) / sum`` or
``s - log(sum)``; a row whose maximum is not finite uses 0. float32/float64 without
``use_length`` or a ``dtype`` override; anything else runs the generic body."""

from __future__ import annotations

import numpy as np

from ._cupy import cupy, generic

__all__ = ["forward", "backward", "softmax_output"]

_THREADS = 128
_SOURCE = r"""
__device__ inline float neg_inf(float) { return __int_as_float(0xff800000); }
__device__ inline double neg_inf(double) { return __longlong_as_double(0xfff0000000000000ULL); }

#define REDUCE(op)                                                            \
    buf[tid] = acc; __syncthreads();                                          \
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {                            \
        if (tid < s) { T a = buf[tid], b = buf[tid + s]; buf[tid] = op; }     \
        __syncthreads();                                                      \
    }                                                                         \
    acc = buf[0]; __syncthreads();

extern "C" __global__ void fwd(const T* x, T* y, long long rows, int k, T t, int log_mode,
                               int negate) {
    __shared__ T buf[THREADS];
    int tid = threadIdx.x;
    const T* xr = x + blockIdx.x * (long long)k;
    T* yr = y + blockIdx.x * (long long)k;
    T sign = negate ? -1 : 1;
    T acc = neg_inf((T)0);
    for (int j = tid; j < k; j += blockDim.x) { T v = sign * xr[j]; acc = v > acc ? v : acc; }
    REDUCE(b > a ? b : a)
    T m = isfinite(acc) ? acc : 0;
    acc = 0;
    for (int j = tid; j < k; j += blockDim.x) acc += exp((sign * xr[j] - m) / t);
    REDUCE(a + b)
    T total = acc, lt = log(acc);
    for (int j = tid; j < k; j += blockDim.x) {
        T s = (sign * xr[j] - m) / t;
        yr[j] = log_mode ? s - lt : exp(s) / total;
    }
}

extern "C" __global__ void bwd(const T* og, const T* out, T* gx, long long rows, int k, T t,
                               int log_mode, int negate) {
    __shared__ T buf[THREADS];
    int tid = threadIdx.x;
    long long base = blockIdx.x * (long long)k;
    T acc = 0;
    for (int j = tid; j < k; j += blockDim.x)
        acc += log_mode ? og[base + j] : og[base + j] * out[base + j];
    REDUCE(a + b)
    for (int j = tid; j < k; j += blockDim.x) {
        T o = out[base + j], g = og[base + j];
        T d = log_mode ? g - exp(o) * acc : o * (g - acc);
        if (negate) d = -d;
        gx[base + j] = t != 1 ? d / t : d;
    }
}
"""
_OPS = {"softmax": (0, 0), "log_softmax": (1, 0), "softmin": (0, 1)}
_modules = {}


def _kernel(dtype, name):
    mod = _modules.get(dtype)
    if mod is None:
        ctype = {np.float32: "float", np.float64: "double"}[dtype.type]
        mod = _modules[dtype] = cupy().RawModule(
            code=f"#define T {ctype}\n#define THREADS {_THREADS}\n" + _SOURCE)
    return mod.get_function(name)


def _rows_of(a):
    return a.size // a.shape[-1], a.shape[-1]


def _launch(name, arrays, out, req, t, log_mode, negate):
    """One block per row over (rows, k) C-contiguous ``arrays``, into ``out`` per ``req``."""
    cp = cupy()
    arrays = [cp.ascontiguousarray(a) for a in arrays]
    direct = req in (1, 2) and out.flags.c_contiguous
    dst = out if direct else cp.empty(out.shape, out.dtype)
    rows, k = _rows_of(dst)
    dt = dst.dtype
    if rows:
        _kernel(dt, name)((rows,), (_THREADS,), (*arrays, dst, np.int64(rows), np.int32(k),
                                                  dt.type(t), np.int32(log_mode),
                                                  np.int32(negate)))
    if not direct:
        if req == 3:
            out += dst
        elif req:
            out[...] = dst


def _usable(p, x, *others):
    return (not p.use_length and p.dtype is None and p.axis % x.ndim == x.ndim - 1
            and x.dtype.type in (np.float32, np.float64) and all(a.dtype == x.dtype
                                                                 for a in others))


def _temperature(p):
    return 1.0 if p.temperature is None else p.temperature


def _forward(op):
    log_mode, negate = _OPS[op]

    def compute(ctx, inputs, req, outputs, p):
        x = inputs[0]
        if not req[0] or not _usable(p, x, outputs[0]):
            return generic(op, ctx, inputs, req, outputs, p)
        _launch("fwd", [x], outputs[0], req[0], _temperature(p), log_mode, negate)
    compute.__name__ = f"{op}_forward"
    return compute


def _backward(op):
    log_mode, negate = _OPS[op]

    def compute(ctx, inputs, req, outputs, p):
        og, out = inputs[0], inputs[-1]
        if not req[0] or not _usable(p, og, out, outputs[0]):
            return generic(f"_backward_{op}", ctx, inputs, req, outputs, p)
        _launch("bwd", [og, out], outputs[0], req[0], _temperature(p), log_mode, negate)
    compute.__name__ = f"{op}_backward"
    return compute


def softmax_output(ctx, inputs, req, outputs, p):
    """SoftmaxOutput's forward: a softmax over each row of the data as (batch, rest)."""
    x = inputs[0]
    if (p.multi_output or p.preserve_shape or not req[0] or x.ndim < 2
            or x.dtype.type not in (np.float32, np.float64) or outputs[0].dtype != x.dtype
            or not outputs[0].flags.c_contiguous):
        return generic("SoftmaxOutput", ctx, inputs, req, outputs, p)
    rows = x.reshape(x.shape[0], -1)
    _launch("fwd", [rows], outputs[0].reshape(rows.shape), req[0], 1.0, 0, 0)


forward = {op: _forward(op) for op in _OPS}
backward = {op: _backward(op) for op in _OPS}
