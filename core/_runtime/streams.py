"""Devices with streams: engine functions enqueue their work and complete at once; what the
device still has to do is tracked per engine var (docs/internals.md "Streams").

A stream device (a GPU) runs an engine function by making the running thread's stream (its
``Lane`` on that device id: one per engine worker and per user thread) current, calling the
function, which enqueues kernels, and returning without waiting for them. The engine then
completes the function and grants its vars to the next ones, so the pushing thread never
waits for the device. Ordering on the device comes from marks:

- A mark ``(lane, seq)`` stands for the ``seq``-th function enqueued on ``lane``. Work on one
  lane runs in enqueue order, so only marks of *other* lanes are ever waited for.
- ``Var.dev`` holds a ``Uses``: ``w``, the mark of the var's last writer (what a reader waits
  for), and ``uses``, the marks a writer waits for (that writer's and the readers' since),
  at most one per lane.
- Before a function runs, its lane waits on the device (``Lane.wait``) for the other lanes'
  marks it depends on; the host never blocks there.
- A host wait (``wait_to_read``, ``wait_to_write``, ``asnumpy``) synchronizes an event
  recorded on the mark's lane: a lane records an event only when one is asked for, covering
  all it has enqueued by then, and remembers how far its work is known done.
- A pooled block freed while marks on it may be pending keeps them: the next array made on
  it starts with them as its ``uses`` (``mxnext.storage``), so a first writer on another lane
  waits for the old work; memory handed out without a var waits on the host, and memory
  freed without one keeps the marks of all lanes' work so far.

A device subclasses ``Lane`` (``record``, ``wait_event``, ``synchronize_event``,
``event_done``, ``enter``) and ``StreamRunContext`` (``lane()``); the rest is here.
"""

from __future__ import annotations

import weakref

from .engine._types import RunContext

__all__ = ["Lane", "Uses", "StreamRunContext", "wait_all_lanes", "adopt", "current_marks"]

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

    # -- the device's part ------------------------------------------------------------
    def record(self):
        """An event recorded now on ``stream``."""
        raise NotImplementedError

    def wait_event(self, event) -> None:
        """Make work enqueued on ``stream`` from now on wait for ``event`` (on the device)."""
        raise NotImplementedError

    def synchronize_event(self, event) -> None:
        """Block the host until ``event`` has happened."""
        raise NotImplementedError

    def event_done(self, event) -> bool:
        raise NotImplementedError

    def enter(self):
        """A context manager making ``stream`` current on this thread."""
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
        """Make this lane's next work wait for ``mark`` of another lane (nothing when known
        done)."""
        lane, seq = mark
        if seq > lane.done:
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

    def pending(self):
        """The marks not known done, or None."""
        left = tuple(m for m in self.uses if not m[0].is_done(m[1]))
        return left or None


class StreamRunContext(RunContext):
    """Base of a stream device's ``run_context``: a subclass gives ``lane()`` (the running
    thread's lane on ``ctx.device_id``, that device made current); ``run`` is the engine's
    runner for every function on the context."""

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


def adopt(var, marks) -> None:
    """A new array's ``var`` on a block whose old work (``marks``) may be pending: its first
    writer waits for them."""
    var.dev = Uses(None, marks)


def current_marks() -> tuple:
    """The marks of all work enqueued so far on every lane and not known done."""
    return tuple((lane, lane.seq) for lane in list(_lanes) if lane.seq > lane.done)


def wait_all_lanes() -> None:
    """Block until every lane's enqueued work has run (``waitall``)."""
    for lane in list(_lanes):
        lane.wait_host(lane.seq)
