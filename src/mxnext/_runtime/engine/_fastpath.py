"""The threaded engines' speed policy for Python's GIL: the one seam between the
dependency rule and where a function runs.

Under the GIL a worker cannot run Python while the pushing thread does, and a
thread that wants the GIL back after a kernel may wait for the switch interval
(5 ms). So handing a function to a worker pays only where it can overlap
other work. ``FastPaths`` is mixed in before ``ThreadedEngineBase`` and
overrides ``push``, ``push_kernel``, ``push_delete``, ``_dispatch`` and the
waits; it never grants a var early, it only chooses which thread runs a
function whose vars are granted or free:

1. *inline runs*: a ``cheap`` function whose vars are free runs at once on the
   pushing thread, without an operator or a queue entry;
2. *solo thread*: while one thread alone has used the engine and nothing is
   pending, its inline kernels skip the var bookkeeping too (no other function
   could touch their vars); a second thread arriving ends this for good, after
   waiting for a solo run still in flight;
3. *kept work*: a ready heavy function of the normal lane pushed by a user thread
   is kept for that thread, which runs it (and what it makes ready) when it next
   pushes a function that must wait, or waits; a second one sends the first to a
   worker, so independent heavy work still overlaps. Work a worker makes ready
   goes back to the thread that pushed it; a worker runs one other ready
   successor itself instead of waking another thread;
4. *waiter runs work*: a thread about to wait (or to push a function that must
   wait) first runs, itself, the ready functions it waits for that no thread has
   started (kept, or queued for a worker that has not got the GIL);
5. *back-pressure*: a thread that has queued more than ``_AHEAD`` ready heavy
   functions runs its own oldest ones until half are left;
6. ``push_delete`` on a var with nothing pending runs the delete at once.

None of 3-5 takes a block of a *pinned* pool (a device whose inline policy never inlines,
``mxnext._runtime.inline``): only that pool's workers run its work.

``MXNEXT_ENGINE_FAST_PATHS=0`` (or ``fast_paths=False``) switches all of it off.
"""

from __future__ import annotations

import heapq
import os
from collections import deque
from threading import Event, get_ident

from ._base import _tls
from ._types import FnProperty
from ._vars import _Block, _free

__all__ = ["COMPLETER", "FastPaths", "enabled"]

_NORMAL, _DELETE = FnProperty.NORMAL, FnProperty.DELETE_VAR
_MULTI = -1                   # ``_solo`` once two threads have used the engine
# A loop of 3000 independent ``0.01 * g`` on a 4 MB ``g`` with no wait peaked at 12 GB
# without a bound on ready heavy blocks, 76 MB with this one.
_AHEAD = 16
# The runner an asynchronous function's completion passes to ``_complete``: it runs a ready
# engine-internal cheap block (a waiter, ``ctx`` None) itself, and no kernel.
COMPLETER = object()


def enabled() -> bool:
    """Whether engines made from now on use the fast paths (``MXNEXT_ENGINE_FAST_PATHS``)."""
    return os.environ.get("MXNEXT_ENGINE_FAST_PATHS", "1").lower() not in ("0", "false", "off")


