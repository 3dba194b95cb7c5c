"""Device contexts: ``mx.cpu(i)``, ``mx.gpu(i)``, ``with mx.Context(...)`` scoping."""

from __future__ import annotations

import threading

from .base import _MXClassPropertyMetaClass, classproperty, with_metaclass

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus", "as_context"]

_DEVTYPE2ID = {"cpu": 1, "gpu": 2, "cpu_pinned": 3, "cpu_shared": 5}
_DEVID2TYPE = {v: k for k, v in _DEVTYPE2ID.items()}


class Context(with_metaclass(_MXClassPropertyMetaClass, object)):
    """A device type and id; usable as a ``with`` block that sets the default context."""

    __slots__ = ("device_type", "device_id", "_hash")
    devtype2str = _DEVID2TYPE
    devstr2type = _DEVTYPE2ID
    _local = threading.local()

    def __init__(self, device_type, device_id: int = 0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        elif isinstance(device_type, int):
            device_type = _DEVID2TYPE[device_type]
        self.device_type = str(device_type)
        self.device_id = int(device_id)
        self._hash = hash((self.device_type, self.device_id))   # contexts key hot dicts

    @property
    def device_typeid(self) -> int:
        return _DEVTYPE2ID.get(self.device_type, 0)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or (isinstance(other, Context)
                                 and self.device_type == other.device_type
                                 and self.device_id == other.device_id)

    def __str__(self):
        return f"{self.device_type}({self.device_id})"

    __repr__ = __str__

    def __enter__(self):
        # the previous contexts stack per thread, not on the object: arrays share their
        # Context, so one object is entered again inside itself (nested Gluon blocks)
        local = Context._local
        local.__dict__.setdefault("outer", []).append(getattr(local, "value", None))
        local.value = self
        return self

    def __exit__(self, *exc):
        Context._local.value = Context._local.outer.pop()

    @classproperty
    def default_ctx(cls):
        """This thread's current context (MXNet's older name; assigning it sets the
        context of this thread only, as in MXNet)."""
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value):
        Context._local.value = value

    def empty_cache(self):
        """Return this device's pooled memory to the device (MXNet's ``Context.empty_cache``)."""
        from . import storage
        storage.release_all(self)


_CPU0 = Context("cpu", 0)


def cpu(device_id: int = 0) -> Context:
    return Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return Context("cpu_pinned", device_id)


def as_context(c):
    """A Context from a Context, ``"cpu(1)"`` or ``"cpu"``; None for None or ``""``."""
    if c is None or c == "":
        return None
    if isinstance(c, Context):
        return c
    text = str(c).strip()
    if "(" in text:
        dev, _, rest = text.partition("(")
        return Context(dev, int(rest.rstrip(")") or 0))
    return Context(text, 0)


def current_context() -> Context:
    """The context of the innermost ``with Context`` block on this thread, else ``cpu(0)``."""
    return getattr(Context._local, "value", None) or _CPU0


def num_gpus() -> int:
    from . import device
    try:
        return device.get("gpu").count()
    except Exception:
        return 0
