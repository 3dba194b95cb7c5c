"""The ``gpu`` device (the contract of ``opsdk.device``) on cupy.

Memory comes straight from ``cudaMalloc`` (``cupy.cuda.Memory``, not cupy's own pool); the
runtime pools it per device with MXNet's GPU pool semantics: ``Naive`` (exact sizes, the
default), ``Round`` or ``Unpooled`` from ``MXNEXT_GPU_MEM_POOL_TYPE`` (or MXNet's
``MXNET_GPU_MEM_POOL_TYPE``). ``MXNEXT_GPU_MEM_POOL_RESERVE`` (percent, default 5, as MXNet)
is the share of device memory an allocation must leave free: past it the allocation fails
as out of memory, the pool frees its cached blocks and retries once.
"""

from __future__ import annotations

import os

from opsdk import MXNetError
from opsdk.device import STREAM_INLINE

from ._cupy import cupy, unusable
from .streams import GpuRunContext, thread_stream

__all__ = ["GpuDevice"]


class _Generator:
    """numpy's ``Generator`` names over cupy's ``RandomState`` (which has every distribution
    the random ops draw from)."""

    def __init__(self, state):
        self._state = state

    def integers(self, low, high=None, size=None, dtype="int64"):
        return self._state.randint(low, high, size, dtype)

    def random(self, size=None, dtype="float64"):
        return self._state.random_sample(size, dtype)

    def __getattr__(self, name):          # uniform, normal, gamma, poisson, permutation, ...
        return getattr(self._state, name)

POOL_TYPES = ("Naive", "Round", "Unpooled")


def _env(names, default):
    for n in names:
        v = os.environ.get(n)
        if v:
            return v
    return default


class GpuDevice:
    type = "gpu"
    kernels = ("gpu", "cpu")          # FCompute<gpu>, else the generic xp body on cupy
    inline_policy = STREAM_INLINE     # kernels are enqueued at once on the pushing thread's stream
    run_context = GpuRunContext

    def __init__(self):
        self._count = None
        self._free = {}       # device id -> (free bytes last asked, less allocations since; total)

    @property
    def xp(self):
        return cupy()

    def count(self) -> int:
        if self._count is None:
            cp = cupy()
            try:
                n = cp.cuda.runtime.getDeviceCount()
            except Exception as e:   # CUDARuntimeError: no driver, no device
                raise unusable(e) from e
            if n == 0:
                raise MXNetError("no CUDA device: the CUDA driver reports none")
            self._count = n
        return self._count

    def pool_type(self) -> str:
        name = _env(("MXNEXT_GPU_MEM_POOL_TYPE", "MXNET_GPU_MEM_POOL_TYPE"), "Naive")
        if name not in POOL_TYPES:
            raise MXNetError(f"MXNEXT_GPU_MEM_POOL_TYPE: expected one of "
                             f"{', '.join(POOL_TYPES)}, got {name!r}")
        return name

    def reserve(self) -> float:
        """The share of device memory allocations leave free (0..1)."""
        v = _env(("MXNEXT_GPU_MEM_POOL_RESERVE", "MXNET_GPU_MEM_POOL_RESERVE"), "5")
        pct = float(v)
        if not 0 <= pct < 100:
            raise MXNetError(f"MXNEXT_GPU_MEM_POOL_RESERVE: expected a percentage in "
                             f"[0, 100), got {v!r}")
        return pct / 100

    def alloc(self, nbytes, device_id):
        cp = cupy()
        with cp.cuda.Device(device_id):
            # cudaMemGetInfo costs milliseconds: ask again only when the estimate (the last
            # answer less what was allocated since; frees only add) nears the reserve
            reserve = self.reserve()
            free, total = self._free.get(device_id, (None, None))
            if free is None or free - nbytes < reserve * total:
                free, total = cp.cuda.runtime.memGetInfo()
            if free - nbytes < reserve * total:
                raise MemoryError(f"gpu({device_id}): {nbytes} bytes would leave {free - nbytes}"
                                  f" of {total} bytes free, under the reserve of "
                                  f"{reserve:.0%} (MXNEXT_GPU_MEM_POOL_RESERVE)")
            try:
                mem = cp.cuda.Memory(nbytes)
            except cp.cuda.runtime.CUDARuntimeError as e:
                if "MemoryAllocation" in str(e):
                    raise MemoryError(f"gpu({device_id}): {e}") from e
                raise
            self._free[device_id] = (free - nbytes, total)
            return mem

    def free(self, raw, device_id) -> None:
        pass      # cupy.cuda.Memory frees its allocation when the last view of it goes

    def view(self, raw, dtype, shape, offset=0):
        cp = cupy()
        ptr = raw + offset if isinstance(raw, cp.cuda.MemoryPointer) else \
            cp.cuda.MemoryPointer(raw, offset)          # borrowed (DLPack) or our own block
        return cp.ndarray(shape, dtype, ptr)

    dlpack_type = 2                   # kDLCUDA: ``mx.nd.from_dlpack`` hands such arrays here

    def borrow(self, obj):
        """``(raw, device_id, shape, dtype)`` of a DLPack CUDA array, sharing its memory."""
        a = cupy().ascontiguousarray(cupy().from_dlpack(obj))
        return a.data, a.device.id, a.shape, a.dtype

    def to_host(self, arr):
        return arr.get()              # on this thread's current stream, waited for

    def from_host(self, arr, device_id):
        cp = cupy()
        with cp.cuda.Device(device_id):
            return cp.asarray(arr)


    def copy(self, dst, src) -> None:
        dst[...] = src

    def fill(self, dst, value) -> None:
        dst.fill(value)

    def random_generator(self, entropy, device_id):
        """The device's generator for ``mxnext.resource``: curand through cupy's RandomState,
        seeded from ``entropy`` (seed, device type and id, resource kind)."""
        import numpy
        seed = int(numpy.random.SeedSequence(entropy).generate_state(1, numpy.uint64)[0])
        with cupy().cuda.Device(device_id):
            return _Generator(cupy().random.RandomState(seed))

    def stream(self, device_id):
        return thread_stream(device_id)

    def synchronize(self, device_id) -> None:
        cp = cupy()
        with cp.cuda.Device(device_id):
            cp.cuda.runtime.deviceSynchronize()

    def conv_kernel(self) -> str:
        """Which convolution runs on the gpu: cuDNN, or im2col + GEMM and why."""
        from . import cudnn_conv
        return cudnn_conv.describe()

    def __repr__(self):
        return "<device gpu (cupy)>"
