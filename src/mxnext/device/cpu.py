"""``mx.device.cpu``: the public face of ``mxnext._runtime.device.cpu``.

The numpy CPU device (the contract of ``opsdk.device``): raw buffers are numpy uint8 arrays;
work runs on the engine's threads with no stream.
"""

from mxnext._runtime.device.cpu import (
    CpuDevice,
    CpuPinnedDevice,
    CpuSharedDevice,
)

__all__ = ["CpuDevice", "CpuPinnedDevice", "CpuSharedDevice"]
