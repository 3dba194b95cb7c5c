"""NaiveEngine: runs every function at once on the pushing thread (for debugging)."""

from __future__ import annotations

from ._base import Engine

__all__ = ["NaiveEngine"]


class NaiveEngine(Engine):
    name = "NaiveEngine"

    def push(self, opr, ctx, priority=0):
        self._check_pushable(opr)
        self._push_now(opr, ctx)

    def _run_here(self, fn, ctx, const, mutate, name, fresh=False, leaf=False):
        box = self._call_here(fn, ctx, const, mutate, name)
        if box is not None:
            for v in mutate:
                v.error = box
        return True

    def _wait_var(self, var, write):
        pass

    def _wait_all(self):
        pass
