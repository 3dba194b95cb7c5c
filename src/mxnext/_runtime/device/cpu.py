"""The numpy CPU device (the contract of ``opsdk.device``): raw buffers are numpy uint8
arrays; work runs on the engine's threads with no stream."""

from __future__ import annotations

import numpy

from ..inline import TIMED_INLINE

__all__ = ["HostDevice", "CpuDevice", "CpuPinnedDevice", "CpuSharedDevice"]

ALIGN = 64      # bytes: where a host buffer starts


class HostDevice:
    """A device on host memory (``opsdk.device.HostDevice``): a subclass names its ``type``
    and changes what differs. Ops run their ``FCompute<cpu>`` bodies on numpy arrays."""

    type: str
    xp = numpy
    kernels = ("cpu",)
    inline_policy = TIMED_INLINE    # fast kernels run on the pushing thread (timed first)

    def count(self) -> int:
        return 1 << 30  # cpu(i) ids are logical: any non-negative id is valid

    def alloc(self, nbytes: int, device_id: int):
        """A buffer starting on a 64-byte boundary, as MXNet's oneDNN builds align host
        memory (a cache line and an AVX-512 vector: numpy's large buffers start 16 bytes
        past a page, so every vector load of a kernel would straddle two lines)."""
        raw = numpy.empty(nbytes + ALIGN, dtype=numpy.uint8)
        start = -raw.ctypes.data % ALIGN
        return raw[start:start + nbytes]

    def free(self, raw, device_id: int) -> None:
        pass  # numpy memory is returned by reference counting

    def view(self, raw, dtype, shape, offset: int = 0):
        return numpy.ndarray(shape, dtype, raw, offset)

    def to_host(self, arr):
        return arr

    def from_host(self, arr, device_id: int):
        return numpy.array(arr, copy=True)


    def copy(self, dst, src) -> None:
        dst[...] = src

    def fill(self, dst, value) -> None:
        dst[...] = value

    def stream(self, device_id: int):
        return None               # host work completes when its function returns

    def synchronize(self, device_id: int) -> None:
        pass

    def __repr__(self):
        return f"<device {self.type} (numpy)>"


class CpuDevice(HostDevice):
    type = "cpu"


class CpuPinnedDevice(CpuDevice):
    """MXNet's ``cpu_pinned``: host memory for fast GPU transfers. Without a GPU plugin it is
    ordinary host memory, as in a CPU-only MXNet."""

    type = "cpu_pinned"
    kernels = ("cpu",)        # ops run their FCompute<cpu>

    def __repr__(self):
        return "<device cpu_pinned (numpy; ordinary host memory)>"


class CpuSharedDevice(CpuDevice):
    """MXNet's ``cpu_shared``: host memory MXNet can hand to other processes (its data
    loaders). Arrays live here as on ``cpu``; handing them to another process is not
    supported (yet)."""

    type = "cpu_shared"
    kernels = ("cpu",)

    def __repr__(self):
        return "<device cpu_shared (numpy; not shared across processes)>"
