"""Copies, fills and accumulation of NDArrays through the engine (``copyto``, creation
functions, autograd's gradient writes)."""

from __future__ import annotations

from .._runtime import device as _device
from .._runtime.base import MXNetError
from .._runtime.engine import FnProperty
from ._imperative import new_array, push

__all__ = ["push_copy", "push_add", "push_fill", "filled", "filled_like"]


def push_copy(src, dst) -> None:
    """Copy ``src`` into ``dst`` (same shape; dtype cast; any two contexts) through the engine."""
    if src._shape != dst._shape:
        raise MXNetError(f"copyto: shape mismatch: source {src._shape} vs target {dst._shape}")
    s, d = src._data(), dst._data()
    sctx, dctx = src._ctx, dst._ctx
    sdev, ddev = _device.get(sctx.device_type), _device.get(dctx.device_type)
    if sdev is ddev:
        def fn(rctx):
            ddev.copy(d, s)
    else:
        def fn(rctx):
            _device.copy_across(ddev, d, dctx.device_id, sdev, s)
    gpu = dctx if dctx.device_type != "cpu" else sctx
    prop = FnProperty.NORMAL if gpu.device_type == "cpu" else (
        FnProperty.COPY_TO_GPU if gpu is dctx else FnProperty.COPY_FROM_GPU)
    push(fn, gpu, (src._chunk.var,), (dst._chunk.var,), "_copyto", d.nbytes, prop)


def push_add(src, dst) -> None:
    """``dst += src`` through the engine (gradient accumulation, ``grad_req='add'``)."""
    s, d = src._data(), dst._data()

    def fn(rctx):
        d[...] += s
    push(fn, dst._ctx, (src._chunk.var,), (dst._chunk.var,), "_grad_add", d.nbytes)


def push_fill(dst, value, name="_fill") -> None:
    """Fill ``dst`` with ``value``; ``name``: the engine's (and profiler's) name of it."""
    d = dst._data()
    dev = _device.get(dst._ctx.device_type)

    def fn(rctx):
        dev.fill(d, value)
    push(fn, dst._ctx, (), (dst._chunk.var,), name, d.nbytes)


def filled(shape, dtype, ctx, value):
    out = new_array(shape, dtype, ctx)
    push_fill(out, value)
    return out


def filled_like(a, value):
    return filled(a._shape, a._dtype, a._ctx, value)
