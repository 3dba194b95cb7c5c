"""The runtime's part of the builtin plugin: the ``cpu``, ``cpu_pinned``, ``cpu_shared`` and
``null`` devices, registered through the same hook as external device plugins. The
frontends add theirs (``plugins.add_builtin``)."""

from .hookspecs import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device.cpu import CpuDevice, CpuPinnedDevice, CpuSharedDevice
    from .device.null import NullDevice
    for dev in (CpuDevice(), CpuPinnedDevice(), CpuSharedDevice(), NullDevice()):
        registry.register(dev)
