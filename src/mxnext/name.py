"""MXNet's ``mx.name``: automatic names for the symbols that ops create.

An op called without ``name=`` is named by the current ``NameManager`` from a hint, the
lowercased name of the function called plus a counter per hint (``fullyconnected0``,
``fullyconnected1``, ``_plus0``). ``with NameManager():`` starts fresh counters;
``with Prefix("net_"):`` puts a prefix before every name, given or automatic. The current
manager is per thread (``NameManager._current.value``, as MXNet keeps it).
"""

from __future__ import annotations

import threading
import warnings

from ._runtime.base import _MXClassPropertyMetaClass, classproperty, with_metaclass

__all__ = ["NameManager", "Prefix", "current"]


class NameManager(with_metaclass(_MXClassPropertyMetaClass, object)):
    """Names symbols: a given name as is, else ``hint`` followed by a counter per hint.
    Subclass it and override ``get`` to name differently."""

    _current = threading.local()

    def __init__(self):
        self._counter = {}
        self._old_manager = None

    def get(self, name, hint):
        """The name for a new symbol: ``name`` when given, else ``hint`` + its next count."""
        if name:
            return name
        count = self._counter.get(hint, 0)
        self._counter[hint] = count + 1
        return f"{hint}{count}"

    def __enter__(self):
        self._old_manager = current()
        NameManager._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        NameManager._current.value = self._old_manager

    @classproperty
    def current(cls):
        warnings.warn("NameManager.current is deprecated; use `with NameManager():` instead",
                      DeprecationWarning, stacklevel=2)
        return current()

    @current.setter
    def current(cls, value):
        cls._current.value = value


class Prefix(NameManager):
    """A name manager that puts ``prefix`` before every name, given or automatic:
    ``with Prefix("mynet_"): FullyConnected(data, num_hidden=10, name="fc1")`` is named
    ``mynet_fc1`` and its weight ``mynet_fc1_weight``."""

    def __init__(self, prefix):
        super().__init__()
        self._prefix = prefix

    def get(self, name, hint):
        return self._prefix + super().get(name, hint)


def current() -> NameManager:
    """This thread's current name manager (a fresh one the first time a thread asks)."""
    manager = getattr(NameManager._current, "value", None)
    if manager is None:
        manager = NameManager._current.value = NameManager()
    return manager


current()      # the importing thread's manager exists at once (code reads _current.value)