class FastPaths:
    """The speed policy of ``ThreadedEngine`` and ``ThreadedEnginePerDevice`` (see the
    module docstring); every override defers to the plain engine when it is off."""

    def __init__(self, fast_paths=None):
        super().__init__()
        self.fast_paths = enabled() if fast_paths is None else bool(fast_paths)
        self._kept = {}           # thread id -> deque of ready heavy blocks it pushed
        self._blocked = 0         # threads blocked in a wait: nothing is kept meanwhile
        self._solo = None         # the only thread that has used the engine, or _MULTI
        self._solo_running = False
        self._solo_done = None    # Event the second thread waits on while a solo run ends

    # -- 1, 2: inline runs --------------------------------------------------------------
    def push_kernel(self, fn, ctx, const, mutate, name, cheap, prop=_NORMAL, priority=0,
                    fresh=False, leaf=True):
        if (self.fast_paths and cheap and not self._stopped
                and self._run_inline(fn, ctx, const, mutate, name, fresh, leaf)):
            return
        super().push_kernel(fn, ctx, const, mutate, name, cheap, prop, priority, fresh, leaf)

    def _run_inline(self, fn, ctx, const, mutate, name, fresh, leaf) -> bool:
        """Run a cheap sync function on this thread now if its vars are free; whether it
        ran."""
        me = get_ident()
        if leaf and self._solo == me and not self._pending and not _tls.in_worker:
            # Solo: nothing pending and no other thread, so no var bookkeeping and no lock
            # (the imperative hot path; -15% per op against _run_here on the MLP step of
            # bench/ndarray.py)
            self._solo_running = True           # first, then check again (see _enter)
            try:
                if self._solo == me and not self._pending:
                    self._run_guarded(fn, self._run_ctx(ctx), const, mutate, name)
                    return True
            finally:
                self._solo_running = False
                if self._solo_done is not None:
                    self._solo_done.set()
        return self._run_here(fn, ctx, const, mutate, name, fresh)

    def _run_here(self, fn, ctx, const, mutate, name, fresh) -> bool:
        """Run a cheap function on this thread now if its vars are free; whether it ran."""
        self._enter(get_ident())
        if (self._kept or self._queued) and not self._run_awaited(const, mutate):
            return False
        held = () if fresh else mutate      # fresh vars: nobody else can wait on them yet
        with self._lock:
            if self._forking is not None:
                self._hold_for_fork()
            if not _free(const, held):
                return False
            for v in const:
                v.readers += 1
            for v in held:
                v.writer = True
            self._pending += 1
        self._run_guarded(fn, self._run_ctx(ctx), const, mutate, name)
        self._complete(const, held, None)
        return True

    def _enter(self, me):
        """Thread ``me`` uses the engine: the first one to do so has it solo until another
        comes; from then on every function's vars are tracked, and the newcomer first lets a
        solo run in flight finish."""
        if self._solo == me or self._solo == _MULTI or _tls.in_worker:
            return
        with self._lock:
            if self._solo is None:
                self._solo = me
                return
            if self._solo in (me, _MULTI):
                return
            done = self._solo_done = Event()
            self._solo = _MULTI
        if self._solo_running:
            done.wait()

    # -- 3, 5: kept work and back-pressure ----------------------------------------------
    # One piece on purpose: a helper call would add ~0.1 µs, ~2.5% of a tiny executor node.
    def push(self, opr, ctx, priority=0):
        if not self.fast_paths or opr.deleted or self._stopped:
            return super().push(opr, ctx, priority)
        if opr.leaf and opr.cheap and not opr.is_async and self._run_inline(
                opr.fn, ctx, opr.const_vars, opr.mutate_vars, opr.name, False, True):
            return                      # a pre-built kernel (the executor's), as push_kernel
        me = get_ident()
        if opr.prop != _DELETE:
            self._enter(me)
            if self._kept or self._queued:
                self._run_awaited(opr.const_vars, opr.mutate_vars)
        cheap = opr.cheap
        blk = _Block(opr, ctx, priority, None if cheap else self._pool_for(ctx, opr.prop))
        if not cheap and opr.prop == _NORMAL and not _tls.in_worker and not blk.pool.pinned:
            blk.owner = me                # kept for this thread; a pinned pool's go to its workers
        todo = wake = None
        with self._lock:
            if self._admit(blk):
                if cheap:
                    blk.pool = self._pool_for(ctx, opr.prop)
                if opr.prop != _DELETE and self._kept:
                    todo = self._kept.pop(me, None)   # what the new function likely waits for
            elif cheap:
                todo = blk
            elif blk.owner is not None and not self._blocked:
                wake = self._keep(blk)
            else:
                self._enqueue(blk)
                wake = blk
        if todo is blk:
            self._execute(blk, None)
        elif todo:
            self._drive(todo)
        elif wake is not None:
            wake.pool.wake()
            if blk.owner is not None and self._queued > _AHEAD:
                self._catch_up(me)

    def _keep(self, blk):
        """Keep ready heavy ``blk`` for its pushing thread (lock held); a block that thread
        kept before goes to a worker and is returned, to be woken."""
        kept = self._kept.get(blk.owner)
        if kept is None:
            self._kept[blk.owner] = deque((blk,))
            return None
        prev = kept.popleft()
        kept.append(blk)
        self._enqueue(prev)
        return prev

    def _dispatch(self, ready, runner, wake):
        if not self.fast_paths:
            return super()._dispatch(ready, runner, wake)
        if type(runner) is deque:         # a thread driving work: cheap blocks and one heavy
            heavy = any(not b.opr.cheap for b in runner)
            for b in ready:
                if b.opr.cheap or not (heavy or b.pool.pinned):
                    runner.append(b)
                    heavy = heavy or not b.opr.cheap
                else:
                    self._enqueue(b)
                    wake.append(b.pool)
            return None
        mine = None
        if len(ready) > 1:        # cheap ones first: a waiter never sits behind a heavy copy
            ready.sort(key=_heavy)
        for b in ready:
            if b.owner is not None and not self._blocked:     # back to the pushing thread
                q = self._kept.get(b.owner)
                if q is None:
                    self._kept[b.owner] = deque((b,))
                else:
                    q.append(b)
            elif mine is None and runner is not None and (b.opr.cheap or b.pool is runner) \
                    and (runner is not COMPLETER or b.ctx is None):
                mine = b            # the completing worker's next; an async completer's waiter
            else:
                self._enqueue(b)
                wake.append(b.pool)
        return mine

    def _catch_up(self, me):
        """Thread ``me`` pushed ready heavy work far faster than the workers run it (they
        run only when it lets the GIL go): it runs its own oldest queued blocks until half
        of ``_AHEAD`` wait, so pending work, and the memory its outputs hold, stay bounded."""
        for _ in range(self._queued - _AHEAD // 2):
            with self._lock:
                blk = self._take_oldest(owner=me)
            if blk is None:
                return
            self._drive(deque((blk,)))

    # -- 4: waiter runs work ------------------------------------------------------------
    def _run_awaited(self, const, mutate) -> bool:
        """A function this thread pushes must wait: run here first what it may wait for and
        no thread has started: what this thread kept, else a queued block touching its vars.
        Whether its vars may be free now."""
        if _tls.in_worker:
            return True
        me = get_ident()
        ran = False
        while True:
            with self._lock:
                if _free(const, mutate):
                    return True
                todo = self._kept.pop(me, None)
                if todo is None:
                    blk = self._take_oldest({*const, *mutate})
                    if blk is None:
                        return ran
                    todo = deque((blk,))
            self._drive(todo)
            ran = True

    def _take_oldest(self, touching=None, owner=None):
        """Take out of its pool's heap the oldest queued block that has a var in ``touching``
        or, with ``owner``, was pushed by that thread (lock held); running anything else
        could block this thread on unrelated work. Its worker token is then spent idle."""
        best = best_pool = None
        for pool in self._pools.values():
            if pool.pinned:
                continue
            for entry in pool.heap:
                if best is not None and not entry < best:
                    continue
                blk = entry[2]
                if (blk.owner == owner if touching is None else
                        any(v in touching for v in (*blk.opr.const_vars, *blk.opr.mutate_vars))):
                    best, best_pool = entry, pool
        if best is None:
            return None
        best_pool.heap.remove(best)
        heapq.heapify(best_pool.heap)
        self._queued -= 1
        return best[2]

    def _drive(self, todo):
        """Run the ready blocks in ``todo`` on this (pushing or waiting) thread, with what
        they make ready (``_dispatch`` with a deque)."""
        prev = _tls.in_worker
        _tls.in_worker = True
        me = get_ident()
        try:
            while todo:
                self._run_block(todo.popleft(), todo)
                if not todo and self._kept:
                    with self._lock:      # handed back by a worker meanwhile
                        todo = self._kept.pop(me, None) or todo
        finally:
            _tls.in_worker = prev

    def _wait_var(self, var, write):
        if not self.fast_paths:
            return super()._wait_var(var, write)
        self._enter(get_ident())
        try:
            self._block(var, write)
            self._run_until_free(var, write)
            self._release_kept()    # it may wait for them in ways the queues do not show
            super()._wait_var(var, write)
        finally:
            self._unblock()

    def _wait_all(self):
        if not self.fast_paths:
            return super()._wait_all()
        self._enter(get_ident())
        try:
            self._block()
            super()._wait_all()
        finally:
            self._unblock()

    def _block(self, var=None, write=False):
        """This thread is about to block (on ``var``, or on everything): no thread keeps
        work from now on. What threads kept that this wait needs runs here (waiting for
        everything: one block here, the rest on workers); the rest stays kept."""
        mine = deque()
        with self._lock:
            self._blocked += 1
            if not self._kept:
                return
            if var is None:
                owner, first = next(iter(self._kept.items()))
                mine.append(first.popleft())
                if not first:
                    del self._kept[owner]
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
        if var is None:
            self._release_kept()
        self._drive(mine)

    def _unblock(self):
        with self._lock:
            self._blocked -= 1

    def _run_until_free(self, var, write):
        """Run here, oldest first, the queued blocks ``var`` waits for (directly or not)
        until it is free: a worker could not run Python meanwhile anyway, and each thread
        hand-off costs more than a small op."""
        while True:
            with self._lock:
                if not _busy(var, write):
                    return
                blk = self._take_oldest(_cone(var))
            if blk is None:
                return
            self._help(blk, var, write)

    def _help(self, blk, var, write):
        """Run ``blk`` and its ready successors here, as a worker of its pool would, until
        ``var`` is free; a successor left over goes back to its pool."""
        prev = _tls.in_worker
        _tls.in_worker = True
        try:
            while True:
                blk = self._run_block(blk, blk.pool)
                if blk is None:
                    return
                with self._lock:
                    if _busy(var, write):
                        continue
                    self._enqueue(blk)
                blk.pool.wake()
                return
        finally:
            _tls.in_worker = prev

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
            b.pool.wake()

    # -- fork ---------------------------------------------------------------------------
    def _fork_prepare(self):
        if self.fast_paths and not _tls.in_worker:
            self._enter(get_ident())    # a kernel another thread runs solo ends first, and its
            self._block()               # next waits for the lock; kept work goes to the
        super()._fork_prepare()         # workers, so the drain sees it done

    def _fork_parent(self):
        if self.fast_paths and not _tls.in_worker:
            self._blocked -= 1
        super()._fork_parent()

    def _fork_child(self):
        super()._fork_child()
        self._kept = {}
        self._blocked = 0
        self._solo = self._solo_done = None     # the child's one thread has it solo
        self._solo_running = False

    # -- 6: deletes ---------------------------------------------------------------------
    def push_delete(self, fn, ctx, var):
        # Most arrays die long after their last op. No lock: a dying var gets no new pushes,
        # and ``_grant`` sets a flag before it empties a queue, so ``var`` never looks idle
        # while a function still holds it.
        if self.fast_paths and type(var) is not tuple and not (
                var.writer or var.readers or var.queue):
            try:                  # a delete pushes and waits for nothing: no worker flag
                fn(self._run_ctx(ctx))
            except BaseException as exc:  # stored like a pushed function's
                self._fail(exc, "delete", ())
            return
        super().push_delete(fn, ctx, var)


def _busy(var, write):
    return var.writer or var.queue or (write and var.readers)


def _cone(var):
    """``var`` and every var of the functions queued on it, transitively (lock held)."""
    cone, todo = {var}, [var]
    while todo:
        for blk, _ in todo.pop().queue or ():
            for v in (*blk.opr.const_vars, *blk.opr.mutate_vars):
                if v not in cone:
                    cone.add(v)
                    todo.append(v)
    return cone


def _needed(blk, var, write, cone):
    """Whether a wait on ``var`` must see ``blk`` (granted its vars) finish."""
    if any(v in cone for v in blk.opr.mutate_vars):
        return True
    return any(v in cone and (write or v is not var) for v in blk.opr.const_vars)


def _heavy(blk):
    """Sort key: cheap blocks before heavy ones (a worker woken for two ready blocks may be
    the only one that wakes: ``SimpleQueue`` does not always wake a second waiter)."""
    return not blk.opr.cheap
