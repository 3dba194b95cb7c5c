"""The engine API shared by every engine, and its error rules; subclasses supply scheduling."""

from __future__ import annotations

import threading

from ..base import EngineError, MXNetError
from . import _check, _events
from ..streams import wait_all_lanes
from ._types import RUN_CONTEXTS, FnProperty, OprHandle, RunContext, Var, _ErrorBox, var_lists

__all__ = ["Engine", "in_worker"]


class _ThreadState(threading.local):
    in_worker = False         # running an engine function (waits would deadlock)


_tls = _ThreadState()
_profiling = False            # mx.profiler records runs (_events.install)


def _set_profiling(active: bool) -> None:
    global _profiling
    _profiling = active


_events.watch(_set_profiling)


def in_worker() -> bool:
    """True while the current thread is running an engine function."""
    return _tls.in_worker


class Engine:
    """Push functions with the vars they read and mutate; see DESIGN.md §3.

    Two functions that share a var, one of them mutating it, run in push
    order; everything else may run in parallel. An exception in a function
    is stored on the vars it mutates, inherited by dependants (which are
    skipped), and raised once by ``wait_for_var`` / ``wait_for_all``.
    """

    name = "Engine"

    def __init__(self):
        self._errors: list[_ErrorBox] = []
        self._run_ctxs: dict = {}
        self._last_run_ctx = (None, None)     # (ctx, RunContext) of the last lookup

    def _run_ctx(self, ctx) -> RunContext:
        """The ``RunContext`` handed to functions on ``ctx`` (one per context, made once).
        The last one is kept by identity: hashing a Context is a Python call, and nearly every
        function in a program runs on the same Context object."""
        last = self._last_run_ctx
        if last[0] is ctx:
            return last[1]
        r = self._run_ctxs.get(ctx)
        if r is None:
            cls = RUN_CONTEXTS.get(ctx.device_type, RunContext) if ctx is not None else RunContext
            r = self._run_ctxs[ctx] = cls(ctx)
        self._last_run_ctx = (ctx, r)
        return r

    # -- the API ---------------------------------------------------------
    def new_var(self, name=None) -> Var:
        return Var(name)

    def new_operator(self, fn, const_vars=(), mutate_vars=(), prop=FnProperty.NORMAL,
                     name=None, cheap=False, is_async=True, leaf=False) -> OprHandle:
        """Pre-build an operator for repeated ``push``: async ``fn(run_ctx, on_complete)``,
        or with ``is_async=False`` sync ``fn(run_ctx)``. ``cheap`` and ``leaf`` (``fn``
        pushes and waits for nothing) let the engine run it at once on the pushing thread."""
        return OprHandle(fn, is_async, const_vars, mutate_vars, prop, name, cheap=cheap,
                         leaf=leaf)

    def delete_operator(self, opr: OprHandle) -> None:
        opr.deleted = True

    def push(self, opr: OprHandle, ctx, priority=0) -> None:
        raise NotImplementedError

    def push_async(self, fn, ctx, const_vars=(), mutate_vars=(), prop=FnProperty.NORMAL,
                   priority=0, name=None, cheap=False) -> None:
        """Push ``fn(run_ctx, on_complete)``; it is done when ``on_complete()`` is called
        (from any thread; ``on_complete(exc)`` reports a failure)."""
        self.push(OprHandle(fn, True, const_vars, mutate_vars, prop, name, cheap=cheap),
                  ctx, priority)

    def push_sync(self, fn, ctx, const_vars=(), mutate_vars=(), prop=FnProperty.NORMAL,
                  priority=0, name=None, cheap=False) -> None:
        """Push ``fn(run_ctx)``; it is done when it returns. ``cheap`` lets the engine run
        it on the pushing thread when its vars are already free."""
        self.push_kernel(fn, ctx, *var_lists(const_vars, mutate_vars), name, cheap, prop,
                         priority, leaf=False)

    def push_kernel(self, fn, ctx, const, mutate, name, cheap, prop=FnProperty.NORMAL,
                    priority=0, fresh=False, leaf=True):
        """Push sync kernel ``fn(run_ctx)`` (the frontends' entry): ``push_sync`` with the
        var lists already split, free of repeats, a var both read and written only in
        ``mutate``. ``cheap``: from the device's inline policy (``mxnext._runtime.inline``).
        ``fresh``: the ``mutate`` vars are new, unknown to any other thread until this
        returns; ``leaf``: ``fn`` pushes and waits for nothing. Both only inform fast paths."""
        self.push(OprHandle(fn, False, None, None, prop, name, cheap=cheap,
                            _lists=(const, mutate)), ctx, priority)

    def push_delete(self, fn, ctx, var) -> None:
        """Run ``fn(run_ctx)`` after every function pushed before on ``var`` (a Var, or a
        tuple of them); then they are dead. It runs even when one holds an error, so memory
        always returns."""
        vars_ = var if type(var) is tuple else (var,)
        self.push(OprHandle(fn, False, (), vars_, FnProperty.DELETE_VAR, "delete",
                            skip_on_error=False, cheap=True), ctx, 0)

    def wait_for_var(self, var: Var, write: bool = False, device: bool = True) -> None:
        """Block until every function pushed so far that writes ``var`` (with ``write``,
        also reads it) is done; raise the var's stored error once. ``device=False``: done
        as engine functions, the device work they enqueued may still run (for code about
        to change what queued functions reference, not to read their results)."""
        self._check_not_in_worker("wait_for_var")
        self._wait_var(var, write)
        if _check.ENABLED:
            _check.verify((var,), "wait_for_var")
        if device and var.dev is not None:    # a stream device's work behind it
            var.dev.wait_host(write)
        box = var.error
        if box is not None:
            var.error = None
            if box.exc is not None:
                _raise_box(box)

    def wait_for_all(self) -> None:
        """Block until every pushed function is done; raise the first stored error once
        and clear all of them."""
        self._check_not_in_worker("wait_for_all")
        self._wait_all()
        wait_all_lanes()
        errors, self._errors = self._errors, []
        first = next((b for b in errors if b.exc is not None), None)
        if first is not None:
            for b in errors:
                if b is not first:
                    b.exc = None
            _raise_box(first)

    def shutdown(self) -> None:
        """Finish outstanding work and stop worker threads."""

    def _wait_var(self, var, write):
        raise NotImplementedError

    def _wait_all(self):
        raise NotImplementedError

    # -- the error rules: every engine runs functions through these ---------------------
    def _run_guarded(self, fn, rctx, const, mutate, name, skip_on_error=True) -> None:
        """Run sync ``fn(rctx)``, granted its vars, as a pushed function: skipped when a var
        it touches holds an error (``_inherit``), else an exception it raises is stored
        (``_fail``)."""
        if skip_on_error and self._errors and self._inherit(const, mutate):
            return
        prev = _tls.in_worker
        _tls.in_worker = True
        try:
            if _check.ENABLED:
                _check.run(_call, fn, rctx, const, mutate, name)
            elif rctx.runner is not None:     # a device running functions on its streams
                rctx.runner(fn, const, mutate)
            elif _profiling:
                _events.run(fn, rctx, name)
            else:
                fn(rctx)
        except BaseException as exc:  # stored and re-raised by the waits
            self._fail(exc, name, mutate)
        finally:
            _tls.in_worker = prev

    def _inherit(self, const, mutate) -> bool:
        """If a var of a function about to run holds an error, the function is skipped and
        the vars it mutates inherit that error; whether it is skipped. Called only while the
        engine has stored errors (every box is stored before it reaches a var)."""
        for v in (*const, *mutate):
            box = v.error
            if box is not None and box.exc is not None:
                for m in mutate:
                    m.error = box
                return True
        return False

    def _fail(self, exc, name, mutate) -> None:
        """Store ``exc`` raised by function ``name`` and put it on the vars it mutates."""
        box = _ErrorBox(exc, name)
        self._store_error(box)
        for v in mutate:
            v.error = box

    def _store_error(self, box):
        self._errors.append(box)

    def _run_now(self, opr, ctx):
        """Run ``opr`` on this thread at once (its vars must be free): NaiveEngine's push,
        and any engine's after ``shutdown``."""
        self._check_pushable(opr)
        fn = _until_complete(opr.fn) if opr.is_async else opr.fn
        self._run_guarded(fn, self._run_ctx(ctx), opr.const_vars, opr.mutate_vars, opr.name,
                          opr.skip_on_error)

    @staticmethod
    def _check_pushable(opr):
        if opr.deleted:
            raise EngineError(f"engine.push: operator {opr.name!r} was deleted "
                              "by delete_operator")

    @staticmethod
    def _check_not_in_worker(what):
        if _tls.in_worker:
            raise EngineError(f"{what} called from inside an engine function: it would "
                              "deadlock; push a dependent function instead")


