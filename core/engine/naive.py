"""NaiveEngine: runs every function at once on the pushing thread (for debugging)."""

from __future__ import annotations

import threading

from ..base import EngineError
from ._base import Engine, _tls
from ._types import RunContext, _ErrorBox

__all__ = ["NaiveEngine"]


class NaiveEngine(Engine):
    name = "NaiveEngine"

    def push(self, opr, ctx, priority=0):
        if opr.deleted:
            raise EngineError(f"engine.push: operator {opr.name!r} was deleted "
                              "by delete_operator")
        box = self._inherited_error(opr) if opr.skip_on_error else None
        if box is None:
            exc = self._run(opr, RunContext(ctx))
            if exc is not None:
                box = _ErrorBox(exc, opr.name)
                self._errors.append(box)
        if box is not None:
            for v in opr.mutate_vars:
                v.error = box

    @staticmethod
    def _run(opr, rctx):
        prev = getattr(_tls, "in_worker", False)
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

    def _wait_var(self, var, write):
        pass

    def _wait_all(self):
        pass
