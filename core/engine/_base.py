"""The engine API shared by every engine; subclasses supply scheduling."""

from __future__ import annotations

import threading

from ..base import EngineError, MXNetError
from ._types import FnProperty, OprHandle, RunContext, Var, _ErrorBox, var_lists

__all__ = ["Engine", "in_worker"]

class _ThreadState(threading.local):
    in_worker = False         # running an engine function (waits would deadlock)


_tls = _ThreadState()


def in_worker() -> bool:
    """True while the current thread is running an engine function."""
    return _tls.in_worker


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
        err = EngineError(msg)
    raise err from exc


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

    def _run_ctx(self, ctx) -> RunContext:
        """The ``RunContext`` handed to functions on ``ctx`` (one per context, made once)."""
        r = self._run_ctxs.get(ctx)
        if r is None:
            r = self._run_ctxs[ctx] = RunContext(ctx)
        return r

    # -- the API ---------------------------------------------------------
    def new_var(self, name=None) -> Var:
        return Var(name)

    def new_operator(self, fn, const_vars=(), mutate_vars=(), prop=FnProperty.NORMAL,
                     name=None, cheap=False) -> OprHandle:
        """Pre-build an async operator ``fn(run_ctx, on_complete)`` for repeated ``push``."""
        return OprHandle(fn, True, const_vars, mutate_vars, prop, name, cheap=cheap)

    def delete_operator(self, opr: OprHandle) -> None:
        opr.deleted = True

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
        self._push_lists(fn, ctx, *var_lists(const_vars, mutate_vars), name, cheap, prop,
                         priority)

    def _push_lists(self, fn, ctx, const, mutate, name, cheap, prop=FnProperty.NORMAL,
                    priority=0, fresh=False, leaf=False):
        """``push_sync`` with var tuples already free of repeats, a var both read and
        written only in ``mutate`` (the imperative hot path builds them so). ``fresh``: the
        ``mutate`` vars are new, unknown to any other thread until this returns; ``leaf``:
        ``fn`` pushes and waits for nothing (a kernel)."""
        if cheap and self._run_here(fn, ctx, const, mutate, name, fresh, leaf):
            return
        self.push(OprHandle(fn, False, None, None, prop, name, cheap=cheap,
                            _lists=(const, mutate)), ctx, priority)

    def _run_here(self, fn, ctx, const, mutate, name, fresh=False, leaf=False) -> bool:
        """Run a cheap sync function on this thread now if its vars allow; whether it ran.
        No operator is built for it (the imperative hot path)."""
        return False

    def _call_here(self, fn, ctx, const, mutate, name):
        """Run ``fn`` on this thread with a pushed function's error rules (vars granted);
        the error box it leaves on ``mutate``, or None."""
        box = _inherited(const, mutate) if self._errors else None
        if box is None:
            prev = _tls.in_worker
            _tls.in_worker = True
            try:
                fn(self._run_ctxs.get(ctx) or self._run_ctx(ctx))
            except BaseException as exc:  # stored and re-raised by the waits
                box = _ErrorBox(exc, name or getattr(fn, "__name__", "<fn>"))
                self._store_error(box)
            finally:
                _tls.in_worker = prev
        return box

    def push_delete(self, fn, ctx, var: Var) -> None:
        """Run ``fn(run_ctx)`` after every function pushed before on ``var``; then ``var`` is dead.
        It runs even when ``var`` holds an error, so memory always returns."""
        if self._idle_var(var):
            self._delete_now(fn, ctx)
        else:
            self.push(OprHandle(fn, False, (), (var,), FnProperty.DELETE_VAR, "delete",
                                skip_on_error=False, cheap=True), ctx, 0)

    def _idle_var(self, var) -> bool:
        """True when nothing pushed on ``var`` is pending or running."""
        return True

    def _delete_now(self, fn, ctx):
        """Run a delete function whose var is idle on this thread, skipping the queues (most
        arrays die long after their last op). A failure is stored like a pushed one's."""
        try:
            fn(self._run_ctx(ctx))
        except BaseException as exc:
            self._store_error(_ErrorBox(exc, "delete"))

    def _store_error(self, box):
        self._errors.append(box)

    @staticmethod
    def _check_pushable(opr):
        if opr.deleted:
            raise EngineError(f"engine.push: operator {opr.name!r} was deleted "
                              "by delete_operator")

    def _push_now(self, opr, ctx):
        """Run ``opr`` at once on this thread (its vars must be free), with the error rules
        of a pushed function: NaiveEngine's push, and any engine's after ``shutdown``."""
        box = (_inherited(opr.const_vars, opr.mutate_vars)
               if opr.skip_on_error and self._errors else None)
        if box is None:
            exc = _run_now(opr, self._run_ctx(ctx))
            if exc is not None:
                box = _ErrorBox(exc, opr.name)
                self._store_error(box)
        if box is not None:
            for v in opr.mutate_vars:
                v.error = box

    def push(self, opr: OprHandle, ctx, priority=0) -> None:
        raise NotImplementedError

    def wait_for_var(self, var: Var, write: bool = False) -> None:
        """Block until every function pushed so far that writes ``var`` (with ``write``,
        also reads it) is done; raise the var's stored error once."""
        self._check_not_in_worker("wait_for_var")
        self._wait_var(var, write)
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
        errors, self._errors = self._errors, []
        first = next((b for b in errors if b.exc is not None), None)
        if first is not None:
            for b in errors:
                if b is not first:
                    b.exc = None
            _raise_box(first)

    def shutdown(self) -> None:
        """Finish outstanding work and stop worker threads."""

    # -- shared helpers ----------------------------------------------------
    def _wait_var(self, var, write):
        raise NotImplementedError

    def _wait_all(self):
        raise NotImplementedError

    @staticmethod
    def _check_not_in_worker(what):
        if _tls.in_worker:
            raise EngineError(f"{what} called from inside an engine function: it would "
                              "deadlock; push a dependent function instead")


def _inherited(const, mutate):
    """The error box a skipped function inherits from the vars it touches, if any. Only
    called while the engine has stored errors: every box is stored before it reaches a var."""
    for v in const:
        b = v.error
        if b is not None and b.exc is not None:
            return b
    for v in mutate:
        b = v.error
        if b is not None and b.exc is not None:
            return b
    return None


def _run_now(opr, rctx):
    """Run ``opr`` on this thread (waiting for an async one's completion); its exception or None."""
    prev = _tls.in_worker
    _tls.in_worker = True
    try:
        if not opr.is_async:
            opr.fn(rctx)
            return None
        done = threading.Event()
        result = []

        def on_complete(exc=None):
            result.append(exc)
            done.set()

        opr.fn(rctx, on_complete)
        done.wait()
        return result[0]
    except BaseException as exc:  # stored and re-raised by the waits
        return exc
    finally:
        _tls.in_worker = prev
