"""What the threaded engines schedule: blocks (one push each), worker pools, and the
per-var state rules (MXNet's ThreadedVar: running readers, a running writer, a FIFO of
waiting blocks); the rules are called with the engine's lock held."""

from __future__ import annotations

import os
import threading
from collections import deque
from queue import SimpleQueue

__all__ = []


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


def _queue(v):
    """``v``'s queue, made on first use (most vars never need one: a deque is 760 bytes)."""
    q = v.queue
    if q is None:
        q = v.queue = deque()
    return q


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
