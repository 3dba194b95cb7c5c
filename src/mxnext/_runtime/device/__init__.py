"""Device registry (docs/internals.md "Devices").

A device type implements the contract ``opsdk.device.Device`` documents. ``cpu`` and
``null`` are builtins registered through the plugin hook like any external device; a
device with ``internal = True`` (``null``, for tests) is never offered in errors.
"""

from __future__ import annotations

from ..engine._types import RUN_CONTEXTS as _RUN_CONTEXTS
from ..firstuse import fill as _fill
from ..base import MXNetError

__all__ = ["register", "get", "available", "copy_across", "inline_policy"]

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
    run_context = getattr(dev, "run_context", None)   # devices with streams
    if run_context is not None:
        _RUN_CONTEXTS[dev.type] = run_context


def get(device_type: str):
    """The device registered as ``device_type`` (plugins load at the first lookup)."""
    dev = _devices.get(device_type)
    if dev is None:
        _fill()
        dev = _devices.get(device_type)
        if dev is None:
            raise MXNetError(_unknown(device_type))
    return dev


def available() -> dict:
    """``{type: device}`` for every registered device type."""
    _fill()
    return dict(_devices)


def copy_across(dst_dev, dst, device_id, src_dev, src) -> None:
    """``dst[...] = src`` from an array of device ``src_dev`` to one of ``dst_dev`` (id
    ``device_id``), another device type: through host memory (``to_host``, ``from_host``),
    the only copies that leave a device."""
    dst_dev.copy(dst, dst_dev.from_host(src_dev.to_host(src), device_id))


def inline_policy(device_type: str):
    """The inline policy of the device registered as ``device_type``, or None while there is
    none. The engine asks; it loads no plugin (work on a device's arrays comes after a lookup
    of the device, which does)."""
    dev = _devices.get(device_type)
    return None if dev is None else dev.inline_policy


def _unknown(device_type) -> str:
    from ..mxnet_names import suggest    # the error path only
    users = [t for t, d in _devices.items() if not getattr(d, "internal", False)]
    return (f"unknown device type {device_type!r}{suggest('device', device_type, users)}; "
            f"known device types are: {', '.join(sorted(users)) or '(none)'}")
