"""Device registry (docs/internals.md "Devices").

A device type is an object with ``type``, ``xp``, ``count()``, ``alloc``,
``free``, ``view``, ``to_numpy`` and ``from_numpy``. ``cpu`` and ``null`` are
builtins registered through the plugin hook like any external device.
"""

from __future__ import annotations

from ..base import MXNetError, did_you_mean

__all__ = ["register", "get", "available"]

_devices: dict = {}


def register(dev) -> None:
    """Register ``dev`` under ``dev.type``; registering the same type again is a no-op."""
    old = _devices.get(dev.type)
    if old is not None:
        if old is dev or type(old) is type(dev):
            return
        raise MXNetError(f"device type {dev.type!r} is already registered by "
                         f"{type(old).__module__}.{type(old).__name__}; cannot register "
                         f"{type(dev).__module__}.{type(dev).__name__}")
    _devices[dev.type] = dev


def get(device_type: str):
    """The device registered as ``device_type``."""
    dev = _devices.get(device_type)
    if dev is None:
        _load_builtins(device_type)
        dev = _devices.get(device_type)
        if dev is None:
            raise MXNetError(f"unknown device type {device_type!r}"
                             f"{did_you_mean(device_type, _devices)}; known device types "
                             f"are: {', '.join(sorted(_devices)) or '(none)'}")
    return dev


def available() -> dict:
    """``{type: device}`` for every registered device type."""
    return dict(_devices)


def _load_builtins(device_type):
    try:
        from .. import plugins
    except ImportError:
        plugins = None
    ensure = getattr(plugins, "ensure_loaded", None)
    if ensure is not None:
        ensure()
    if device_type not in _devices:
        if device_type == "cpu":
            from .cpu import CpuDevice
            register(CpuDevice())
        elif device_type == "null":
            from .null import NullDevice
            register(NullDevice())
