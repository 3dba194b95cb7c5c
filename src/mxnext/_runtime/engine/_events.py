"""The profiler's event hooks in the engine.

Every function the engine runs passes ``Engine._run_guarded`` (sync) or ``_start_async``
(async); both test one module flag of ``_base`` and, only while ``mx.profiler`` records
operators, hand the run to ``run`` / ``timed_completion`` here, which time it and report to
the profiler's sink. The engine never imports the profiler: the profiler ``install``s its
sink. Executor operators carry ``SYMBOLIC`` (an attribute of the pushed function: the
name of its ops, as MXNet's profiler shows them), so the profiler tells symbolic from
imperative runs; code running inside a custom operator's
Python ``forward``/``backward`` sets ``custom.op_type``, so what it runs here is named
``<op_type>::<op>`` as MXNet names it.
"""

from __future__ import annotations

import threading
from time import perf_counter_ns

__all__ = ["install", "run", "timed_completion", "custom_call", "custom", "SYMBOLIC"]

SYMBOLIC = "_profile_symbolic"   # attribute of functions an executor pushes: op names
_sink = None                     # fn(name, fn, ctx, t0_ns, t1_ns) while recording


class _Custom(threading.local):
    op_type = None               # the custom op whose Python code this thread runs


custom = _Custom()


_watchers = []                   # fn(active) of engine modules that cache "is a sink set"


def watch(fn) -> None:
    """Call ``fn(active)`` whenever a sink is installed or removed (``_base`` keeps its one
    flag this way, so the hot path tests a module global and imports nothing here)."""
    _watchers.append(fn)


def install(sink) -> None:
    """Start (``sink`` a callable) or stop (None) reporting engine runs."""
    global _sink
    _sink = sink
    for fn in _watchers:
        fn(sink is not None)


def run(fn, rctx, name) -> None:
    """Run sync ``fn(rctx)`` and report its span (also when it raises)."""
    t0 = perf_counter_ns()
    try:
        fn(rctx)
    finally:
        sink = _sink
        if sink is not None:
            sink(name, fn, rctx.ctx, t0, perf_counter_ns())


def timed_completion(fn, on_complete, rctx, name):
    """``on_complete`` of async ``fn`` that reports the span from now to its call."""
    t0 = perf_counter_ns()

    def done(exc=None):
        sink = _sink
        if sink is not None:
            sink(name, fn, rctx.ctx, t0, perf_counter_ns())
        on_complete(exc)
    return done


def custom_call(label, call, ctx) -> None:
    """Run a custom op's Python code ``call()``; while recording, what it runs on this
    thread is named ``<label>::<op>`` and the code itself is reported as
    ``<label>::pure_python`` (``label``: the op type, ``_backward_`` + it for backward)."""
    if _sink is None:
        call()
        return
    custom.op_type = label
    t0 = perf_counter_ns()
    try:
        call()
    finally:
        custom.op_type = None
        sink = _sink
        if sink is not None:
            sink(f"{label}::pure_python", None, ctx, t0, perf_counter_ns())
