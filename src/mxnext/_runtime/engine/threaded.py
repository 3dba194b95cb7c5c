"""Threaded engines: the seeds' dependency rule on worker pools.

The rule: a pushed function runs once it is granted every var it touches. A
var grants, in push order, either one writer or any number of consecutive
readers; requests that cannot be granted yet wait in the var's FIFO queue
(MXNet's ThreadedVar), so a dependency costs O(1) at push and at completion.
A function granted all its vars is *ready*: it goes to the priority heap of
its pool (FIFO within a priority), a worker of the pool pops and runs it,
then releases its vars, which grants the next requests in their queues.

``ThreadedEngineBase`` is that engine and nothing more. ``ThreadedEngine``
(one pool) and ``ThreadedEnginePerDevice`` (the default: a pool per device,
plus lanes for copies and prioritized work) add the speed policy for
Python's GIL of ``_fastpath.FastPaths`` on top, which
``MXNEXT_ENGINE_FAST_PATHS=0`` switches off. All bookkeeping happens under
one lock; functions run outside it.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import weakref
from queue import SimpleQueue

from .. import device as _device
from .. import inline as _inline
from ..threads import thread_policy
from . import _base, _check, _events
from ._base import Engine, _tls
from ._fastpath import COMPLETER, FastPaths
from ._types import FnProperty, OprHandle
from ._vars import _Block, _request, _return

__all__ = ["ThreadedEngineBase", "ThreadedEngine", "ThreadedEnginePerDevice"]


class _Pool:
    """Worker threads fed from a priority heap; one token in ``tokens`` per heap entry.
    ``pinned``: its work is a device's whose inline policy never inlines; only these
    workers run it (the fast paths never take it)."""

    def __init__(self, engine, name, nthreads, pinned=False):
        self.pinned = pinned
        self.heap = []
        self.tokens = SimpleQueue()
        self.threads = [threading.Thread(target=engine._worker, args=(self,), daemon=True,
                                         name=f"mxnext-{name}-{i}") for i in range(nthreads)]
        for t in self.threads:
            t.start()

    def wake(self):
        self.tokens.put(1)

    def stop(self):
        for _ in self.threads:
            self.tokens.put(None)
        for t in self.threads:
            if t is not threading.current_thread():
                t.join(timeout=5)


_live = weakref.WeakSet()     # every threaded engine, for the fork handlers


def _env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v:
            return max(1, int(v))
    return default


class ThreadedEngineBase(Engine):
    """The threaded engine without fast paths: every function is granted its vars through
    their queues and runs on a worker of its pool. One shared pool (and one for the devices
    whose inline policy never inlines, ``_pinned``)."""

    name = "ThreadedEngineBase"

    def __init__(self):
        super().__init__()
        # re-entrant: a finalizer run by the garbage collector while this thread holds
        # the lock (e.g. an array's __del__ freeing its memory) may push
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0      # pushed and not yet completed
        self._all_waiters = 0  # threads in wait_for_all, notified when nothing is pending
        self._queued = 0       # ready blocks in pool heaps
        self._seq = itertools.count()
        self._pools = {}
        self._pinned_types = {}    # (device type, copy lane) -> whether its pools are pinned
        self._stopped = False
        self._forking = None   # the thread preparing a fork (_fork_prepare)
        self._nthreads = thread_policy().workers
        _live.add(self)

    # -- pools ---------------------------------------------------------------
    def _pool_key(self, ctx, prop):
        return "pinned" if self._pinned(ctx, prop) else "shared"

    def _pool_size(self, key):
        return self._nthreads

    def _pinned(self, ctx, prop=FnProperty.NORMAL) -> bool:
        """Whether work on ``ctx`` in lane ``prop`` runs on its pool's workers only: its device's
        inline policy never inlines, or keeps copies on their own lanes (``copy_lanes``)."""
        if ctx is None:
            return False
        copy = prop in _inline.COPIES
        pinned = self._pinned_types.get((ctx.device_type, copy))
        if pinned is None:
            policy = _device.inline_policy(ctx.device_type)
            if policy is None:
                return False
            pinned = not policy.inline or (copy and getattr(policy, "copy_lanes", False))
            self._pinned_types[ctx.device_type, copy] = pinned
        return pinned

    def _pool_for(self, ctx, prop):
        key = self._pool_key(ctx, prop)
        pool = self._pools.get(key)
        if pool is None:
            pinned = self._pinned(ctx, prop)
            with self._lock:
                pool = self._pools.get(key)
                if pool is None:
                    pool = self._pools[key] = _Pool(self, str(key), self._pool_size(key),
                                                    pinned)
        return pool

    # -- push ------------------------------------------------------------------
    def push(self, opr, ctx, priority=0):
        if opr.deleted or self._stopped:
            self._run_now(opr, ctx)   # after shutdown (interpreter exit): here, at once
            return
        blk = _Block(opr, ctx, priority, self._pool_for(ctx, opr.prop))
        with self._lock:
            if self._admit(blk):
                return
            self._enqueue(blk)
        blk.pool.wake()

    def _admit(self, blk) -> int:
        """Count ``blk`` as pending and request its vars (lock held); how many it waits for."""
        if self._forking is not None and blk.opr.prop != FnProperty.DELETE_VAR:
            self._hold_for_fork()
        self._pending += 1
        return _request(blk)

    def _enqueue(self, blk):
        """Put ready ``blk`` in its pool's heap (lock held; the caller wakes the pool)."""
        heapq.heappush(blk.pool.heap, (-blk.priority, next(self._seq), blk))
        self._queued += 1

    # -- run -----------------------------------------------------------------
    def _worker(self, pool):
        _tls.in_worker = True
        get = pool.tokens.get
        heap = pool.heap
        while get() is not None:
            with self._lock:
                if not heap:          # taken meanwhile by a thread that runs it itself
                    continue
                blk = heapq.heappop(heap)[2]
                self._queued -= 1
            self._execute(blk, pool)

    def _execute(self, blk, runner):
        """Run ``blk`` on this thread, then each block ``_dispatch`` hands back to it."""
        prev = _tls.in_worker
        _tls.in_worker = True
        try:
            while blk is not None:
                blk = self._run_block(blk, runner)
        finally:
            _tls.in_worker = prev

    def _run_block(self, blk, runner):
        """Run ``blk`` with the error rules and complete it; the next block for this thread."""
        opr = blk.opr
        rctx = self._run_ctx(blk.ctx)
        if opr.is_async:
            self._start_async(blk, rctx)
            return None
        self._run_guarded(opr.fn, rctx, opr.const_vars, opr.mutate_vars, opr.name,
                          opr.skip_on_error)
        return self._complete(blk.opr.const_vars, blk.opr.mutate_vars, runner)

    def _start_async(self, blk, rctx):
        """Start an async function; it completes when it calls ``on_complete``, on any thread."""
        opr = blk.opr
        const, mutate = opr.const_vars, opr.mutate_vars
        if opr.skip_on_error and self._errors and self._inherit(const, mutate):
            self._complete(const, mutate, None)
            return
        called = []

        def on_complete(exc=None):
            if called:
                raise RuntimeError(f"engine: on_complete of {opr.name!r} called twice")
            called.append(True)
            if exc is not None:
                self._fail(exc, opr.name, mutate)
            nxt = self._complete(const, mutate, COMPLETER)
            if nxt is not None:       # a waiter: released here, one thread hand-off less
                self._execute(nxt, None)
        if _base._profiling:
            on_complete = _events.timed_completion(opr.fn, on_complete, rctx, opr.name)
        try:
            if _check.ENABLED:
                _check.verify((*const, *mutate), opr.name)
            opr.fn(rctx, on_complete)
        except BaseException as exc:  # stored like a sync function's
            if called:
                self._fail(exc, opr.name, ())    # after completing: its vars are released
            else:
                on_complete(exc)

    def _complete(self, const, mutate, runner):
        """Release the vars of a finished function and dispatch what became ready; the block
        ``runner`` (the completing thread) runs next, if any."""
        ready = []
        wake = []
        with self._lock:
            _return(const, mutate, ready)
            self._pending -= 1
            if not self._pending and self._all_waiters:
                self._idle.notify_all()
            nxt = self._dispatch(ready, runner, wake) if ready else None
        for p in wake:
            p.wake()
        return nxt

    def _dispatch(self, ready, runner, wake):
        """Send newly ready blocks to their pools (lock held; pools to wake go to ``wake``);
        the block for ``runner`` to run next: none here (see the fast paths)."""
        for b in ready:
            self._enqueue(b)
            wake.append(b.pool)
        return None

    def _store_error(self, box):
        with self._lock:
            self._errors.append(box)

    # -- wait ------------------------------------------------------------------
    def _wait_var(self, var, write):
        if not (var.writer or var.queue or (write and var.readers)):
            return                    # nothing pending that this wait must see
        done = threading.Lock()
        done.acquire()
        self.push(OprHandle(lambda rctx: done.release(), False, () if write else (var,),
                            (var,) if write else (), FnProperty.NORMAL, "wait_for_var",
                            skip_on_error=False, cheap=True), None)
        done.acquire()

    def _wait_all(self):
        with self._idle:
            self._all_waiters += 1
            try:
                while self._pending > 0:    # < 0 only in a child forked mid-function (_fork_child)
                    self._idle.wait()
            finally:
                self._all_waiters -= 1

    def shutdown(self):
        if self._stopped:
            return
        try:
            self._wait_all()
        finally:
            self._stopped = True
            for p in list(self._pools.values()):
                p.stop()
            self._pools.clear()

    # -- fork (_runtime.fork) ------------------------------------------------------------
    def _fork_prepare(self):
        """Before ``fork``: finish every pushed function and hold the lock until after it, so
        the child copies idle vars (MXNet stops its engine so). Inside an engine function
        nothing can be waited for; the child then drops the work (``_fork_child``)."""
        self._lock.acquire()
        if not _tls.in_worker:
            self._forking = threading.get_ident()
            self._all_waiters += 1
            while self._pending > 0:
                self._idle.wait()
            self._all_waiters -= 1

    def _hold_for_fork(self):
        """(lock held) While a thread prepares a fork, new work of other user threads waits
        for the fork, so the work the fork waits for comes to an end. Deletes, and what running
        functions push, are part of that work."""
        while self._forking not in (None, threading.get_ident()) and not _tls.in_worker:
            self._idle.wait()

    def _fork_parent(self):
        self._forking = None
        self._idle.notify_all()
        self._lock.release()

    def _fork_child(self):
        """In the child only the forking thread lives: worker pools are made again on first
        use, with MXNet's thread count for worker processes. Work still pending there will
        never complete, and vars it holds stay held: the engine then runs every function at
        once on the pushing thread, as after ``shutdown``, where no var is ever waited for."""
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._pools = {}
        self._all_waiters = 0
        self._forking = None
        self._nthreads = _env_int(("MXNEXT_MP_WORKER_NTHREADS", "MXNET_MP_WORKER_NTHREADS"), 1)
        if self._pending:
            self._pending = self._queued = 0
            self._stopped = True


