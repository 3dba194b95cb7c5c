"""One CUDA stream per thread that runs gpu work (each engine worker; a user thread running
work it waits for), and the RunContext that runs engine functions on it.

A function runs with its thread's stream current; then an event recorded on that stream is
waited for, so when the engine completes the function (and grants its vars to dependants on
other streams, or to a reader on the host) its device work is done. Only this stream's work
is waited for, never the whole device. The streams are blocking ones: work a thread issues
outside engine functions (``nd.array(..., ctx=gpu)`` writes a fresh block at once) goes to
the legacy default stream, which CUDA orders with them.
"""

from __future__ import annotations

import threading

from opsdk.device import StreamRunContext

from ._cupy import cupy

__all__ = ["GpuRunContext", "thread_stream"]


class _Lane:
    """A thread's stream on one device and the event it records after each function."""

    __slots__ = ("device_id", "stream", "event")

    def __init__(self, device_id):
        cp = cupy()
        cp.cuda.runtime.setDevice(device_id)
        self.device_id = device_id
        self.stream = cp.cuda.Stream()
        self.event = cp.cuda.Event(disable_timing=True)


class _Local(threading.local):
    lanes = None              # device id -> _Lane
    device = None             # the device id current on this thread


_local = _Local()


def _lane(device_id) -> _Lane:
    """This thread's lane on ``device_id``, with that device made current."""
    lanes = _local.lanes
    if lanes is None:
        lanes = _local.lanes = {}
    lane = lanes.get(device_id)
    if lane is None:
        lane = lanes[device_id] = _Lane(device_id)
    if _local.device != device_id:
        cupy().cuda.runtime.setDevice(device_id)
        _local.device = device_id
    return lane


def thread_stream(device_id):
    """This thread's stream on ``device_id``."""
    return _lane(device_id).stream


class GpuRunContext(StreamRunContext):
    """``stream``: the running thread's stream; ``run(fn)`` runs ``fn`` on it and returns
    once that work is done."""

    __slots__ = ()

    @property
    def stream(self):
        return thread_stream(self.ctx.device_id)

    def run(self, fn):
        lane = _lane(self.ctx.device_id)
        with lane.stream:
            fn(self)
        lane.stream.record(lane.event)
        lane.event.synchronize()
