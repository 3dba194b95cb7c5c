"""The ``device`` KVStore: as ``local``, but keys are stored and reduced on the first device
of the type the values live on (``gpu(0)`` for gpu arrays), as MXNet's reduces on GPU."""

from __future__ import annotations

from mxnext.context import Context
from mxnext.kvstore.kvstore import KVStore

__all__ = ["DeviceKVStore"]


def _first_array(value):
    while isinstance(value, (list, tuple)):
        value = value[0]
    return value


class DeviceKVStore(KVStore):
    def __init__(self, name: str = "device"):
        super().__init__(name)
        self._placed = False

    def init(self, key, value) -> None:
        if not self._placed:
            self._ctx = Context(_first_array(value).context.device_type, 0)
            self._placed = True
        super().init(key, value)
