"""Per-device resources ops ask for (docs/internals.md "Resources", DESIGN.md §4).

``request(ctx, req)`` returns the one ``Resource`` of that kind on ``ctx``. Each
is guarded by its own engine var: an op that uses it lists ``resource.var`` in
its ``mutate_vars``, so users of one resource run one at a time, in push order,
which makes random streams reproducible on every engine.
"""

from __future__ import annotations

import enum
import threading

import numpy

from . import device as _device
from .context import Context
from . import engine as _engine
from . import storage as _storage
from .fork import in_child
from .parallel_random import ParallelRandom, base_seed

__all__ = ["ResourceRequest", "Resource", "request"]


class ResourceRequest(enum.IntEnum):
    """What an op needs besides its inputs (MXNet's ``ResourceRequest::Type``)."""
    RANDOM = 0
    TEMP_SPACE = 1
    PARALLEL_RANDOM = 2


class Resource:
    """One resource of kind ``req`` on ``ctx``; use it only inside a function that
    mutates ``self.var``."""

    __slots__ = ("ctx", "req", "var", "_gen", "_parallel", "_space", "__weakref__")

    def __init__(self, ctx, req):
        self.ctx = ctx
        self.req = ResourceRequest(req)
        self.var = _engine.get().new_var(f"resource:{req.name.lower()}@{ctx}")
        self._gen = self._parallel = None
        if req != ResourceRequest.TEMP_SPACE:
            seed = _seed_for(ctx)
            self._gen = self._new_generator(seed)
            if req == ResourceRequest.PARALLEL_RANDOM and ctx.device_type in _HOST_TYPES:
                self._parallel = ParallelRandom(base_seed(seed))
        self._space = None

    def get_random(self):
        """The device's random generator (``numpy.random.Generator`` on CPU). Fetch it
        inside the op: ``mx.random.seed`` replaces it."""
        if self.req == ResourceRequest.TEMP_SPACE:
            raise TypeError(f"resource {self.var.name}: get_random() needs a RANDOM resource")
        return self._gen

    def get_parallel_random(self):
        """MXNet's CPU random streams (``ParallelRandom``) on a host context, else None (a
        device's samplers draw from ``get_random()``). The samplers MXNet runs on them
        (uniform, normal, randint, exponential, Dropout's mask) ask for PARALLEL_RANDOM and
        draw here, so a seed gives MXNet's numbers."""
        if self.req != ResourceRequest.PARALLEL_RANDOM:
            raise TypeError(f"resource {self.var.name}: get_parallel_random() needs a "
                            f"PARALLEL_RANDOM resource")
        return self._parallel

    def get_space(self, shape, dtype=numpy.float32):
        """A ``shape``/``dtype`` array of scratch memory, reused across calls and grown
        when too small. Valid until the next ``get_space`` on this resource."""
        if self.req != ResourceRequest.TEMP_SPACE:
            raise TypeError(f"resource {self.var.name}: get_space() needs a TEMP_SPACE resource")
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        dtype = numpy.dtype(dtype)
        nbytes = dtype.itemsize
        for s in shape:
            nbytes *= s
        h = self._space
        if h is None or h.nbytes < nbytes:
            if h is not None:
                _storage.free(h, self.var)    # its old users may still be on a stream
                self._space = None
            h = self._space = _storage.alloc(nbytes, self.ctx)
        return _device.get(self.ctx.device_type).view(h.raw, dtype, shape)

    def _new_generator(self, seed):
        ctx = self.ctx
        entropy = (seed & 0xFFFFFFFFFFFFFFFF, ctx.device_typeid, ctx.device_id, int(self.req))
        dev = _device.get(self.ctx.device_type)
        make = getattr(dev, "random_generator", None)   # a device's own (the gpu: curand)
        return make(entropy, ctx.device_id) if make else dev.xp.random.default_rng(entropy)

    def _reseed(self, seed):
        self._gen = self._new_generator(seed)
        if self._parallel is not None:
            self._parallel.reseed(base_seed(seed))

    def __repr__(self):
        return f"<Resource {self.req.name} on {self.ctx}>"


_HOST_TYPES = ("cpu", "cpu_pinned", "cpu_shared")
_HOST = Context("cpu", 0)
_resources: dict = {}
_lock = threading.Lock()
_global_seed = 0           # MXNet's default: numbers are reproducible even unseeded
_ctx_seeds: dict = {}      # seeds given for one context since the last seed(..., "all")


def _owner(ctx, req):
    """The context whose resource ``ctx`` uses: as in MXNet, every host context shares one
    resource of each random kind (one stream, whichever cpu(i) an op runs on)."""
    if req != ResourceRequest.TEMP_SPACE and ctx.device_type in _HOST_TYPES:
        return _HOST
    return ctx


def request(ctx, req) -> Resource:
    """The resource of kind ``req`` (a ``ResourceRequest``) on ``ctx``."""
    key = (_owner(ctx, req), req)
    res = _resources.get(key)
    if res is None:
        with _lock:
            res = _resources.get(key)
            if res is None:
                res = _resources[key] = Resource(key[0], ResourceRequest(req))
    return res


def _new_lock():
    global _lock
    _lock = threading.Lock()      # in a forked child: a thread that held it is gone


in_child(_new_lock)


def _seed_for(ctx):
    return _ctx_seeds.get(ctx, _global_seed)


def seed(seed_state: int, ctx=None) -> None:
    """Reseed the random resources of ``ctx`` (all contexts when None), ordered after
    every function already pushed on each resource's var."""
    global _global_seed
    if ctx is not None:
        ctx = _owner(ctx, ResourceRequest.RANDOM)
    with _lock:
        if ctx is None:
            _global_seed = seed_state
            _ctx_seeds.clear()
        else:
            _ctx_seeds[ctx] = seed_state
        targets = [r for (c, kind), r in _resources.items()
                   if kind != ResourceRequest.TEMP_SPACE and (ctx is None or c == ctx)]
    eng = _engine.get()
    for res in targets:
        eng.push_sync(lambda rctx, res=res: res._reseed(seed_state), res.ctx,
                      mutate_vars=(res.var,), name="random.seed", cheap=True)
