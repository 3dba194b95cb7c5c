"""MXNet 1.x's KVStore API (``mx.kv``, ``mx.kvstore``): ``create(name)`` builds a store of a
registered type; ``local`` is builtin, other types come with plugins through the hook
``mxnext_register_kvstores(registry)``, ``registry`` being this module."""

from .base import KVStoreBase, available, create, register, unregister
from .kvstore import KVStore

__all__ = ["KVStore", "KVStoreBase", "available", "create", "register", "unregister"]
