"""``testdev``: the device contract (``opsdk.device``) on numpy memory, with host lanes (one
per thread, as a GPU's streams) so the stream paths of the runtime run without a GPU: work
completes at once, and the events a GPU would wait on are counted."""

from __future__ import annotations

import contextlib
import threading

import numpy

from opsdk.device import STREAM_INLINE, HostDevice, Lane, StreamRunContext

from .arrays import XP, DeviceArray

__all__ = ["TestDevice", "HostStream", "HostLane"]


class HostStream:
    """A stream of one thread on one testdev id; work on it completes at once."""

    def __init__(self, device_id):
        self.device_id = device_id
        self.thread = threading.current_thread().name
        self.runs = 0             # functions run on it

    def __repr__(self):
        return f"<HostStream testdev({self.device_id}) of {self.thread}: {self.runs} runs>"


class HostEvent:
    """An event of a host lane: the lane's work up to ``seq``, done once recorded."""

    __slots__ = ("lane", "seq")

    def __init__(self, lane, seq):
        self.lane, self.seq = lane, seq


class HostLane(Lane):
    """A thread's lane on one testdev id. What a GPU's events would do is counted:
    ``device_waits``, the events of other lanes its stream waited for; ``host_waits``, the
    events the host blocked on."""

    __slots__ = ("device_waits", "host_waits")

    def __init__(self, device_id):
        super().__init__(HostStream(device_id))
        self.device_waits = []
        self.host_waits = []

    def record(self):
        return HostEvent(self, self.seq)

    def wait_event(self, event):
        self.device_waits.append(event)

    def synchronize_event(self, event):
        self.host_waits.append(event)

    def event_done(self, event):
        return True

    def enter(self):
        self.stream.runs += 1
        return _NULL


_NULL = contextlib.nullcontext()
_local = threading.local()


def _lane(device_id) -> HostLane:
    lanes = getattr(_local, "lanes", None)
    if lanes is None:
        lanes = _local.lanes = {}
    lane = lanes.get(device_id)
    if lane is None:
        lane = lanes[device_id] = HostLane(device_id)
    return lane


def _stream(device_id):
    return _lane(device_id).stream


class TestdevRunContext(StreamRunContext):
    __slots__ = ()

    def lane(self):
        return _lane(self.ctx.device_id)


class TestDevice(HostDevice):
    """Host memory under another type, with streams, counted host copies, two
    ids and arrays that keep a GPU library's host boundary (``arrays``)."""

    type = "testdev"
    xp = XP
    kernels = ("testdev", "cpu")      # no kernels of its own: the generic numpy bodies
    inline_policy = STREAM_INLINE
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
