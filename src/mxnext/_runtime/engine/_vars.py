"""The dependency rule, per var (MXNet's ThreadedVar), and the push it applies to.

A var grants, in push order, either one writer or any number of consecutive
readers; a request that cannot be granted yet waits in the var's FIFO queue.
The functions below are called with the engine's lock held.
"""

from __future__ import annotations

from collections import deque

__all__ = []


class _Block:
    """One push of an operator: ``wait`` counts the vars not yet granted to it."""

    __slots__ = ("opr", "ctx", "priority", "wait", "pool", "owner")

    def __init__(self, opr, ctx, priority, pool):
        self.opr = opr
        self.ctx = ctx
        self.priority = priority
        self.wait = 0
        self.pool = pool
        self.owner = None         # fast paths: the pushing thread, which would rather run it


def _queue(v):
    """``v``'s queue, made on first use (most vars never need one: a deque is 760 bytes)."""
    q = v.queue
    if q is None:
        q = v.queue = deque()
    return q


def _request(blk):
    """Ask for every var of ``blk``: grant what is free now, queue the rest; how many
    requests wait."""
    wait = 0
    for v in blk.opr.const_vars:
        if v.writer or v.queue:
            _queue(v).append((blk, False))
            wait += 1
        else:
            v.readers += 1
    for v in blk.opr.mutate_vars:
        if v.writer or v.readers or v.queue:
            _queue(v).append((blk, True))
            wait += 1
        else:
            v.writer = True
    blk.wait = wait
    return wait


def _free(const, mutate):
    """Whether a function reading ``const`` and writing ``mutate`` would be granted all now."""
    for v in const:
        if v.writer or v.queue:
            return False
    for v in mutate:
        if v.writer or v.readers or v.queue:
            return False
    return True


def _return(const, mutate, ready):
    """Give back the vars of a finished function; blocks that thereby got their last var
    are appended to ``ready``."""
    for v in const:
        v.readers -= 1
        if not v.readers and v.queue:
            _grant(v, ready)
    for v in mutate:
        v.writer = False
        if v.queue:
            _grant(v, ready)


def _grant(v, ready):
    """Grant ``v`` to the head of its queue: one writer, or every leading reader. A flag is
    set before its entry leaves the queue, so ``v`` never looks idle while held."""
    if v.writer:
        return
    q = v.queue
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
