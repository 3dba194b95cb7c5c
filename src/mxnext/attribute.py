"""MXNet's ``mx.attribute``: ``AttrScope``, attributes given to every symbol made inside it.

``with mx.AttrScope(ctx_group="dev1"):`` adds ``ctx_group`` to the attributes of each
variable and op symbol created in the block (inner scopes add to and override outer ones;
an ``attr=`` given at creation overrides both). Values must be strings. The current scope
is per thread (``AttrScope._current.value``, as MXNet keeps it).
"""

from __future__ import annotations

import threading
import warnings
from collections import defaultdict

from ._runtime.base import _MXClassPropertyMetaClass, classproperty, with_metaclass

__all__ = ["AttrScope", "current"]


class AttrScope(with_metaclass(_MXClassPropertyMetaClass, object)):
    """Attributes (str -> str) for every symbol created while this scope is current."""

    _current = threading.local()
    _subgraph_names: defaultdict = defaultdict(int)   # control-flow graph name -> uses

    def __init__(self, **kwargs):
        self._old_scope = None
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"AttrScope: attribute {key!r} must be a string, got "
                                 f"{type(value).__name__} {value!r}")
        self._attr = kwargs

    def get(self, attr):
        """The scope's attributes updated with ``attr`` (those given at creation)."""
        if self._attr:
            merged = dict(self._attr)
            if attr:
                merged.update(attr)
            return merged
        return dict(attr) if attr else {}

    def __enter__(self):
        self._old_scope = current()
        self._attr = {**self._old_scope._attr, **self._attr}
        AttrScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        AttrScope._current.value = self._old_scope

    @classproperty
    def current(cls):
        warnings.warn("AttrScope.current is deprecated; use `with AttrScope(...):` instead",
                      DeprecationWarning, stacklevel=2)
        return current()

    @current.setter
    def current(cls, value):
        warnings.warn("AttrScope.current is deprecated; use `with AttrScope(...):` instead",
                      DeprecationWarning, stacklevel=2)
        cls._current.value = value


def current() -> AttrScope:
    """This thread's current scope (an empty one the first time a thread asks)."""
    scope = getattr(AttrScope._current, "value", None)
    if scope is None:
        scope = AttrScope._current.value = AttrScope()
    return scope


current()      # the importing thread's scope exists at once (code reads _current.value)
