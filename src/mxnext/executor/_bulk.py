"""MXNet's bulk execution: runs of consecutive small nodes pushed as one engine operator (a
segment), which saves the engine's per-push bookkeeping.

As MXNet's graph executor (``InitOpSegs``/``BulkOpSegs``): a program with a backward graph
(training) cuts its forward and its backward nodes into segments of at most
``MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD`` / ``_BWD`` nodes (both default to
``MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN``, 15) when ``MXNET_EXEC_BULK_EXEC_TRAIN`` is on; one
without (inference) has no size limit when ``MXNET_EXEC_BULK_EXEC_INFERENCE`` is on. An async
node (``FExecType`` async: ``Custom``) ends a segment and runs alone. The switches are read
at bind time.

Unlike MXNet, a node writing more than 64 KB (``CHEAP_BYTES``) runs alone too: its kernel
dwarfs the push it would save (bulking such nodes measured no faster, docs/executor.md), and
alone it can still run on a worker beside its neighbours.
"""

from __future__ import annotations

import os

from .._runtime.base import MXNetError
from .._runtime.engine._events import SYMBOLIC

__all__ = ["Segment", "limits", "max_nodes", "segments"]


def _flag(name):
    return os.environ.get(name, "1").strip().lower() not in ("0", "false")


def _count(name, default):
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXNetError(f"{name} must be an integer number of nodes, got {value!r}") from None


def max_nodes():
    """(forward, backward) segment sizes of a training program, from the environment."""
    both = _count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15)
    return (_count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", both),
            _count("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", both))


def limits(training, sizes=None):
    """(forward, backward) nodes per segment, 1 where bulking is off. ``training``: the
    program has a backward graph; ``sizes``: a training program's (forward, backward) sizes
    (CachedOp's flags), else ``max_nodes()``."""
    if not training:
        return (None, 1) if _flag("MXNET_EXEC_BULK_EXEC_INFERENCE") else (1, 1)
    if not _flag("MXNET_EXEC_BULK_EXEC_TRAIN"):
        return (1, 1)
    fwd, bwd = sizes or max_nodes()
    return max(int(fwd), 1), max(int(bwd), 1)


def segments(runs, limit):
    """``runs`` (in push order) cut into lists of at most ``limit`` (None: no limit)
    consecutive runs; a run that is not ``bulkable`` (async or large) is a list of its own."""
    out, cur = [], []
    for run in runs:
        if not run.bulkable:
            if cur:
                out.append(cur)
            out.append([run])
            cur = []
            continue
        cur.append(run)
        if limit is not None and len(cur) >= limit:
            out.append(cur)
            cur = []
    if cur:
        out.append(cur)
    return out


class Segment:
    """Runs pushed as one operator, at ``slot`` (operator list, index): cheap (run at once
    where pushed) while every member is."""

    __slots__ = ("runs", "slot")

    def __init__(self, runs):
        self.runs = runs
        self.slot = None

    @property
    def name(self):
        if len(self.runs) == 1:
            return self.runs[0].kernel.name
        return "[" + ",".join(r.kernel.name for r in self.runs) + "]"

    @property
    def cheap(self):
        return all(r.cheap for r in self.runs)

    def function(self, is_train):
        """What is pushed: the single run's function, or each member's in turn. A member
        that raises ends the segment; the engine stores the error on every var the
        segment mutates, so it surfaces at the wait as a single node's does."""
        fns = [r.bound(is_train) for r in self.runs]
        if len(fns) == 1:
            fn = fns[0]
        else:
            def fn(rctx):
                for f in fns:
                    f(rctx)
        # for the profiler: a symbolic run, named by its ops as MXNet names segments
        ops = [r.kernel.op.name for r in self.runs]
        setattr(fn, SYMBOLIC, ops[0] if len(ops) == 1 else "[" + ",".join(ops) + "]")
        return fn

    def update_cheap(self):
        oprs, i = self.slot
        oprs[i].cheap = self.cheap
