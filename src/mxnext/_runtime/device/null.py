"""A ``null`` device for tests: numpy buffers, with every alloc and free counted."""

from __future__ import annotations

import threading

import numpy

from .cpu import CpuDevice

__all__ = ["NullDevice"]


class NullDevice(CpuDevice):
    type = "null"
    internal = True           # for tests: never offered to users in errors

    def __init__(self):
        self._lock = threading.Lock()
        self.allocs = 0            # raw allocations made
        self.frees = 0             # raw frees made
        self.live_bytes = 0        # bytes allocated and not yet freed

    def alloc(self, nbytes: int, device_id: int):
        raw = numpy.zeros(nbytes, dtype=numpy.uint8)
        with self._lock:
            self.allocs += 1
            self.live_bytes += nbytes
        return raw

    def free(self, raw, device_id: int) -> None:
        with self._lock:
            self.frees += 1
            self.live_bytes -= raw.nbytes

    def __repr__(self):
        return "<device null (counting, numpy)>"
