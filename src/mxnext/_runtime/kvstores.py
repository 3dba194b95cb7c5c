"""The table of KVStore backends, filled through the registrar the hook
``mxnext_register_kvstores(registry)`` receives (plugins and the builtin ``local`` store
alike); ``mx.kv.create`` reads it."""

from __future__ import annotations

from .base import MXNetError
from .firstuse import fill as _fill

__all__ = ["register", "unregister", "available"]

_backends: dict = {}


def register(name: str, factory) -> bool:
    """Make ``create(name)`` return ``factory(name)``; ``name`` is matched lower-case.
    Whether the name is new.

    Registering the same factory again is a no-op; another one under a taken name is an
    error naming both.
    """
    if not isinstance(name, str) or not name:
        raise MXNetError(f"kvstore.register: name must be a non-empty str, got {name!r}")
    name = name.lower()
    old = _backends.get(name)
    if old is not None and old is not factory:
        raise MXNetError(f"KVStore type {name!r} is already registered by {_describe(old)}; "
                         f"cannot register {_describe(factory)}")
    _backends[name] = factory
    return old is None


def unregister(name: str) -> None:
    """Forget KVStore type ``name`` (the plugin loader withdraws a failed plugin's types)."""
    _backends.pop(name.lower(), None)


def available() -> dict:
    """``{name: factory}`` for every registered KVStore type (plugins load first)."""
    _fill()
    return dict(_backends)


def _describe(factory) -> str:
    target = getattr(factory, "klass", factory)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', target)}"
