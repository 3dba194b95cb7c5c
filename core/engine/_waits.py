"""How a thread waits on a threaded engine: it first runs, itself, the ready functions it
waits for (kept by any thread, or queued and not started), since a worker could not run
Python while it does anyway; only then does it sleep. Mixed into ``ThreadedEngine``,
whose lock, pools and kept work these methods use."""

from __future__ import annotations

import threading
from collections import deque

from ._base import _tls
from ._blocks import _busy, _cone, _needed
from ._types import FnProperty, OprHandle

__all__ = []


class WaitMixin:
    """``wait_for_var``/``wait_for_all`` of ``ThreadedEngine``."""

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
        me = threading.get_ident()
        if self._solo != me:
            self._enter(me)
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
        me = threading.get_ident()
        if self._solo != me:
            self._enter(me)
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