def _call(fn, rctx, const, mutate, name):
    """``_run_guarded``'s call of ``fn``, as a function (for the engine check)."""
    if rctx.runner is not None:
        rctx.runner(fn, const, mutate)
    elif _profiling:
        _events.run(fn, rctx, name)
    else:
        fn(rctx)


def _until_complete(fn):
    """Async ``fn(rctx, on_complete)`` as a sync function that returns once ``on_complete``
    is called and raises the error reported to it."""
    def run(rctx):
        done = threading.Event()
        result = []

        def on_complete(exc=None):
            result.append(exc)
            done.set()
        fn(rctx, on_complete)
        done.wait()
        if result[0] is not None:
            raise result[0]
    return run


def _raise_box(box: _ErrorBox):
    exc = box.exc
    box.exc = None
    msg = f"operator '{box.opname}' failed: {type(exc).__name__}: {exc}"
    if isinstance(exc, MXNetError):
        try:
            err = type(exc)(msg)
        except Exception:
            err = EngineError(msg)
    else:
        err = _error_class(exc)(msg)
    raise err from exc


_KINDS = (IndexError, ValueError, TypeError, AttributeError, KeyError)
_kinds: dict = {}


def _error_class(exc):
    """EngineError, or for the Python error kinds MXNet passes through by type (its
    ``register_error``: IndexError, ValueError, ...) an EngineError that is also one, so
    ``except IndexError`` works as with MXNet and ``except MXNetError`` too."""
    for kind in _KINDS:
        if isinstance(exc, kind):
            cls = _kinds.get(kind)
            if cls is None:
                cls = _kinds[kind] = type(f"Engine{kind.__name__}", (EngineError, kind),
                                          {"__module__": __name__})
            return cls
    return EngineError
