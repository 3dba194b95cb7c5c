"""``testdev``: the device contract (``opsdk.device``) on numpy memory, with host "streams"
(one per engine thread) so the stream paths of the runtime run without a GPU."""

from __future__ import annotations

import threading

import numpy

from mxnext.device.cpu import CpuDevice
from opsdk.device import NEVER_INLINE, StreamRunContext

from .arrays import XP, DeviceArray

__all__ = ["TestDevice", "HostStream"]


class HostStream:
    """A stream of one thread on one testdev id; work on it completes at once."""

    def __init__(self, device_id):
        self.device_id = device_id
        self.thread = threading.current_thread().name
        self.runs = 0             # functions run on it

    def __repr__(self):
        return f"<HostStream testdev({self.device_id}) of {self.thread}: {self.runs} runs>"


_local = threading.local()


def _stream(device_id):
    streams = getattr(_local, "streams", None)
    if streams is None:
        streams = _local.streams = {}
    s = streams.get(device_id)
    if s is None:
        s = streams[device_id] = HostStream(device_id)
    return s


class TestdevRunContext(StreamRunContext):
    """``stream`` is the running thread's; ``run`` counts the functions each stream ran."""

    __slots__ = ()

    @property
    def stream(self):
        return _stream(self.ctx.device_id)

    def run(self, fn):
        _stream(self.ctx.device_id).runs += 1
        fn(self)


class TestDevice(CpuDevice):
    """The cpu device's memory under another type, with streams, counted host copies, two
    ids and arrays that keep a GPU library's host boundary (``arrays``)."""

    type = "testdev"
    xp = XP
    kernels = ("testdev", "cpu")      # no kernels of its own: the generic numpy bodies
    inline_policy = NEVER_INLINE
    run_context = TestdevRunContext

    def __init__(self):
        self._lock = threading.Lock()
        self.to_host_calls = 0
        self.from_host_calls = 0

    def count(self) -> int:
        return 2

    def to_host(self, arr):
        with self._lock:
            self.to_host_calls += 1
        return numpy.array(arr.view(numpy.ndarray), copy=True)

    def from_host(self, arr, device_id):
        with self._lock:
            self.from_host_calls += 1
        return numpy.array(arr, copy=True).view(DeviceArray)


    def view(self, raw, dtype, shape, offset=0):
        return super().view(raw, dtype, shape, offset).view(DeviceArray)

    def fill(self, dst, value):
        dst.fill(value)

    def stream(self, device_id):
        return _stream(device_id)

    def __repr__(self):
        return "<device testdev (numpy, 2 ids)>"
