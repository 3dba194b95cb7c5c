"""Devices with streams (docs/internals.md "Streams"): an engine function on such a device
enqueues its kernels on the running thread's ``Lane`` and completes at once; marks on the
engine vars order the lanes. A mark ``(lane, seq)`` is the lane's ``seq``-th function;
``Var.dev`` (a ``Uses``) holds the last writer's mark (what readers wait for) and the marks
a writer waits for (one per lane). Only other lanes' marks are waited for, on the device;
host waits synchronize an event a lane records when asked. A freed pooled block keeps the
marks of the work on it for the next array made there (``mxnext.storage``). A device
subclasses ``Lane`` (``record``, ``wait_event``, ``synchronize_event``, ``event_done``,
``enter``) and ``StreamRunContext`` (``lane()``).
"""

from __future__ import annotations

import weakref

from .engine._types import RunContext

__all__ = ["Lane", "Uses", "StreamRunContext", "wait_all_lanes", "current_marks"]

_lanes = weakref.WeakSet()        # every lane made, for ``wait_all_lanes``


class Lane:
    """One thread's stream on one device id and how far its work has gone."""

    __slots__ = ("stream", "seq", "done", "_mark", "__weakref__")

    def __init__(self, stream):
        self.stream = stream
        self.seq = 0              # functions enqueued so far
        self.done = 0             # functions known complete
        self._mark = (None, -1)   # (event, seq it covers): the last event recorded
        _lanes.add(self)

    # -- the device's part: an event recorded now on ``stream``; make ``stream`` wait for
    # one (on the device); block the host on one; whether one happened; ``stream`` current
    def record(self):
        raise NotImplementedError

    def wait_event(self, event) -> None:
        raise NotImplementedError

    def synchronize_event(self, event) -> None:
        raise NotImplementedError

    def event_done(self, event) -> bool:
        raise NotImplementedError

    def enter(self):
        raise NotImplementedError

    # -- marks ------------------------------------------------------------------------
    def event(self, seq):
        """``(event, covered)``: an event that happens once the first ``seq`` functions
        have run; it covers the first ``covered`` (>= ``seq``)."""
        ev, at = self._mark
        if at < seq:
            at = self.seq             # read before recording: all of these are enqueued
            ev = self.record()
            self._mark = (ev, at)
        return ev, at

    def wait_host(self, seq) -> None:
        """Block until the first ``seq`` functions enqueued here have run."""
        if seq > self.done:
            ev, at = self.event(seq)
            self.synchronize_event(ev)
            if at > self.done:
                self.done = at

    def is_done(self, seq) -> bool:
        if seq <= self.done:
            return True
        ev, at = self.event(seq)
        if self.event_done(ev):
            if at > self.done:
                self.done = at
            return True
        return False

    def wait_mark(self, mark) -> None:
        """This lane's next work waits for ``mark`` of another lane of its kind, unless known
        done (another device type's work reaches this one only through host copies)."""
        lane, seq = mark
        if seq > lane.done and type(lane) is type(self):
            self.wait_event(lane.event(seq)[0])


class Uses:
    """The device work on one var: ``w``, the last writer's mark; ``uses``, the marks a new
    writer waits for (at most one per lane)."""

    __slots__ = ("w", "uses")

    def __init__(self, w, uses):
        self.w = w
        self.uses = uses

    def read(self, mark):
        """A reader at ``mark``: it replaces the older use on its lane."""
        uses = self.uses
        lane = mark[0]
        if uses and uses[-1][0] is lane:
            self.uses = (*uses[:-1], mark)
        else:
            self.uses = (*(m for m in uses if m[0] is not lane), mark)

    def wait_host(self, write) -> None:
        """Block until the var can be read (``write``: written) from the host."""
        if write:
            for lane, seq in self.uses:
                lane.wait_host(seq)
        elif self.w is not None:
            self.w[0].wait_host(self.w[1])


class StreamRunContext(RunContext):
    """A stream device's ``run_context``: subclasses give ``lane()`` (the running thread's on
    ``ctx.device_id``, that device made current); ``run`` is the engine's runner."""

    __slots__ = ()

    def __init__(self, ctx):
        self.ctx = ctx
        self.runner = self.run

    def lane(self) -> Lane:
        raise NotImplementedError

    @property
    def stream(self):
        return self.lane().stream

    def run(self, fn, const=(), mutate=()):
        """Enqueue ``fn(self)`` on this thread's lane after the other lanes' work it depends
        on (``const`` read, ``mutate`` written), and mark its vars; returns at once."""
        lane = self.lane()
        for v in const:
            u = v.dev
            if u is not None and u.w is not None and u.w[0] is not lane:
                lane.wait_mark(u.w)
        for v in mutate:
            u = v.dev
            if u is not None:
                for m in u.uses:
                    if m[0] is not lane:
                        lane.wait_mark(m)
        with lane.enter():
            fn(self)
        lane.seq = seq = lane.seq + 1
        mark = (lane, seq)
        for v in const:
            u = v.dev
            if u is None:
                v.dev = Uses(None, (mark,))
            else:
                u.read(mark)
        for v in mutate:
            u = v.dev
            if u is None:
                v.dev = Uses(mark, (mark,))
            else:
                u.w = mark
                u.uses = (mark,)


def current_marks() -> tuple:
    """The marks of all work enqueued so far on every lane and not known done."""
    return tuple((lane, lane.seq) for lane in list(_lanes) if lane.seq > lane.done)


def wait_all_lanes() -> None:
    """Block until every lane's enqueued work has run (``waitall``)."""
    for lane in list(_lanes):
        lane.wait_host(lane.seq)
