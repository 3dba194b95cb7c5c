"""``TestStore``: MXNet 1.x's ``teststore`` KVStore type, builtin, for testing code that
takes any KVStore (Gluon's Trainer): it sums and broadcasts, but cannot run an optimizer,
so a Trainer updates the parameters itself."""

from __future__ import annotations

from ..ndarray import NDArray
from .base import KVStoreBase
from .kvstore import KVStore

__all__ = ["TestStore"]


class TestStore(KVStore):
    """One process's store whose ``broadcast`` copies ``value`` into ``out`` and whose
    ``pushpull`` writes the sum of the values into ``out`` (or back into the values),
    keeping nothing."""

    __test__ = False      # not a pytest test class

    def __init__(self, name: str = "teststore"):
        super().__init__(name)

    def broadcast(self, key, value, out, priority=0) -> None:
        for o in out if isinstance(out, (list, tuple)) else [out]:
            o[:] = value

    def pushpull(self, key, value, out=None, priority=0) -> None:
        if isinstance(value, NDArray):
            total, value = value, [value]
        else:
            total = value[0].copy()
            for v in value[1:]:
                total += v.as_in_context(total.context)
        targets = value if out is None else out
        for o in targets if isinstance(targets, (list, tuple)) else [targets]:
            o[:] = total

    @staticmethod
    def is_capable(capability) -> bool:
        """Whether the store type has ``capability`` (a static method, as in MXNet: asked of
        the class as well as of a store)."""
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return False
        raise ValueError(f"TestStore.is_capable: unknown capability {capability!r}; known: "
                         f"{KVStoreBase.OPTIMIZER!r}")

    def set_optimizer(self, optimizer) -> None:
        raise _no_optimizer("set_optimizer")

    def save_optimizer_states(self, fname, dump_optimizer=False) -> None:
        raise _no_optimizer("save_optimizer_states")

    def load_optimizer_states(self, fname) -> None:
        raise _no_optimizer("load_optimizer_states")


def _no_optimizer(method):
    return NotImplementedError(f"KVStore type 'teststore' cannot run an optimizer "
                               f"(is_capable('optimizer') is False): {method} is not supported")
