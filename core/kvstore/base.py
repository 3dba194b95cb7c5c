"""The KVStore interface and ``create`` (``mx.kv.create``) over the runtime's table of
backends (``mxnext._runtime.kvstores``, filled through the plugin hook
``mxnext_register_kvstores``; the builtin ``local`` store registers that way too).
MXNet's own way, the ``KVStoreBase.register`` class decorator, fills the same table.
"""

from __future__ import annotations

import warnings

from .._runtime.base import MXNetError
from .._runtime.firstuse import fill as _fill
from .._runtime.kvstores import _backends, _describe, available, register, unregister

__all__ = ["KVStoreBase", "create", "register", "unregister", "available"]

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
            from .._runtime.mxnet_names import suggest    # the error path only
            raise MXNetError(f"unknown KVStore type {name!r}"
                             f"{suggest('kvstore', name, _backends)}; known KVStore types "
                             f"are: {', '.join(sorted(_backends)) or '(none)'}")
    return factory(name)


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
