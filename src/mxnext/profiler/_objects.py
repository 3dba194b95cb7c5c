"""The objects programs profile their own code with (MXNet's ``Domain``, ``Task``,
``Frame``, ``Event``, ``Counter``, ``Marker``) and MXNet 2's ``scope``.

Each reports to the profiler only while it runs and is not paused. Trace categories are
MXNet's: a task's is its domain's name, a frame's ``<domain>,frame``, an event's
``event``, a counter's its domain's, a marker's ``<domain>,instant_marker``.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from time import perf_counter_ns

from .._runtime.base import MXNetError, ParamError, did_you_mean
from ._record import profiler

__all__ = ["Domain", "Task", "Frame", "Event", "Counter", "Marker", "scope"]


class Domain:
    """A named group of tasks, frames, counters and markers (a category in the trace)."""

    def __init__(self, name):
        if not name:
            raise MXNetError("profiler.Domain: name must be a non-empty string")
        self.name = str(name)

    def __str__(self):
        return self.name

    def new_task(self, name):
        return Task(self, name)

    def new_frame(self, name):
        return Frame(self, name)

    def new_counter(self, name, value=None):
        return Counter(self, name, value)

    def new_marker(self, name):
        return Marker(self, name)


class _Span:
    """A named stretch of time between ``start()`` and ``stop()``."""

    _phases = ("B", "E")

    def __init__(self, name, category):
        self.name = str(name)
        self._category = category
        self._start = None

    def start(self):
        """Start timing."""
        self._start = perf_counter_ns()

    def stop(self):
        """Stop timing and report the span."""
        if self._start is None:
            raise MXNetError(f"profiler.{type(self).__name__} {self.name!r}: stop() before "
                             f"start()")
        b, e = self._phases
        profiler.add(("span", self.name, self._category, b, e, self._start,
                      perf_counter_ns(), threading.get_ident()))

    def __str__(self):
        return self.name


class Task(_Span):
    """A unit of work of one thread; passes are aggregated into one statistic."""

    _phases = ("b", "e")

    def __init__(self, domain, name):
        super().__init__(name, domain.name)
        self.domain = domain


class Frame(_Span):
    """A discretely numbered period (a frame of output), shown on a track of its own."""

    _phases = ("(", ")")

    def __init__(self, domain, name):
        super().__init__(name, f"{domain.name},frame")
        self.domain = domain


class Event(_Span):
    """A region of code of the current thread."""

    def __init__(self, name):
        super().__init__(name, "event")


class Counter:
    """A value tracked over time; every change is reported."""

    def __init__(self, domain, name, value=None):
        self.domain = domain
        self.name = str(name)
        self.value = 0
        if value is not None:
            self.set_value(value)

    def _report(self):
        profiler.add(("count", self.name, self.domain.name, perf_counter_ns(), self.value,
                      threading.get_ident()))

    def set_value(self, value):
        self.value = int(value)
        self._report()

    def increment(self, delta=1):
        self.value += int(delta)
        self._report()

    def decrement(self, delta=1):
        self.value -= int(delta)
        self._report()

    def __iadd__(self, delta):
        self.increment(delta)
        return self

    def __isub__(self, delta):
        self.decrement(delta)
        return self

    def __str__(self):
        return self.name


_SCOPES = {"global": "g", "process": "p", "thread": "t", "task": "p", "marker": "p"}


class Marker:
    """An instant in time, marked across a scope (chrome's instant event scope)."""

    def __init__(self, domain, name):
        self.domain = domain
        self.name = str(name)

    def mark(self, scope="process"):
        """Mark now; ``scope``: 'global', 'process', 'thread', 'task' or 'marker'."""
        char = _SCOPES.get(scope)
        if char is None:
            raise ParamError(f"profiler.Marker.mark: scope must be one of "
                             f"{', '.join(_SCOPES)}, got {scope!r}"
                             f"{did_you_mean(str(scope), _SCOPES)}")
        profiler.add(("mark", self.name, f"{self.domain.name},instant_marker",
                      perf_counter_ns(), char, threading.get_ident()))


_current_scope = contextvars.ContextVar("profiler_scope", default="<unk>:")


@contextlib.contextmanager
def scope(name="<unk>:", append_mode=True):
    """MXNet 2's profiler scope: ``with profiler.scope("net"):`` names what runs inside;
    nested scopes join (``"outer:inner:"``) unless ``append_mode`` is False. Yields the
    scope's full name; ``current_scope()`` reads it."""
    name = name if name.endswith(":") else name + ":"
    outer = _current_scope.get()
    if append_mode and outer != "<unk>:":
        name = outer + name
    token = _current_scope.set(name)
    try:
        yield name
    finally:
        _current_scope.reset(token)


def current_scope() -> str:
    """The innermost ``scope``'s name (``"<unk>:"`` outside any)."""
    return _current_scope.get()
