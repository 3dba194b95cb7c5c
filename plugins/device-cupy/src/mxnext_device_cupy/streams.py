"""The gpu's lanes: one CUDA stream per thread that runs gpu work (each engine worker, each
user thread enqueueing kernels inline) and device id, with the events that track it
(``mxnext._runtime.streams`` keeps the marks). The streams are blocking ones: work a thread
issues outside engine functions (``nd.array(..., ctx=gpu)`` writes a fresh block at once, a
cpu function's ``to_host``) goes to the legacy default stream, which CUDA orders with them.
"""

from __future__ import annotations

import threading

from opsdk.device import Lane, StreamRunContext

from ._cupy import cupy

__all__ = ["GpuRunContext", "thread_stream"]


class GpuLane(Lane):
    __slots__ = ("device_id", "_event")

    def __init__(self, device_id):
        cp = cupy()
        cp.cuda.runtime.setDevice(device_id)
        super().__init__(cp.cuda.Stream())
        self.device_id = device_id
        self._event = cp.cuda.Event

    def record(self):
        ev = self._event(disable_timing=True)
        self.stream.record(ev)
        return ev

    def wait_event(self, event):
        self.stream.wait_event(event)

    def synchronize_event(self, event):
        event.synchronize()

    def event_done(self, event):
        return event.done

    def enter(self):
        return self.stream            # cupy's Stream is its own context manager


class _Local(threading.local):
    lanes = None              # device id -> GpuLane
    device = None             # the device id current on this thread


_local = _Local()


def _lane(device_id) -> GpuLane:
    """This thread's lane on ``device_id``, with that device made current."""
    lanes = _local.lanes
    if lanes is None:
        lanes = _local.lanes = {}
    lane = lanes.get(device_id)
    if lane is None:
        lane = lanes[device_id] = GpuLane(device_id)
    if _local.device != device_id:
        cupy().cuda.runtime.setDevice(device_id)
        _local.device = device_id
    return lane


def thread_stream(device_id):
    """This thread's stream on ``device_id``."""
    return _lane(device_id).stream


class GpuRunContext(StreamRunContext):
    __slots__ = ()

    def lane(self):
        return _lane(self.ctx.device_id)
