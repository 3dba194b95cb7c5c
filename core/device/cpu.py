"""The numpy CPU device: raw buffers are numpy uint8 arrays."""

from __future__ import annotations

import numpy

__all__ = ["CpuDevice"]


class CpuDevice:
    type = "cpu"
    xp = numpy

    def count(self) -> int:
        return 1 << 30  # cpu(i) ids are logical: any non-negative id is valid

    def alloc(self, nbytes: int, device_id: int):
        return numpy.empty(nbytes, dtype=numpy.uint8)

    def free(self, raw, device_id: int) -> None:
        pass  # numpy memory is returned by reference counting

    def view(self, raw, dtype, shape, offset: int = 0):
        return numpy.ndarray(shape, dtype, raw, offset)

    def to_numpy(self, arr):
        return arr

    def from_numpy(self, arr, device_id: int):
        return numpy.array(arr, copy=True)

    def __repr__(self):
        return "<device cpu (numpy)>"
