"""Pooled device memory (docs/internals.md "Storage", DESIGN.md §4).

One pool per (device type, device id) wraps the device's raw ``alloc``/``free``.
``MXNEXT_MEM_POOL_TYPE`` (or MXNet's ``MXNET_GPU_MEM_POOL_TYPE``) picks it:

- ``Round`` (default): sizes round up to a power of two; above
  2**``MXNEXT_MEM_POOL_ROUND_LINEAR_CUTOFF`` (default 24) to a multiple of it;
- ``Naive``: blocks are kept and reused by exact size;
- ``Unpooled``: every free goes straight back to the device.

The cache is bounded (``_Pool._make_room``, ``limit``): see docs/internals.md.

A freed block is handed out again, so it must not be freed while an engine
function may still read it: ``free_async(h, var)`` returns it through
``engine.push_delete`` after everything pushed on ``var``. A handle that is
dropped without ``free`` returns its block by itself, through the engine after
every function pushed on the vars guarding it: its ``var`` (an NDArray's memory)
and its ``guards`` (an executor's arena: the vars of its memory groups). Only a
handle no engine function uses returns at once.
"""

from __future__ import annotations

import atexit
import os
import threading
import weakref

from . import device as _device
from . import engine as _engine
from . import streams as _streams
from .engine import _check
from .base import MXNetError
from .fork import in_child

__all__ = ["Handle", "StorageManager", "alloc", "free", "free_async", "release_all", "stats",
           "pool", "POOL_TYPES"]

POOL_TYPES = ("Round", "Naive", "Unpooled")


_exiting = []          # non-empty once the interpreter exits: memory then goes with the process
atexit.register(_exiting.append, True)   # runs before the engine's exit hook (LIFO)


class Handle:
    """A block of device memory: ``raw`` buffer, requested ``nbytes``, pooled ``capacity``;
    ``var``, the engine var guarding it, when an NDArray uses it (its chunk); ``base``, for
    memory borrowed from another handle (an executor's arena), that handle; ``guards``, more
    vars whose pushed functions use the memory (an arena's groups: its users add them with
    ``guard``)."""

    __slots__ = ("raw", "nbytes", "capacity", "ctx", "pool", "var", "base", "guards",
                 "__weakref__")

    def __init__(self, raw, nbytes, capacity, ctx, pool, var=None, base=None):
        self.raw = raw
        self.nbytes = nbytes
        self.capacity = capacity
        self.ctx = ctx
        self.pool = pool          # None once freed, or for borrowed memory
        self.var = var
        self.base = base          # borrowed memory: the handle owning it, kept alive
        self.guards = []          # (weakref to a user, its vars)

    def guard(self, user, vars) -> None:
        """Functions pushed on ``vars`` (by ``user``, an object that pushes on them while it
        lives) use this memory: it returns to the pool only after them. The vars of users
        gone whose functions all ran are dropped, so a handle shared by user after user
        (``Executor.reshape`` in a loop) keeps a bounded list."""
        self.guards = [g for g in self.guards
                       if g[0]() is not None or not all(v.idle() for v in g[1])]
        self.guards.append((weakref.ref(user), tuple(vars)))

    def __del__(self):
        pool = self.pool
        if pool is not None and _exiting == []:   # (at teardown the global may be None)
            raw, cap, var = self.raw, self.capacity, self.var
            guards = tuple(v for _, vs in self.guards for v in vs)
            if guards:            # after every function pushed on any of them
                if var is not None:
                    guards = (var, *guards)
                _engine.get().push_delete(lambda rctx: pool._put(raw, cap), self.ctx, guards)
            elif var is None:
                pool._put(raw, cap)
            else:                 # after every function pushed on it
                _engine.get().push_delete(lambda rctx: pool._put(raw, cap, var), self.ctx, var)

    def __repr__(self):
        state = "" if self.pool is not None else ", freed"
        return f"<storage.Handle {self.nbytes}B of {self.capacity}B on {self.ctx}{state}>"


def _env_pool_type():
    name = (os.environ.get("MXNEXT_MEM_POOL_TYPE") or os.environ.get("MXNET_GPU_MEM_POOL_TYPE")
            or "Round")
    if name not in POOL_TYPES:
        raise MXNetError(f"MXNEXT_MEM_POOL_TYPE: expected one of {', '.join(POOL_TYPES)}, "
                         f"got {name!r}")
    return name


def _env_cutoff():
    v = (os.environ.get("MXNEXT_MEM_POOL_ROUND_LINEAR_CUTOFF")
         or os.environ.get("MXNET_GPU_MEM_POOL_ROUND_LINEAR_CUTOFF") or "24")
    return int(v)


def _env_cache_limit():
    """Bytes of free blocks a host pool keeps: ``MXNEXT_MEM_POOL_CACHE_MB``, by default a
    thirty-second of the machine's memory."""
    v = os.environ.get("MXNEXT_MEM_POOL_CACHE_MB")
    if v is not None:
        try:
            mb = float(v)
        except ValueError:
            mb = -1
        if mb < 0:
            raise MXNetError(f"MXNEXT_MEM_POOL_CACHE_MB: expected a number of MB >= 0, "
                             f"got {v!r}")
        return int(mb * 2**20)
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 32
    except (ValueError, OSError, AttributeError):    # pragma: no cover - no sysconf
        return 1 << 30


