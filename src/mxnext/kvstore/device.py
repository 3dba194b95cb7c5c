"""``DeviceKVStore``: MXNet 1.x's ``device`` store (types ``device``,
``local_allreduce_device``, ``local_update_device``), builtin, for any device type.

As the local store, but each key is summed on one of the devices its values come from (the
one with the fewest bytes of keys so far), so the sums of different keys run on different
devices' engine threads, and from its first push on the key's value lives there, as in
MXNet (where the sum becomes the value, or the updater runs on that device). It takes
MXNet's 2-bit gradient compression: every pushed value is quantized on its way to the
summing device, with a residual per key and per position in the push.
"""

from __future__ import annotations

import numpy as np

from .. import ndarray as nd
from .._runtime.base import MXNetError
from ._comm import assign_sum, assign_sum_compressed
from ._rows import any_sparse
from .compression import GradientCompression
from .kvstore import KVStore

__all__ = ["DeviceKVStore", "DEVICE_TYPES"]

DEVICE_TYPES = ("device", "local_allreduce_device", "local_update_device")


class DeviceKVStore(KVStore):
    """A KVStore summing each key on a device of its values (``mx.kv.create('device')``)."""

    def __init__(self, name: str = "device"):
        super().__init__(name)
        self._home: dict = {}        # key -> the Context it is summed on
        self._load: dict = {}        # Context -> bytes of the keys summed there
        self._gc = None
        self._residuals: dict = {}   # (key, position) -> NDArray on that value's context

    def set_gradient_compression(self, compression_params) -> None:
        """Quantize every pushed value to 2 bits (``{'type': '2bit', 'threshold': t}``)."""
        self._gc = GradientCompression(compression_params)
        self._residuals.clear()

    def reduce_devices(self, key, vals, dst, priority) -> None:
        if self._gc is None:
            assign_sum(vals, dst, priority, "KVStore.push", key)
            return
        residuals = []
        for i, v in enumerate(vals):
            if v.context.device_type != "cpu":
                raise MXNetError(f"KVStore.push: key {key!r}: 2-bit compression runs on cpu "
                                 f"arrays here, got one on {v.context}")
            r = self._residuals.get((key, i))
            if r is None or r.context != v.context or r.shape != v.shape:
                r = self._residuals[(key, i)] = nd.zeros(v.shape, v.context, "float32")
            residuals.append(r)
        assign_sum_compressed(vals, residuals, dst, self._gc, priority, "KVStore.push", key)

    def push(self, key, value, priority=0) -> None:
        """As ``local``'s, but each key is summed on, and then kept on, its device (sparse
        values: as ``local``'s)."""
        if self._updater is not None:
            super().push(key, value, priority)
            return
        for k, vals in self.group("push", key, value).items():
            if self.stored("push", k).stype != "default" or any_sparse(vals):
                super().push(k, vals, priority)
                continue
            stored = self._placed(k, vals, self.stored("push", k), priority, keep=False)
            self.reduce_devices(k, vals, stored, priority)

    def reduce_for_update(self, key, vals, stored, priority):
        stored = self._placed(key, vals, stored, priority, keep=True)
        merged = self.buffer(key, stored)
        self.reduce_devices(key, vals, merged, priority)
        return merged, stored

    def _placed(self, key, vals, stored, priority, keep):
        """The stored value of ``key`` on its device (chosen at its first push), moved there
        (its value copied along when ``keep``)."""
        home = self._home.get(key)
        if home is None:
            home = min(dict.fromkeys(v.context for v in vals),
                       key=lambda c: self._load.get(c, 0))
            self._home[key] = home
            self._load[home] = self._load.get(home, 0) + stored.size * np.dtype(stored.dtype).itemsize
        if stored.context != home:
            moved = nd.empty(stored.shape, home, stored.dtype)
            if keep:
                assign_sum([stored], moved, priority, "KVStore.push", key)
            self._store[key] = stored = moved
        return stored
