"""The dependency engine (DESIGN.md §3).

``get()`` returns the process engine, chosen by ``MXNEXT_ENGINE_TYPE`` (or
MXNet's ``MXNET_ENGINE_TYPE``): ``NaiveEngine``, ``ThreadedEngine`` or
``ThreadedEnginePerDevice`` (default). ``set_engine`` swaps it in-process;
``use_engine`` does so for a ``with`` block. The threaded engines' speed policy
(``_fastpath``) is on unless ``MXNEXT_ENGINE_FAST_PATHS=0``.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading

from ..base import MXNetError
from ..threads import apply_thread_policy
from ._base import Engine, _tls, in_worker
from ._types import FnProperty, OprHandle, RunContext, Var
from .naive import NaiveEngine
from .threaded import ThreadedEngine, ThreadedEngineBase, ThreadedEnginePerDevice, _live

__all__ = ["Engine", "NaiveEngine", "ThreadedEngine", "ThreadedEngineBase",
           "ThreadedEnginePerDevice", "FnProperty", "bulk", "set_bulk_size",
           "RunContext", "Var", "OprHandle", "get", "set_engine", "use_engine", "in_worker",
           "ENGINES"]

ENGINES = {cls.name: cls for cls in (NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice)}

_engine: Engine | None = None


def _create(name: str) -> Engine:
    try:
        return ENGINES[name]()
    except KeyError:
        raise MXNetError(f"unknown engine type {name!r}; known engines are: "
                         f"{', '.join(ENGINES)}") from None


def get() -> Engine:
    """The current engine (created on first use)."""
    global _engine
    if _engine is None:
        apply_thread_policy()
        _engine = _create(os.environ.get("MXNEXT_ENGINE_TYPE")
                          or os.environ.get("MXNET_ENGINE_TYPE") or "ThreadedEnginePerDevice")
    return _engine


def set_engine(engine) -> Engine:
    """Finish all work on the current engine, then make ``engine`` (a name or an
    instance) current. Returns the previous engine."""
    global _engine
    old = get()
    new = _create(engine) if isinstance(engine, str) else engine
    if new is not old:
        old.wait_for_all()
        _engine = new
    return old


@contextlib.contextmanager
def use_engine(engine):
    """Run a block on another engine, e.g. ``with use_engine("NaiveEngine"):``. On exit
    the block's work is finished and the previous engine is back even if that work
    failed (the failure is raised after the switch back)."""
    global _engine
    old = set_engine(engine)
    new = get()
    try:
        yield new
    finally:
        try:
            new.wait_for_all()
        finally:
            _engine = old
            if isinstance(engine, str):
                new.shutdown()  # made for this block only: stop its threads


class _BulkSize(threading.local):
    size = 0                  # MXNet's default: no bulking


_bulk = _BulkSize()


def set_bulk_size(size: int) -> int:
    """Set this thread's bulk size, how many imperative ops MXNet would bundle into one engine
    task; returns the previous one (MXNet's ``mx.engine.set_bulk_size``).

    Results never depend on it. The engines keep the setting but do not bundle: the fast
    paths already run short kernels at once on the pushing thread, which is what bundling
    buys MXNet, and deferring kernels to run them in batches measured no faster
    (docs/engine.md)."""
    if isinstance(size, bool) or not isinstance(size, int) or size < 0:
        raise MXNetError(f"engine.set_bulk_size: size must be an int >= 0, got {size!r}")
    prev, _bulk.size = _bulk.size, size
    return prev


class bulk:
    """``with mx.engine.bulk(size):`` runs the block with bulk size ``size`` (see
    ``set_bulk_size``), restoring the previous one after."""

    def __init__(self, size: int):
        self._size = size
        self._old = None

    def __enter__(self):
        self._old = set_bulk_size(self._size)
        return self

    def __exit__(self, *exc):
        set_bulk_size(self._old)


_forking: list = []        # the threaded engines held over a fork


def _fork_prepare():
    """Before ``os.fork`` (``mxnext._runtime.fork``): finish the work of every threaded engine and
    hold it still until the fork is done."""
    _forking[:] = list(_live)
    for eng in _forking:
        eng._fork_prepare()


def _fork_parent():
    for eng in _forking:
        eng._fork_parent()
    _forking.clear()


def _fork_child():
    """The child starts with idle engines; a fork from inside an engine function leaves
    that function nothing to deadlock on, so the child may wait like any thread."""
    for eng in _forking:
        eng._fork_child()
    _forking.clear()
    _tls.in_worker = False


@atexit.register
def _finish_at_exit():
    if _engine is not None:
        try:
            _engine.wait_for_all()
        except MXNetError:
            pass  # errors nobody waited for die with the process, as in MXNet
        _engine.shutdown()
