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
        mine = deque()
        with self._lock:
            self._blocked += 1
            if not self._kept:
                return
            if var is None:                       # this thread runs one, workers the rest
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

    def _wait_var(self, var, write):
        self._enter(threading.get_ident())
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
                blk = self._oldest_queued(_cone(var))   # what var waits for, directly or not
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

    def _wait_all(self):
        self._enter(threading.get_ident())
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