class _Pool:
    """Free lists by capacity over one device id; all counters under one lock."""

    def __init__(self, dev, ctx, pool_type, cutoff):
        self.dev = dev
        self.ctx = ctx
        self.device_id = ctx.device_id
        self.pool_type = pool_type
        self.pooled_mode = pool_type != "Unpooled"
        self.streams = getattr(dev, "run_context", None) is not None
        self.round = pool_type == "Round"
        self.linear = 1 << cutoff
        # re-entrant: a garbage-collected array may free its block from inside a pool call
        self.lock = threading.RLock()
        self.free_lists: dict[int, list] = {}
        self.fences: dict[int, tuple] = {}    # id(raw) -> marks of its old work (streams.py)
        self.caps: dict[int, int] = {}        # nbytes -> size class, computed once
        self.in_use = self.pooled = self.peak = 0
        # host memory keeps a bounded cache (MXNet's CPU storage keeps none)
        self.limit = None if self.streams else _env_cache_limit()
        self.hits = self.misses = self.allocs = self.frees = self.evicted = 0

    def size_class(self, nbytes):
        if not self.round or nbytes <= 0:
            return nbytes
        if nbytes > self.linear:
            return -(-nbytes // self.linear) * self.linear
        return 1 << (nbytes - 1).bit_length()

    def alloc(self, nbytes, var=None) -> Handle:
        """A block of at least ``nbytes``: a pooled one of its size class, else a new one from
        the device."""
        cap = self.caps.get(nbytes)
        if cap is None:
            cap = self.caps[nbytes] = self.size_class(nbytes)
        with self.lock:
            lst = self.free_lists.get(cap)
            marks = None
            if lst:
                raw = lst.pop()
                if self.fences:
                    marks = self.fences.pop(id(raw), None)
                self.pooled -= cap
                self.hits += 1
            else:
                raw = None
                self.misses += 1
            self.allocs += 1
            self.in_use += cap
            if raw is not None and self.in_use > self.peak:
                self.peak = self.in_use
        if raw is None:
            self._make_room(cap)
            try:
                raw = self._raw_alloc(nbytes, cap)
            except BaseException:
                with self.lock:
                    self.in_use -= cap
                    self.allocs -= 1
                raise
            with self.lock:           # a failed request never counts towards the peak
                if self.in_use > self.peak:
                    self.peak = self.in_use
        if _check.ENABLED:
            _check.handed_out(raw)
            if var is not None:
                _check.bind(var, raw, 0, nbytes)
        if marks is not None:         # a stream device's work on the block may be pending
            if var is not None:       # the new array's first writer waits for them
                var.dev = _streams.Uses(None, marks)
            else:
                for lane, seq in marks:
                    lane.wait_host(seq)
        return Handle(raw, nbytes, cap, self.ctx, self, var)

    def free(self, h, var=None) -> None:
        h.pool = None
        self._put(h.raw, h.capacity, var)

    def _raw_alloc(self, nbytes, cap):
        try:
            return self.dev.alloc(cap, self.device_id)
        except (ValueError, OverflowError) as exc:     # numpy: beyond what it can address
            raise MXNetError(f"storage.alloc: failed to allocate {nbytes} bytes (size class "
                             f"{cap}) on {self.ctx}: {exc}") from exc
        except MemoryError:
            self.release()             # give cached blocks back and try once more
            try:
                return self.dev.alloc(cap, self.device_id)
            except MemoryError as exc:
                raise MXNetError(
                    f"storage.alloc: out of memory: failed to allocate {nbytes} bytes (size "
                    f"class {cap}) on {self.ctx} ({self.pool_type} pool: {self.in_use - cap} "
                    f"bytes in use by other blocks, peak {self.peak}; cached blocks were freed "
                    f"and the allocation retried once): {exc}") from exc

    def _make_room(self, cap):
        """Before a large block (``cap`` above the linear cutoff) comes fresh from the
        device, give cached large blocks back to it, largest first, until ``cap`` bytes went
        back, while they hold at least ``cap``: a program whose large sizes change (shape
        after shape, test after test) keeps a footprint near its live peak, where the cache
        would keep every large size it ever freed. A loop of repeated sizes never misses, so
        gives nothing back; small blocks (cheap, reused by most ops) always stay."""
        if cap < self.linear:
            return
        with self.lock:
            back = self._evict(cap, self.linear, at_least=cap)
        self._free_all(back)

    def _evict(self, nbytes, smallest=0, at_least=0):
        """Take cached blocks of size classes from ``smallest`` up out, largest first, until
        ``nbytes`` bytes are out, if those hold at least ``at_least``; the caller holds the
        lock and frees them."""
        large = sorted((c for c in self.free_lists if c >= smallest), reverse=True)
        if sum(c * len(self.free_lists[c]) for c in large) < max(at_least, 1):
            return []
        back, freed = [], 0
        for c in large:
            lst = self.free_lists[c]
            while lst and freed < nbytes:
                raw = lst.pop()
                self.fences.pop(id(raw), None)        # the device's free waits for its work
                back.append(raw)
                freed += c
            if not lst:
                del self.free_lists[c]
            if freed >= nbytes:
                break
        self.pooled -= freed
        self.evicted += freed
        return back

    def _free_all(self, raws):
        for raw in raws:
            self.dev.free(raw, self.device_id)

    def _put(self, raw, cap, var=None):
        """Return a buffer of size class ``cap`` to the pool (or the device, unpooled); ``var``
        guarded it: a stream device's marks on it stay with the block. A host pool keeps at
        most ``limit`` bytes (the largest blocks go back first)."""
        if _check.ENABLED:
            _check.returned(raw)
        back = []
        with self.lock:
            self.in_use -= cap
            self.frees += 1
            keep = self.pooled_mode
            if keep and self.limit is not None:
                if cap > self.limit:            # beyond the whole budget: not kept at all
                    self.evicted += cap
                    keep = False
                elif self.pooled + cap > self.limit:
                    back = self._evict(self.pooled + cap - self.limit)
            if keep:
                self.free_lists.setdefault(cap, []).append(raw)
                if var is not None:
                    if var.dev is not None:
                        self.fences[id(raw)] = var.dev.uses
                elif self.streams:    # no var says what used it: all the device's work so far
                    marks = _streams.current_marks()
                    if marks:
                        self.fences[id(raw)] = marks
                self.pooled += cap
            else:
                back.append(raw)
        self._free_all(back)

    def release(self):
        with self.lock:
            lists, self.free_lists = self.free_lists, {}
            self.fences = {}          # the device's free waits for the blocks' work
            self.pooled = 0
        self._free_all(raw for lst in lists.values() for raw in lst)

    def stats(self):
        with self.lock:
            return {"in_use": self.in_use, "pooled": self.pooled, "peak": self.peak,
                    "hits": self.hits, "misses": self.misses, "allocs": self.allocs,
                    "frees": self.frees, "evicted": self.evicted, "pool_type": self.pool_type}


class StorageManager:
    """Pools by context. ``pool_type=None`` reads the environment when a pool is created."""

    def __init__(self, pool_type=None):
        if pool_type is not None and pool_type not in POOL_TYPES:
            raise MXNetError(f"StorageManager: pool_type expected one of "
                             f"{', '.join(POOL_TYPES)}, got {pool_type!r}")
        self.pool_type = pool_type
        self._pools: dict = {}
        self._lock = threading.Lock()

    def _pool(self, ctx):
        with self._lock:
            pool = self._pools.get(ctx)
            if pool is None:
                dev = _device.get(ctx.device_type)
                n = dev.count()
                if not 0 <= ctx.device_id < n:
                    raise MXNetError(f"storage.alloc: device id {ctx.device_id} of {ctx} out of "
                                     f"range; {ctx.device_type} has {n} device(s)")
                kind = self.pool_type or (dev.pool_type() if hasattr(dev, "pool_type")
                                          else _env_pool_type())
                pool = self._pools[ctx] = _Pool(dev, ctx, kind, _env_cutoff())
            return pool

    def alloc(self, nbytes: int, ctx, var=None) -> Handle:
        """A block of at least ``nbytes`` bytes on ``ctx`` (guarded by engine ``var``, if any)."""
        return self.pool(ctx).alloc(nbytes, var)

    def pool(self, ctx):
        """``ctx``'s pool (``alloc``/``free`` without the context lookup: the NDArray path)."""
        return self._pools.get(ctx) or self._pool(ctx)

    def free(self, h: Handle, var=None) -> None:
        """Return ``h`` to its pool now; the caller guarantees no function still reads it
        (``var``: the engine var that guarded it)."""
        pool = h.pool
        if pool is None:
            raise MXNetError(f"storage.free: {h!r} was already freed")
        pool.free(h, var)

    def free_async(self, h: Handle, var) -> None:
        """Return ``h`` to its pool once every function pushed so far on ``var`` is done."""
        _engine.get().push_delete(lambda rctx: self.free(h, var), h.ctx, var)

    def release_all(self, ctx=None) -> None:
        """Give pooled (free) blocks back to the device, for ``ctx`` or every context."""
        with self._lock:
            pools = [p for c, p in self._pools.items() if ctx is None or c == ctx]
        for p in pools:
            p.release()

    def stats(self, ctx) -> dict:
        """Counters of ``ctx``'s pool: bytes ``in_use``/``pooled``/``peak``, counts
        ``hits``/``misses``/``allocs``/``frees``, and its ``pool_type``."""
        return self._pool(ctx).stats()

    def _new_locks(self) -> None:
        """In a forked child: a thread holding a lock at the fork is gone (a first allocation
        holds the manager's while plugins load)."""
        self._lock = threading.Lock()
        for p in self._pools.values():
            p.lock = threading.RLock()


_manager = StorageManager()
in_child(_manager._new_locks)
alloc = _manager.alloc
pool = _manager.pool
free = _manager.free
free_async = _manager.free_async
release_all = _manager.release_all
stats = _manager.stats
