"""``opsdk.kvstore``: the contract of a KVStore backend.

A backend is a class registered under MXNet's type names from the plugin hook::

    from opsdk import hookimpl
    from opsdk.kvstore import KVStore

    class MyStore(KVStore): ...

    @hookimpl
    def mxnext_register_kvstores(registry):       # an opsdk.KVStoreRegistrar
        registry.register("my_store", MyStore)     # mx.kv.create("my_store") -> MyStore("my_store")

``KVStoreBase`` is the abstract interface, MXNet 1.9's method set (``init``, ``push``,
``pull``, ``pushpull``, ``broadcast``, ``row_sparse_pull``, ``set_optimizer``,
``set_gradient_compression``, ``save_optimizer_states``, ``load_optimizer_states``, ``rank``,
``num_workers``, ``type``, ``is_capable``): ``pushpull`` and ``broadcast`` are built from
``init``, ``push`` and ``pull``; what a subclass leaves out raises ``NotImplementedError``
naming the type and the method.

``KVStore`` (the builtin ``local`` store) implements all of it: keys int or str (never
mixed), values summed across devices, an updater and its states. A backend subclasses it and
overrides the extension points for what it changes:

- ``reduce_devices(key, values, dst, priority)``: push ``dst = sum(values)``, one key's
  values from this worker's devices (a backend may compress on the way);
- ``reduce_for_update(key, values, stored, priority) -> (summed, stored)``: the sum the
  updater applies (by default in ``buffer(key, stored)``);
- ``reduce_workers(what, jobs, priority)``: for each ``(key, this worker's sum, dst)``, push
  ``dst = sum over the workers`` (one worker: a copy where ``dst`` is another array);
- ``run_updater(key, summed, stored)``: apply the updater (``updater(key, summed, stored)``
  updates ``stored`` in place);
- ``rank`` and ``num_workers``, and any of MXNet's methods.

Its building blocks: ``group(what, key, value)`` (MXNet's key/value forms as ``{key:
[NDArray, ...]}``, errors naming the call and key), ``stored(what, key)`` (the stored value),
``buffer(tag, like)`` (a buffer of the store's, kept under ``tag``), ``copy_value(key, src,
dst, priority)`` and ``updater`` (the updater or None). ``DeviceKVStore`` is the builtin
``device`` store (each key summed on one of its values' devices, 2-bit compression).

Data moves only through ``engine_call``: a function reading some NDArrays and writing
others, run by the engine once what it reads is written, before anything pushed later on
what it writes. So a pull after a push waits for it, pushes of independent keys overlap,
and the caller never blocks; an asynchronous call hands its work to another thread (a
communication thread) and reports back with ``done()``. ``wait_all()`` waits for everything
pushed. ``GradientCompression`` is MXNet's 2-bit quantizer, shared by every store that
compresses. The conformance kit is ``opsdk.testing.kvstore``.
"""

from mxnext.kvstore._comm import engine_call
from mxnext.kvstore.base import KVStoreBase, canonical_name
from mxnext.kvstore.compression import GradientCompression
from mxnext.kvstore.device import DeviceKVStore
from mxnext.kvstore.kvstore import KVStore
from mxnext.ndarray import waitall as wait_all

LocalKVStore = KVStore        # the name earlier releases used

__all__ = ["KVStoreBase", "KVStore", "LocalKVStore", "DeviceKVStore", "GradientCompression",
           "engine_call", "canonical_name", "wait_all"]
