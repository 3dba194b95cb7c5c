"""Registers the ``testdev`` device type."""

from opsdk import hookimpl


@hookimpl
def mxnext_register_devices(registry):
    from .device import TestDevice
    registry.register(TestDevice())
