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
from collections import deque
from queue import SimpleQueue

from ._base import Engine, _inherited, _tls
from ._types import FnProperty, OprHandle, RunContext, _ErrorBox

__all__ = ["ThreadedEngine", "ThreadedEnginePerDevice"]

_NORMAL, _DELETE = FnProperty.NORMAL, FnProperty.DELETE_VAR


class _Block:
    """One push of an operator: counts the vars not yet granted to it."""

    __slots__ = ("opr", "ctx", "priority", "wait", "pool", "taken", "owner")

    def __init__(self, opr, ctx, priority):
        self.opr = opr
        self.ctx = ctx
        self.priority = priority
        self.wait = 0
        self.pool = None
        self.taken = False        # run by a waiting thread while still in a heap
        self.owner = None         # id of the pushing thread that would rather run it itself


class _Pool:
    """Worker threads fed from a priority heap (FIFO within a priority)."""

    def __init__(self, engine, name, nthreads):
        self.engine = engine
        self.name = name
        self.heap = []
        self.tokens = SimpleQueue()
        self.threads = [threading.Thread(target=engine._worker, args=(self,), daemon=True,
                                         name=f"mxnext-{name}-{i}") for i in range(nthreads)]
        for t in self.threads:
            t.start()

    def stop(self):
        for _ in self.threads:
            self.tokens.put(None)
        for t in self.threads:
            if t is not threading.current_thread():
                t.join(timeout=5)


def _env_int(names, default):
    for n in names:
        v = os.environ.get(n)
        if v:
            return max(1, int(v))
    return default


class ThreadedEngine(Engine):
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
        if opr.prop != _DELETE and (self._kept or self._queued):
            self._drive_kept_before(opr.const_vars, opr.mutate_vars)
        blk = _Block(opr, ctx, priority)
        cheap = opr.cheap
        me = None
        if not cheap:
            blk.pool = self._pool_for(ctx, opr.prop)
            if opr.prop == _NORMAL and not _tls.in_worker:
                me = blk.owner = threading.get_ident()
        wake = None
        with self._lock:
            self._pending += 1
            wait = 0
            for v in opr.const_vars:
                if v.writer or v.queue:
                    v.queue.append((blk, False))
                    wait += 1
                else:
                    v.readers += 1
            for v in opr.mutate_vars:
                if v.writer or v.readers or v.queue:
                    v.queue.append((blk, True))
                    wait += 1
                else:
                    v.writer = True
            blk.wait = wait
            if wait:
                if cheap:               # a cheap block that must wait runs on a pool later
                    blk.pool = self._pool_for(ctx, opr.prop)
                if not self._kept or opr.prop == _DELETE:
                    return
                kept = self._kept.pop(threading.get_ident(), None)
                if kept is None:
                    return
            elif cheap:
                pass
            elif me is not None and not self._blocked:
                kept = self._kept.get(me)
                if kept is None:
                    self._kept[me] = deque((blk,))
                    return
                wake = kept.popleft()
                kept.append(blk)
                self._enqueue(wake)
            else:
                wake = blk
                self._enqueue(blk)
        if wake is not None:
            wake.pool.tokens.put(1)
        elif wait:
            self._drive(kept)   # the new function probably waits for what this thread kept
        else:
            self._execute(blk, None)

    def _run_here(self, fn, ctx, const, mutate, name, fresh=False):
        if self._stopped:
            return False
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
                    blk = self._queued_on(const, mutate)
                    if blk is None:
                        return ran
                    blk.taken = True
                    todo = deque((blk,))
            self._drive(todo)
            ran = True

    def _queued_on(self, const, mutate):
        """The oldest not yet started block in a pool heap that touches one of these vars
        (lock held)."""
        best = None
        for pool in self._pools.values():
            for entry in pool.heap:
                blk = entry[2]
                if not blk.taken and (best is None or entry < best):
                    o = blk.opr
                    if any(v in const or v in mutate for v in (*o.const_vars, *o.mutate_vars)):
                        best = entry
        return None if best is None else best[2]

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

    # -- waits -------------------------------------------------------------
    def _block(self, var=None, write=False):
        """This thread is about to block (on ``var``, or on everything): no thread keeps more
        work from now on. What threads kept that this wait needs runs here (waiting for
        everything: one block here, the rest on workers); the rest stays kept."""
        wake = []
        mine = deque()
        with self._lock:
            self._blocked += 1
            if not self._kept:
                return
            if var is None:
                kept = [b for q in self._kept.values() for b in q]
                self._kept.clear()
                mine.append(kept.pop(0))
                for b in kept:
                    self._enqueue(b)
                    wake.append(b.pool)
            else:
                cone = _cone(var)
                for owner, q in list(self._kept.items()):
                    rest = deque()
                    for b in q:
                        (mine if _needed(b, var, write, cone) else rest).append(b)
                    if rest:
                        self._kept[owner] = rest
                    else:
                        del self._kept[owner]
        for p in wake:
            p.tokens.put(1)
        self._drive(mine)

    def _unblock(self):
        with self._lock:
            self._blocked -= 1

    def _wait_var(self, var, write):
        try:
            self._block(var, write)
            self._wait_var_blocked(var, write)
        finally:
            self._unblock()

    def _wait_var_blocked(self, var, write):
        # The waiting thread runs ready functions itself, oldest first, rather than wake a
        # worker and then be woken by it: a worker could not run Python while this thread
        # does anyway (the GIL), and each thread hand-off costs more than a small op.
        while True:
            with self._lock:
                if not _busy(var, write):
                    return
                blk = self._oldest_ready(var)
                if blk is None:
                    break
                blk.taken = True
            self._help(blk, var, write)
        self._release_kept()      # it may wait for them in ways the queues do not show
        done = threading.Lock()
        done.acquire()
        marker = OprHandle(lambda rctx: done.release(), False, () if write else (var,),
                           (var,) if write else (), FnProperty.NORMAL, "wait_for_var",
                           skip_on_error=False, cheap=True)
        self.push(marker, None)
        done.acquire()

    def _release_kept(self):
        """Before a thread sleeps, send every kept block to its pool: a function the wait
        depends on may hold one var and wait in the queue of another that a kept block
        holds, which the cone of the awaited var does not reach."""
        with self._lock:
            kept = [b for q in self._kept.values() for b in q]
            self._kept.clear()
            for b in kept:
                self._enqueue(b)
        for b in kept:
            b.pool.tokens.put(1)

    def _help(self, blk, var, write):
        """Run ``blk`` and its ready successors on this (waiting) thread until ``var`` is
        free; a successor left over goes back to its pool."""
        prev = _tls.in_worker
        _tls.in_worker = True
        try:
            while True:
                blk = self._run_one(blk, blk.pool)
                if blk is None:
                    return
                with self._lock:
                    if _busy(var, write):
                        continue
                    self._enqueue(blk)
                blk.pool.tokens.put(1)
                return
        finally:
            _tls.in_worker = prev

    def _oldest_ready(self, var):
        """The oldest ready, not yet started block that ``var`` waits on, directly or
        through queued functions (caller holds the lock): running anything else could
        block this thread on unrelated work."""
        cone = _cone(var)
        best = None
        for pool in self._pools.values():
            for entry in pool.heap:
                blk = entry[2]
                if not blk.taken and (best is None or entry < best) and any(
                        v in cone for v in (*blk.opr.const_vars, *blk.opr.mutate_vars)):
                    best = entry
        return None if best is None else best[2]

    def _wait_all(self):
        try:
            self._block()
            with self._idle:
                self._all_waiters += 1
                try:
                    while self._pending:
                        self._idle.wait()
                finally:
                    self._all_waiters -= 1
        finally:
            self._unblock()

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


