"""NaiveEngine: runs every function at once on the pushing thread (for debugging)."""

from __future__ import annotations

from ._base import Engine

__all__ = ["NaiveEngine"]


class NaiveEngine(Engine):
    name = "NaiveEngine"

    def push(self, opr, ctx, priority=0):
        self._run_now(opr, ctx)

    def push_kernel(self, fn, ctx, const, mutate, name, cheap, prop=None, priority=0,
                    fresh=False, leaf=True):
        self._run_guarded(fn, self._run_ctx(ctx), const, mutate, name)

    def _wait_var(self, var, write):
        pass

    def _wait_all(self):
        pass
