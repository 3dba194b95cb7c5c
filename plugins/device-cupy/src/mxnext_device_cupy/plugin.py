"""Registers the ``gpu`` device type and the GPU kernels; imports no cupy (that happens when a
gpu context is first used). The kernels module is deferred like an op plugin's modules: it
is imported when an op it extends is first used. The ``device`` KVStore is mxnext's builtin
one."""

from opsdk import hookimpl, register_op_modules


@hookimpl
def mxnext_register_devices(registry):
    from .device import GpuDevice
    registry.register(GpuDevice())


@hookimpl
def mxnext_register_ops(registry):
    register_op_modules([f"{__package__}.kernels"])
