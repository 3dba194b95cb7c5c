"""Threaded engines: per-var FIFO dependency tracking and worker pools.

``ThreadedEngine`` uses one shared pool; ``ThreadedEnginePerDevice`` (the
default) keeps a pool per device plus separate lanes for copies and
prioritized work. All dependency bookkeeping happens under one lock (the GIL
serialises Python anyway); functions run outside it.
"""

from __future__ import annotations

import heapq
import itertools
import os
import threading
import time
from collections import deque

from ._base import Engine, _inherited, _tls
from ._blocks import _Block, _env_int, _free, _grant, _Pool, _queue
from ._types import FnProperty, _ErrorBox
from ._waits import WaitMixin

__all__ = ["ThreadedEngine", "ThreadedEnginePerDevice"]

_NORMAL, _DELETE = FnProperty.NORMAL, FnProperty.DELETE_VAR
_MULTI = -1                   # ``_solo`` once two threads have used the engine
_AHEAD = 16                   # ready heavy blocks queued before their pushing thread runs some


class ThreadedEngine(WaitMixin, Engine):
    """All functions share one worker pool."""

    name = "ThreadedEngine"

    def __init__(self):
        super().__init__()
        # re-entrant: a finalizer run by the garbage collector while this thread holds
        # the lock (e.g. an array's __del__ freeing its memory) may push
        self._lock = threading.RLock()
        self._idle = threading.Condition(self._lock)
        self._pending = 0
        self._all_waiters = 0  # threads in wait_for_all, to be notified when nothing is pending
        self._seq = itertools.count()
        self._pools = {}
        self._kept = {}       # thread id -> deque of ready heavy blocks it pushed, to run itself
        self._queued = 0      # blocks in pool heaps (some perhaps taken by a waiting thread)
        self._blocked = 0     # threads blocked in a wait: nothing is kept meanwhile
        self._solo = None     # the only thread using the engine so far, or _MULTI
        self._solo_running = False
        self._stopped = False
        self._nthreads = _env_int(("MXNEXT_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS"),
                                  max(2, min(os.cpu_count() or 2, 8)))

    # -- pools ---------------------------------------------------------------
    def _pool_key(self, ctx, prop):
        return "shared"

    def _pool_size(self, key):
        return self._nthreads

    def _pool_for(self, ctx, prop):
        key = self._pool_key(ctx, prop)
        pool = self._pools.get(key)
        if pool is None:
            with self._lock:
                pool = self._pools.get(key)
                if pool is None:
                    pool = self._pools[key] = _Pool(self, str(key), self._pool_size(key))
        return pool

    # -- push ------------------------------------------------------------------
    # Under the GIL a worker cannot run Python while the pushing thread does, so a chain of
    # functions runs fastest on the thread that pushes it: a ready heavy function is *kept*
    # for its pushing thread, which runs it (and what it makes ready) as soon as it pushes a
    # function that must wait, or waits. A second ready heavy function sends the kept one
    # to a worker, so independent heavy work still overlaps (numpy and BLAS release the GIL).
    def push(self, opr, ctx, priority=0):
        if opr.deleted or self._stopped:
            self._check_pushable(opr)
            self._push_now(opr, ctx)   # after shutdown (interpreter exit): run it here, at once
            return
        me = threading.get_ident()
        if opr.prop != _DELETE:
            self._enter(me)
            if self._kept or self._queued:
                self._drive_kept_before(opr.const_vars, opr.mutate_vars)
        blk = _Block(opr, ctx, priority)
        cheap = opr.cheap
        keeper = None                   # the pushing thread, when it keeps ready heavy work
        if not cheap:
            blk.pool = self._pool_for(ctx, opr.prop)
            if opr.prop == _NORMAL and not _tls.in_worker:
                keeper = blk.owner = me
        wake = None
        with self._lock:
            self._pending += 1
            wait = 0
            for v in opr.const_vars:
                if v.writer or v.queue:
                    _queue(v).append((blk, False))
                    wait += 1
                else:
                    v.readers += 1
            for v in opr.mutate_vars:
                if v.writer or v.readers or v.queue:
                    _queue(v).append((blk, True))
                    wait += 1
                else:
                    v.writer = True
            blk.wait = wait
            if wait:
                if cheap:               # a cheap block that must wait runs on a pool later
                    blk.pool = self._pool_for(ctx, opr.prop)
                if not self._kept or opr.prop == _DELETE:
                    return
                kept = self._kept.pop(me, None)
                if kept is None:
                    return
            elif cheap:
                pass
            elif keeper is not None and not self._blocked:
                kept = self._kept.get(keeper)
                if kept is None:
                    self._kept[keeper] = deque((blk,))
                    return
                wake = kept.popleft()
                kept.append(blk)
                self._enqueue(wake)
            else:
                wake = blk
                self._enqueue(blk)
        if wake is not None:
            wake.pool.tokens.put(1)
            if self._queued > _AHEAD and keeper is not None:
                self._catch_up(me)
        elif wait:
            self._drive(kept)   # the new function probably waits for what this thread kept
        else:
            self._execute(blk, None)

    def _push_lists(self, fn, ctx, const, mutate, name, cheap, prop=_NORMAL, priority=0,
                    fresh=False, leaf=False):
        me = threading.get_ident()
        if cheap and leaf and self._solo == me and not self._pending and not _tls.in_worker:
            # Only this thread has used the engine and nothing is pending: no function can
            # touch these vars while this kernel runs, so it runs at once without any var
            # bookkeeping (the imperative hot path: no operator, no ``_run_here``).
            self._solo_running = True          # first (see _enter), then check again
            try:
                if self._solo == me and not self._pending and not self._stopped:
                    box = self._call_here(fn, ctx, const, mutate, name)
                    if box is not None:
                        for v in mutate:
                            v.error = box
                    return
            finally:
                self._solo_running = False
        super()._push_lists(fn, ctx, const, mutate, name, cheap, prop, priority, fresh, leaf)

    def _run_here(self, fn, ctx, const, mutate, name, fresh=False, leaf=False):
        if self._stopped:
            return False
        self._enter(threading.get_ident())
        if (self._kept or self._queued) and not self._drive_kept_before(const, mutate):
            return False
        held = () if fresh else mutate      # fresh vars: nobody else can wait on them yet
        with self._lock:
            if not _free(const, held):
                return False
            for v in const:
                v.readers += 1
            for v in held:
                v.writer = True
            self._pending += 1
        box = self._call_here(fn, ctx, const, mutate, name)
        if box is not None and fresh:
            for v in mutate:
                v.error = box
        self._release(const, held, box, None)
        return True

    def _enter(self, me):
        """Thread ``me`` uses the engine: the first thread to do so has it *solo* until
        another one comes; from then on every function's vars are tracked. A lock-free run
        of the solo thread still in flight finishes before the newcomer goes on."""
        if self._solo == me or self._solo == _MULTI or _tls.in_worker:
            return
        with self._lock:
            if self._solo is None:
                self._solo = me
                return
            if self._solo in (me, _MULTI):
                return
            self._solo = _MULTI
        while self._solo_running:
            time.sleep(0)                      # lets the solo thread finish its function

    def _drive_kept_before(self, const, mutate) -> bool:
        """A function this thread pushes must wait: run here, first, what it may wait for
        and no thread has started: what this thread kept, else a queued block (e.g. one
        sent to a worker that has not got the GIL yet) touching its vars. Whether the
        function's vars may be free now."""
        if _tls.in_worker:
            return True
        ran = False
        while True:
            with self._lock:
                if _free(const, mutate):
                    return True
                todo = self._kept.pop(threading.get_ident(), None)
                if todo is None:
                    blk = self._oldest_queued({*const, *mutate})
                    if blk is None:
                        return ran
                    blk.taken = True
                    todo = deque((blk,))
            self._drive(todo)
            ran = True

    def _oldest_queued(self, touching=None, owner=None):
        """The oldest not yet started block in a pool heap with a var in ``touching`` or, with
        ``owner``, pushed by that thread (lock held): running anything else could block this
        thread on unrelated work."""
        best = None
        for pool in self._pools.values():
            for entry in pool.heap:
                blk = entry[2]
                if not blk.taken and (best is None or entry < best) and (
                        blk.owner == owner if touching is None else any(
                            v in touching for v in (*blk.opr.const_vars, *blk.opr.mutate_vars))):
                    best = entry
        return None if best is None else best[2]

    def _catch_up(self, me):
        """Thread ``me`` has pushed ready heavy work far faster than the workers run it
        (under the GIL they run only when it lets go): it runs its own oldest queued blocks
        until at most half of ``_AHEAD`` wait, so pending work, and the memory its outputs
        hold, stays bounded."""
        for _ in range(self._queued - _AHEAD // 2):
            with self._lock:
                blk = self._oldest_queued(owner=me)
                if blk is None:
                    return
                blk.taken = True
            self._drive(deque((blk,)))

    def _enqueue(self, blk):
        """Put ready ``blk`` in its pool's heap (lock held; the caller wakes the pool)."""
        heapq.heappush(blk.pool.heap, (-blk.priority, next(self._seq), blk))
        self._queued += 1

    # -- run -----------------------------------------------------------------
    def _worker(self, pool):
        _tls.in_worker = True
        get = pool.tokens.get
        lock = self._lock
        heap = pool.heap
        while get() is not None:
            with lock:
                blk = heapq.heappop(heap)[2]
                self._queued -= 1
                if blk.taken:
                    continue
            self._execute(blk, pool)

    def _execute(self, blk, pool):
        """Run ``blk``; then keep running successors that became ready on ``pool``."""
        prev = _tls.in_worker
        _tls.in_worker = True
        try:
            while blk is not None:
                blk = self._run_one(blk, pool)
        finally:
            _tls.in_worker = prev

    def _drive(self, todo):
        """Run the ready blocks in ``todo`` on this (pushing or waiting) thread, with what they
        make ready: every cheap block and one heavy block at a time stay here, other heavy
        ones go to workers."""
        prev = _tls.in_worker
        _tls.in_worker = True
        me = threading.get_ident()
        try:
            while todo:
                self._run_one(todo.popleft(), todo)
                if not todo and self._kept:
                    with self._lock:      # handed back by a worker meanwhile
                        todo = self._kept.pop(me, None) or todo
        finally:
            _tls.in_worker = prev

    def _run_one(self, blk, pool):
        """Run ``blk`` (or skip it, inheriting an error); a ready successor on ``pool``."""
        opr = blk.opr
        box = (_inherited(opr.const_vars, opr.mutate_vars)
               if opr.skip_on_error and self._errors else None)
        if box is not None:
            return self._complete(blk, box, pool)
        rctx = self._run_ctx(blk.ctx)
        if opr.is_async:
            return self._run_async(blk, rctx, pool)
        try:
            opr.fn(rctx)
        except BaseException as exc:  # stored and re-raised by the waits
            return self._complete(blk, self._new_error(exc, opr.name), pool)
        return self._complete(blk, None, pool)

    def _run_async(self, blk, rctx, pool):
        """Run an async function. If it calls ``on_complete`` on this thread before it
        returns (the usual case), completion waits until it returns, and the ready
        successor it yields is returned for the caller to run, as for a sync function."""
        me = threading.get_ident()
        running = [True]
        result = []               # [error box or None] once on_complete was called
        deferred = []

        def on_complete(exc=None):
            if result:
                raise RuntimeError(f"engine: on_complete of {blk.opr.name!r} called twice")
            box = None if exc is None else self._new_error(exc, blk.opr.name)
            result.append(box)
            if running[0] and threading.get_ident() == me:
                deferred.append(1)
            else:
                self._complete(blk, box, None)

        try:
            blk.opr.fn(rctx, on_complete)
        except BaseException as exc:
            if not result:
                on_complete(exc)
        running[0] = False
        return self._complete(blk, result[0], pool) if deferred else None

    def _new_error(self, exc, name):
        box = _ErrorBox(exc, name)
        self._store_error(box)
        return box

    def _store_error(self, box):
        with self._lock:
            self._errors.append(box)

    def _idle_var(self, var) -> bool:
        # No lock: a dying var gets no new pushes, and ``_grant`` sets a flag before it
        # empties the queue, so "idle" is never seen while a function still holds the var.
        return not (var.writer or var.readers or var.queue)

    def _complete(self, blk, box, pool):
        """Release ``blk``'s vars; dispatch what became ready (see ``_release``)."""
        return self._release(blk.opr.const_vars, blk.opr.mutate_vars, box, pool)

    def _release(self, const, mutate, box, pool):
        """Release vars held by a finished function; dispatch what became ready. ``pool`` is
        the calling worker's pool: one ready block of it is returned for the worker to run
        next (saves a thread hand-off), and a heavy block goes back to the thread that pushed
        it; or ``pool`` is a driving thread's deque, which takes every ready cheap block and
        one heavy block."""
        ready = []
        with self._lock:
            for v in const:
                v.readers -= 1
                if not v.readers and v.queue:
                    _grant(v, ready)
            for v in mutate:
                if box is not None:
                    v.error = box
                v.writer = False
                if v.queue:
                    _grant(v, ready)
            self._pending -= 1
            if not self._pending and self._all_waiters:
                self._idle.notify_all()
            if not ready:
                return None
            mine = None
            wake = []
            if type(pool) is deque:
                heavy = any(not b.opr.cheap for b in pool)
                for b in ready:
                    if b.opr.cheap or not heavy:
                        pool.append(b)
                        heavy = heavy or not b.opr.cheap
                    else:
                        self._enqueue(b)
                        wake.append(b.pool)
            else:
                kept = self._kept
                for b in ready:
                    owner = b.owner
                    if owner is not None and not self._blocked:
                        q = kept.get(owner)             # back to the thread that pushed it
                        if q is None:
                            kept[owner] = deque((b,))
                        else:
                            q.append(b)
                    elif b.opr.cheap and mine is None and pool is not None:
                        mine = b
                    elif mine is None and b.pool is pool and pool is not None:
                        mine = b
                    else:
                        self._enqueue(b)
                        wake.append(b.pool)
        for p in wake:
            p.tokens.put(1)
        return mine

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


class ThreadedEnginePerDevice(ThreadedEngine):
    """A worker pool per device, plus lanes for copies and prioritized work."""

    name = "ThreadedEnginePerDevice"

    _LANES = {FnProperty.COPY_FROM_GPU: "copy", FnProperty.COPY_TO_GPU: "copy",
              FnProperty.CPU_PRIORITIZED: "prio", FnProperty.GPU_PRIORITIZED: "prio"}

    def __init__(self):
        super().__init__()
        self._gpu_threads = _env_int(("MXNEXT_GPU_WORKER_NTHREADS", "MXNET_GPU_WORKER_NTHREADS"), 2)
        self._prio_threads = _env_int(("MXNEXT_CPU_PRIORITY_NTHREADS", "MXNET_CPU_PRIORITY_NTHREADS"), 1)
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
