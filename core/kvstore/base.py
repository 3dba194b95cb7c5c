"""The KVStore interface, the table of backends and ``create`` (``mx.kv.create``).

Backends arrive through the plugin hook ``mxnext_register_kvstores(registry)``, where
``registry`` is the ``mxnext.kvstore`` package: ``registry.register(name, factory)``. The
builtin ``local`` store registers that way too (``mxnext._builtins``). MXNet's own way,
the ``KVStoreBase.register`` class decorator, fills the same table.
"""

from __future__ import annotations

import warnings

from .._firstuse import fill as _fill
from ..base import MXNetError

__all__ = ["KVStoreBase", "create", "register", "unregister", "available"]

_backends: dict = {}


def register(name: str, factory) -> None:
    """Make ``create(name)`` return ``factory(name)``; ``name`` is matched lower-case.

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


def unregister(name: str) -> None:
    """Forget KVStore type ``name`` (the plugin loader withdraws a failed plugin's types)."""
    _backends.pop(name.lower(), None)


def available() -> dict:
    """``{name: factory}`` for every registered KVStore type (plugins load first)."""
    _fill()
    return dict(_backends)


def create(name: str = "local") -> "KVStoreBase":
    """A new KVStore of type ``name`` (``local``; others come with plugins)."""
    if not isinstance(name, str):
        raise TypeError(f"kvstore.create: name must be a str, got {type(name).__name__}")
    name = name.lower()
    factory = _backends.get(name)
    if factory is None:
        _fill()
        factory = _backends.get(name)
        if factory is None:
            from .._mxnet_names import suggest    # the error path only
            raise MXNetError(f"unknown KVStore type {name!r}"
                             f"{suggest('kvstore', name, _backends)}; known KVStore types "
                             f"are: {', '.join(sorted(_backends)) or '(none)'}")
    return factory(name)


def _describe(factory) -> str:
    target = getattr(factory, "klass", factory)
    return f"{getattr(target, '__module__', '?')}.{getattr(target, '__qualname__', target)}"


class _NoArgFactory:
    """What ``KVStoreBase.register`` stores: MXNet builds such classes without arguments."""

    def __init__(self, klass):
        self.klass = klass

    def __call__(self, name):
        return self.klass()


class KVStoreBase:
    """What every KVStore offers (MXNet 1.x's ``mx.kvstore.KVStoreBase``).

    Subclasses implement the data calls; ``type``, ``rank`` and ``num_workers`` describe
    the store.
    """

    OPTIMIZER = "optimizer"

    def broadcast(self, key, value, out, priority=0):
        """Store ``value`` under ``key`` (rank 0's) and copy it into ``out``."""
        raise NotImplementedError

    def pushpull(self, key, value, out=None, priority=0):
        """Push ``value`` (summed), then pull the result into ``out`` (or ``value``)."""
        raise NotImplementedError

    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the stored values at each push."""
        raise NotImplementedError

    def is_capable(self, capability):
        """Whether this store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise NotImplementedError

    def save_optimizer_states(self, fname, dump_optimizer=False):
        raise NotImplementedError

    def load_optimizer_states(self, fname):
        raise NotImplementedError

    @property
    def type(self):
        raise NotImplementedError

    @property
    def rank(self):
        raise NotImplementedError

    @property
    def num_workers(self):
        raise NotImplementedError

    @staticmethod
    def register(klass):
        """Class decorator: ``create(klass.__name__.lower())`` builds ``klass()``; a name
        taken before is overridden with a warning, as in MXNet."""
        if not isinstance(klass, type):
            raise TypeError(f"KVStoreBase.register: expected a class, got {klass!r}")
        name = klass.__name__.lower()
        old = _backends.pop(name, None)
        if old is not None:
            warnings.warn(f"KVStore type {name!r} ({_describe(old)}) is overridden by "
                          f"{_describe(klass)}", stacklevel=2)
        register(name, _NoArgFactory(klass))
        return klass
