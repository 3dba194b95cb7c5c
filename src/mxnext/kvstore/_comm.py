"""How a KVStore moves data: ``engine_call`` (the one way a store reads and writes NDArrays,
``opsdk.kvstore.engine_call`` for backend authors) and the sums built on it.

A function pushed with ``engine_call`` reads its ``reads`` and writes its ``writes`` through
their engine vars, so pushes and pulls of one key run in the order they were issued, those of
different keys overlap, and nothing waits on the caller's thread. A sum of one source is a
copy (the device's ``copy``, or ``copy_across`` from another device type); a source on
another device type is brought over through host memory before it is added.
"""

from __future__ import annotations

import numpy as np

from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime.base import MXNetError
from .._runtime.engine import FnProperty, OprHandle

__all__ = ["engine_call", "assign_sum", "assign_sum_compressed"]


def engine_call(fn, reads=(), writes=(), *, name, priority=0, asynchronous=False,
                on_error=None) -> None:
    """Push ``fn(*data)`` to the engine, ``data`` being the device arrays (numpy on cpu) of
    ``reads`` then ``writes`` (NDArrays).

    It starts once every earlier-pushed write of any of the arrays, and every earlier read of
    ``writes``, is done; whatever is pushed later on ``writes`` waits for it. ``fn`` runs on
    an engine thread of the first write's (else read's) context. With ``asynchronous`` it is
    called as ``fn(*data, done)`` and finishes when ``done()`` is called, from any thread
    (``done(exc)`` reports a failure): it must return at once, handing the work to another
    thread. An exception (or ``done(exc)``) lands on ``writes``: waiting on them raises it.

    When an array holds the error of an earlier operation the call is skipped and ``writes``
    inherit that error; an asynchronous call given ``on_error`` runs ``on_error(exc, *data,
    done)`` instead (a collective its peers wait for can still tell them).
    """
    arrays = (*reads, *writes)
    if not writes and not reads:
        raise MXNetError(f"engine_call {name!r}: give at least one NDArray to read or write")
    ctx = (writes or reads)[0].context
    data = [a._data() for a in arrays]
    const = tuple(a._chunk.var for a in reads)
    mutate = tuple(a._chunk.var for a in writes)
    eng = _engine.get()
    if asynchronous:     # it only hands work over: run it on this thread when its arrays are
        if on_error is None:       # free, else on a worker of the ASYNC lane once they are
            eng.push_async(lambda rctx, done: fn(*data, done), ctx, const, mutate,
                           prop=FnProperty.ASYNC, priority=priority, name=name, cheap=True)
            return

        def guarded(rctx, done):
            box = next((v.error for v in (*const, *mutate)
                        if v.error is not None and v.error.exc is not None), None)
            if box is None:
                fn(*data, done)
            else:
                on_error(box.exc, *data, done)

        eng.push(OprHandle(guarded, True, const, mutate, FnProperty.ASYNC, name,
                           skip_on_error=False, cheap=True), ctx, priority)
    else:
        mutate = tuple(dict.fromkeys(mutate))
        const = tuple(v for v in dict.fromkeys(const) if v not in mutate)
        cheap = _device.get(ctx.device_type).inline_policy.cheap(
            sum(d.nbytes for d in data[len(reads):]))
        eng.push_kernel(lambda rctx: fn(*data), ctx, const, mutate, name, cheap,
                        priority=priority)


def _check_shapes(srcs, dst, what, key):
    for s in srcs:
        if s.shape != dst.shape:
            raise MXNetError(f"{what}: key {key!r}: expected arrays of shape {dst.shape}, "
                             f"got one of shape {s.shape}")


def assign_sum(srcs, dst, priority=0, what="KVStore", key=None) -> None:
    """Push ``dst[...] = srcs[0] + srcs[1] + ...`` (cast to ``dst``'s dtype) to the engine."""
    _check_shapes(srcs, dst, what, key)
    dctx = dst.context
    ddev = _device.get(dctx.device_type)
    xp = ddev.xp
    devs = [_device.get(s.context.device_type) for s in srcs]

    def on_dst(v, dev):
        return v if dev is ddev else ddev.from_host(dev.to_host(v), dctx.device_id)

    def fn(*data):
        d = data[-1]
        if len(srcs) == 1:
            if devs[0] is ddev:
                ddev.copy(d, data[0])
            else:
                _device.copy_across(ddev, d, dctx.device_id, devs[0], data[0])
            return
        vals = [on_dst(v, dev) for v, dev in zip(data, devs)]
        xp.add(vals[0], vals[1], out=d, casting="unsafe")
        for v in vals[2:]:
            xp.add(d, v, out=d, casting="unsafe")

    engine_call(fn, srcs, (dst,), name=f"{what}({key!r})", priority=priority)


def assign_sum_compressed(srcs, residuals, dst, gc, priority=0, what="KVStore",
                          key=None) -> None:
    """Push ``dst[...] = sum(dequantize(quantize(src, residual)))``: each source is quantized
    with its own residual (``gc``, a ``GradientCompression``), as if sent compressed to
    ``dst``'s device, which sums what it receives. Host (numpy) arrays only."""
    _check_shapes(srcs, dst, what, key)
    gc.check_dtype(what, key, dst.dtype)
    n = len(srcs)

    def fn(*data):
        vals, res, d = data[:n], data[n:2 * n], data[-1]
        packed = np.empty(gc.compressed_size(d.size), np.float32)
        for i, (v, r) in enumerate(zip(vals, res)):
            gc.quantize(v, r, packed)
            gc.dequantize(packed, d, add=i > 0)

    engine_call(fn, srcs, (*residuals, dst), name=f"{what}({key!r}, 2bit)", priority=priority)
