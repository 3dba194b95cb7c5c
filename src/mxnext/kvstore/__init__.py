"""MXNet 1.x's KVStore API (``mx.kv``, ``mx.kvstore``): ``create(name)`` builds a store of a
registered type; ``local`` and ``device`` are builtin, other types come with plugins through
the hook ``mxnext_register_kvstores(registry)``, ``registry`` an ``opsdk.KVStoreRegistrar``."""

from .base import KVStoreBase, available, canonical_name, create, register, unregister
from .device import DeviceKVStore
from .kvstore import KVStore

__all__ = ["KVStore", "DeviceKVStore", "KVStoreBase", "available", "canonical_name", "create",
           "register", "unregister"]
