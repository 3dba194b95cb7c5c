"""Registers the ``gpu`` device type and the GPU kernels; imports no cupy (that happens when a
gpu context is first used). The ``device`` KVStore is mxnext's builtin one."""

from opsdk import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device import GpuDevice
    registry.register(GpuDevice())


@hookimpl
def mxnext_register_ops(registry):
    from . import kernels
    kernels.register()
