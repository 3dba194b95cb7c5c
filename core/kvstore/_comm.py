"""The one data movement a KVStore needs: ``dst = sum(srcs)`` as one engine function.

A single source makes it a copy; sources on other device types are brought over through
the devices' host copies. It reads the sources' vars and writes ``dst``'s, so pushes and
pulls of one key run in the order they were issued and nothing waits on the caller's
thread.
"""

from __future__ import annotations

from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime.base import MXNetError
from ..ndarray._plan import CHEAP_BYTES

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
    parts = [(s._data(), s.context.device_type) for s in srcs]

    def on_dst(v, dev_type):
        if dev_type == dctx.device_type:
            return v
        return ddev.from_numpy(_device.get(dev_type).to_numpy(v), dctx.device_id)

    def fn(rctx):
        vals = [on_dst(v, t) for v, t in parts]
        if len(vals) == 1:
            d[...] = vals[0]
            return
        xp.add(vals[0], vals[1], out=d, casting="unsafe")
        for v in vals[2:]:
            xp.add(d, v, out=d, casting="unsafe")

    _engine.get().push_sync(fn, dctx, tuple(s._chunk.var for s in srcs), (dst._chunk.var,),
                            priority=priority, name=f"{what}({key!r})",
                            cheap=d.nbytes <= CHEAP_BYTES)
