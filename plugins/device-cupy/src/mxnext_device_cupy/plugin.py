"""Registers the ``gpu`` device type, the ``device`` KVStore and the GPU kernels; imports no
cupy (that happens when a gpu context is first used)."""

from opsdk import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device import GpuDevice
    registry.register(GpuDevice())


@hookimpl
def mxnext_register_kvstores(registry):
    from .kvstore import DeviceKVStore
    registry.register("device", DeviceKVStore)


@hookimpl
def mxnext_register_ops(registry):
    from . import kernels
    kernels.register()
