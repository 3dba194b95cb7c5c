"""The one data movement a KVStore needs: ``dst = sum(srcs)`` as one engine function.

A single source makes it a copy (the devices' ``copy``, or ``copy_across`` from another
device type); a source on another device type is brought over through host memory before
it is added. It reads the sources' vars and writes ``dst``'s, so pushes and pulls of one
key run in the order they were issued and nothing waits on the caller's thread.
"""

from __future__ import annotations

from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime.base import MXNetError

__all__ = ["assign_sum"]


def assign_sum(srcs, dst, priority=0, what="KVStore", key=None) -> None:
    """Push ``dst[...] = srcs[0] + srcs[1] + ...`` (cast to ``dst``'s dtype) to the engine."""
    for s in srcs:
        if s.shape != dst.shape:
            raise MXNetError(f"{what}: key {key!r}: expected arrays of shape {dst.shape}, "
                             f"got one of shape {s.shape}")
    dctx = dst.context
    ddev = _device.get(dctx.device_type)
    xp = ddev.xp
    d = dst._data()
    parts = [(s._data(), _device.get(s.context.device_type)) for s in srcs]

    def on_dst(v, dev):
        if dev is ddev:
            return v
        return ddev.from_host(dev.to_host(v), dctx.device_id)

    def fn(rctx):
        if len(parts) == 1:
            v, dev = parts[0]
            if dev is ddev:
                ddev.copy(d, v)
            else:
                _device.copy_across(ddev, d, dctx.device_id, dev, v)
            return
        vals = [on_dst(v, dev) for v, dev in parts]
        xp.add(vals[0], vals[1], out=d, casting="unsafe")
        for v in vals[2:]:
            xp.add(d, v, out=d, casting="unsafe")

    dvar = dst._chunk.var
    const = tuple(dict.fromkeys(s._chunk.var for s in srcs if s._chunk.var is not dvar))
    _engine.get().push_kernel(fn, dctx, const, (dvar,), f"{what}({key!r})",
                              ddev.inline_policy.cheap(d.nbytes), priority=priority)
