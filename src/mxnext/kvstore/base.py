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

__all__ = ["KVStoreBase", "create", "canonical_name", "register", "unregister", "available"]

def create(name: str = "local") -> "KVStoreBase":
    """A new KVStore of type ``name`` (``local``, ``device``; others come with plugins).

    Names resolve as MXNet's do: a registered name is used as is; otherwise one containing
    ``dist`` is ``dist_sync`` or ``dist_async`` (with ``_async``), plus ``_device`` when it
    contains ``device`` (``dist_device_sync`` is ``dist_sync_device``); else one containing
    ``nccl`` is ``nccl``, one containing ``device`` is ``device``, one starting with
    ``local`` is ``local``. The store's ``type`` is the name given (lower case). Other names
    are errors (MXNet makes a local store of them).
    """
    if not isinstance(name, str):
        raise TypeError(f"kvstore.create: name must be a str, got {type(name).__name__}")
    name = name.lower()
    factory = _backends.get(name) or _backends.get(canonical_name(name))
    if factory is None:
        _fill()
        factory = _backends.get(name) or _backends.get(canonical_name(name))
        if factory is None:
            from .._runtime.mxnet_names import suggest    # the error path only
            raise MXNetError(f"unknown KVStore type {name!r}"
                             f"{suggest('kvstore', canonical_name(name), _backends)}; known "
                             f"KVStore types are: {', '.join(sorted(_backends)) or '(none)'}")
    return factory(name)


def canonical_name(name: str) -> str:
    """The KVStore type MXNet's ``KVStore::Create`` makes of ``name`` (lower case)."""
    if "dist" in name:
        return "dist_" + ("async" if "_async" in name else "sync") + (
            "_device" if "device" in name else "")
    if "nccl" in name:
        return "nccl"
    if "device" in name:
        return "device"
    return "local" if name.startswith("local") else name


class _NoArgFactory:
    """What ``KVStoreBase.register`` stores: MXNet builds such classes without arguments."""

    def __init__(self, klass):
        self.klass = klass

    def __call__(self, name):
        return self.klass()


class KVStoreBase:
    """What every KVStore offers: MXNet 1.9's KVStore methods.

    A subclass implements the data calls (``init``, ``push``, ``pull``), the updater and
    optimizer calls it supports, and the ``type``, ``rank`` and ``num_workers`` properties;
    ``pushpull`` and ``broadcast`` are built here from ``init``, ``push`` and ``pull``.
    Whatever a subclass leaves out raises ``NotImplementedError`` naming its type and the
    method.
    """

    OPTIMIZER = "optimizer"

    # -- data ---------------------------------------------------------------------------
    def init(self, key, value):
        """Store ``value`` under ``key`` (or each value under each key of a list)."""
        raise _missing(self, "init")

    def push(self, key, value, priority=0):
        """Sum the values pushed for each key into the stored one (or hand the sum to the
        updater)."""
        raise _missing(self, "push")

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        """Copy the stored value of each key into ``out``."""
        raise _missing(self, "pull")

    def pushpull(self, key, value, out=None, priority=0):
        """``push(key, value)``, then ``pull`` the result into ``out`` (or ``value``)."""
        self.push(key, value, priority)
        self.pull(key, value if out is None else out, priority)

    def broadcast(self, key, value, out, priority=0):
        """Store ``value`` under ``key`` (``init``), then copy it into ``out`` (``pull``)."""
        self.init(key, value)
        self.pull(key, out, priority)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Pull only the rows ``row_ids`` of each key's row_sparse value into ``out``."""
        raise _missing(self, "row_sparse_pull")

    # -- updater and optimizer ------------------------------------------------------------
    def set_optimizer(self, optimizer):
        """Run ``optimizer`` on the stored values at each push."""
        raise _missing(self, "set_optimizer")

    def _set_updater(self, updater):
        """Call ``updater(key, summed_value, stored_value)`` at each push."""
        raise _missing(self, "_set_updater")

    def set_gradient_compression(self, compression_params):
        """Compress pushed gradients as ``compression_params`` say (``{'type': '2bit'}``)."""
        raise _missing(self, "set_gradient_compression")

    def save_optimizer_states(self, fname, dump_optimizer=False):
        """Write the updater's states (and with ``dump_optimizer`` the optimizer) to
        ``fname``."""
        raise _missing(self, "save_optimizer_states")

    def load_optimizer_states(self, fname):
        """Give the updater the states saved in ``fname``."""
        raise _missing(self, "load_optimizer_states")

    # -- workers ---------------------------------------------------------------------------
    def _barrier(self):
        """Wait until every worker has reached this call."""
        raise _missing(self, "_barrier")

    def _send_command_to_servers(self, head, body):
        """Send a command (MXNet's ``kController``... codes) to every server."""
        raise _missing(self, "_send_command_to_servers")

    def is_capable(self, capability):
        """Whether this store supports ``capability`` (``KVStoreBase.OPTIMIZER``)."""
        raise _missing(self, "is_capable")

    @property
    def type(self):
        """The store's type name (``'local'``)."""
        raise _missing(self, "type")

    @property
    def rank(self):
        """This worker's rank, in ``range(num_workers)``."""
        raise _missing(self, "rank")

    @property
    def num_workers(self):
        """How many workers share the store."""
        raise _missing(self, "num_workers")

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


def _missing(store, method: str) -> NotImplementedError:
    """The error for a method ``store``'s class leaves to KVStoreBase."""
    kind = type(store).__qualname__
    if method != "type":
        try:
            kind = f"{store.type!r} ({kind})"
        except NotImplementedError:
            pass
    return NotImplementedError(f"KVStore type {kind} does not implement {method}(); "
                               f"a KVStoreBase subclass must override it")
