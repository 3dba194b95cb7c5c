"""``opsdk.kvstore``: the face of mxnext for KVStore backend authors.

A backend is a class registered under MXNet's type names from the plugin hook::

    from opsdk import hookimpl
    from opsdk.kvstore import KVStoreBase

    class MyStore(KVStoreBase): ...

    @hookimpl
    def mxnext_register_kvstores(registry):
        registry.register("my_store", MyStore)     # mx.kv.create("my_store") -> MyStore("my_store")

Three starting points, each keeping MXNet 1.9's whole method set (``init``, ``push``,
``pull``, ``pushpull``, ``broadcast``, ``row_sparse_pull``, ``set_optimizer``,
``_set_updater``, ``set_gradient_compression``, ``save_optimizer_states``,
``load_optimizer_states``, ``_barrier``, ``rank``, ``num_workers``, ``type``,
``is_capable``):

- ``KVStoreBase``: only the interface; ``pushpull`` and ``broadcast`` are built from
  ``init``, ``push`` and ``pull``; whatever is left out raises ``NotImplementedError``
  naming the type and the method.
- ``LocalKVStore``: the builtin ``local`` store (keys int or str, never mixed; values summed
  across devices; updater and optimizer states). A subclass changes how a push sums its
  values by overriding ``_merge(key, vals, dst, priority)`` (push ``dst = sum(vals)``) and
  ``_merged(key, vals, stored, priority) -> (summed, stored)`` (the sum handed to the
  updater); ``_group(what, key, value)`` and ``_stored(what, key)`` check MXNet's key/value
  forms and name the call and key in errors; ``_updater`` is the updater (or None) and
  ``_merge_bufs`` a dict for the subclass's buffers.
- ``DeviceKVStore``: the builtin ``device`` store (each key summed on one of its values'
  devices, 2-bit compression).

Data moves only through ``engine_call``: a function reading some NDArrays and writing
others, run by the engine once what it reads is written, before anything pushed later on
what it writes. So a pull after a push waits for it, pushes of independent keys overlap,
and the caller never blocks; an asynchronous call hands its work to another thread (a
communication thread) and reports back with ``done()``. ``GradientCompression`` is MXNet's
2-bit quantizer, shared by every store that compresses.
"""

from mxnext.kvstore._comm import engine_call
from mxnext.kvstore.base import KVStoreBase, canonical_name
from mxnext.kvstore.compression import GradientCompression
from mxnext.kvstore.device import DeviceKVStore
from mxnext.kvstore.kvstore import KVStore as LocalKVStore

__all__ = ["KVStoreBase", "LocalKVStore", "DeviceKVStore", "GradientCompression",
           "engine_call", "canonical_name"]
