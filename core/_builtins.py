"""The builtin plugin: the ``cpu`` and ``null`` devices, registered through the same hook as
external device plugins."""

from .hookspecs import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device.cpu import CpuDevice
    from .device.null import NullDevice
    registry.register(CpuDevice())
    registry.register(NullDevice())