class ThreadedEngine(FastPaths, ThreadedEngineBase):
    """All functions share one worker pool, but a pinned device's (with the fast paths)."""

    name = "ThreadedEngine"


class ThreadedEnginePerDevice(ThreadedEngine):
    """A worker pool per device, plus lanes for copies and prioritized work."""

    name = "ThreadedEnginePerDevice"

    _LANES = {FnProperty.COPY_FROM_GPU: "copy", FnProperty.COPY_TO_GPU: "copy",
              FnProperty.CPU_PRIORITIZED: "prio", FnProperty.GPU_PRIORITIZED: "prio"}

    def __init__(self, fast_paths=None):
        super().__init__(fast_paths)
        self._gpu_threads = _env_int(("MXNEXT_GPU_WORKER_NTHREADS", "MXNET_GPU_WORKER_NTHREADS"), 2)
        self._prio_threads = _env_int(("MXNEXT_CPU_PRIORITY_NTHREADS",
                                       "MXNET_CPU_PRIORITY_NTHREADS"), 1)
        self._copy_threads = _env_int(("MXNEXT_GPU_COPY_NTHREADS", "MXNET_GPU_COPY_NTHREADS"), 1)

    def _pool_key(self, ctx, prop):
        lane = self._LANES.get(prop, "normal")
        if ctx is None:
            return ("cpu", 0, lane)
        return (ctx.device_type, ctx.device_id, lane)

    def _pool_size(self, key):
        dev, _, lane = key
        if lane == "copy":
            return self._copy_threads
        if lane == "prio":
            return self._prio_threads
        return self._gpu_threads if dev == "gpu" else self._nthreads
