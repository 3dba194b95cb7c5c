"""The builtin plugin: the ``cpu``, ``cpu_pinned``, ``cpu_shared`` and ``null`` devices, the
``local`` KVStore and the ``Custom`` op (Python operators, ``mx.operator``), registered
through the same hooks as external plugins."""

from .hookspecs import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device.cpu import CpuDevice, CpuPinnedDevice, CpuSharedDevice
    from .device.null import NullDevice
    for dev in (CpuDevice(), CpuPinnedDevice(), CpuSharedDevice(), NullDevice()):
        registry.register(dev)


@hookimpl
def mxnext_register_kvstores(registry):
    from .kvstore.kvstore import LOCAL_TYPES, KVStore
    for name in LOCAL_TYPES:
        registry.register(name, KVStore)


@hookimpl
def mxnext_register_ops(registry):
    from . import _custom
    _custom.define(registry)