def _cone(var):
    """``var`` and every var of the functions queued on it, transitively (lock held)."""
    cone, todo = {var}, [var]
    while todo:
        for blk, _ in todo.pop().queue:
            for v in (*blk.opr.const_vars, *blk.opr.mutate_vars):
                if v not in cone:
                    cone.add(v)
                    todo.append(v)
    return cone


def _needed(blk, var, write, cone):
    """Whether a wait on ``var`` must see running ``blk`` (granted its vars) finish."""
    if any(v in cone for v in blk.opr.mutate_vars):
        return True
    return any(v in cone and (write or v is not var) for v in blk.opr.const_vars)


def _free(const, mutate):
    """Whether a function reading ``const`` and writing ``mutate`` could start now."""
    for v in const:
        if v.writer or v.queue:
            return False
    for v in mutate:
        if v.writer or v.readers or v.queue:
            return False
    return True


def _busy(var, write):
    return var.writer or var.queue or (write and var.readers)


def _grant(v, ready):
    """Grant ``v`` to the head of its queue: one writer, or every leading reader. A flag is
    set before its entry leaves the queue (see ``_idle_var``)."""
    q = v.queue
    if v.writer:
        return
    blk, is_write = q[0]
    if is_write:
        if v.readers:
            return
        v.writer = True
        q.popleft()
        blk.wait -= 1
        if not blk.wait:
            ready.append(blk)
        return
    while q and not q[0][1]:
        v.readers += 1
        blk = q.popleft()[0]
        blk.wait -= 1
        if not blk.wait:
            ready.append(blk)


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
