"""``mx.storage``: the public face of ``mxnext._runtime.storage``.

Pooled device memory (docs/internals.md "Storage", DESIGN.md §4).
"""

from mxnext._runtime.storage import (
    Handle,
    StorageManager,
    alloc,
    free,
    free_async,
    release_all,
    stats,
    pool,
    POOL_TYPES,
)

__all__ = ["Handle", "StorageManager", "alloc", "free", "free_async", "release_all",
           "stats", "pool", "POOL_TYPES"]
