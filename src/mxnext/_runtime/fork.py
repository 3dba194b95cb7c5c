"""A forked child (``os.fork``, ``multiprocessing``'s fork: data-loading workers) starts
with a quiet runtime and can compute at once, as with MXNet.

Before the fork the parent waits for a plugin load in progress on another thread, then for
all engine work, and holds both still over the fork, so the child copies a complete
registry and idle vars (MXNet stops its engine so; a thread computing during a fork can
also leave OpenBLAS's own fork handler waiting for ever). The plugin lock comes first: a
loading plugin may push engine work. The child then makes again what threads that did not
survive held: worker pools here, and what modules register with ``in_child`` (the
storage, resource and registry locks, the custom-op threads).
"""

from __future__ import annotations

import importlib
import os
import sys

from . import engine, firstuse

__all__ = ["in_child"]


def in_child(fn) -> None:
    """Call ``fn()`` in every child forked from now on: it makes again what threads of the
    parent may hold (locks) or ran (threads), which the child does not have."""
    if hasattr(os, "register_at_fork"):
        os.register_at_fork(after_in_child=fn)


# modules the runtime imports at a first use on any thread (numpy loads ``numpy.random`` when
# the first RNG is made): imported before a fork, so no thread is importing them across it
_LAZY_IMPORTS = ("numpy.random",)


def _finish_imports() -> None:
    """Import what the runtime loads lazily, and wait for modules other threads are
    importing: CPython makes only its global import lock again in a child, so a child forked
    mid-import would wait for ever on that module's own lock."""
    for name in _LAZY_IMPORTS:
        importlib.import_module(name)
    for name, module in list(sys.modules.items()):
        if getattr(getattr(module, "__spec__", None), "_initializing", False):
            try:
                importlib.import_module(name)     # returns once the importing thread is done
            except Exception:                     # noqa: BLE001  (that thread reports it)
                pass


def _before():
    firstuse.lock.acquire()
    _finish_imports()
    engine._fork_prepare()


def _after_in_parent():
    engine._fork_parent()
    firstuse.lock.release()


def _after_in_child():
    engine._fork_child()
    firstuse.lock.release()        # the forking thread owns it in the child as well


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before, after_in_parent=_after_in_parent,
                        after_in_child=_after_in_child)
