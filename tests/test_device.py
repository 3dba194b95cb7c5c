"""Device registry and the builtin cpu / null devices."""

from __future__ import annotations

import numpy as np
import pytest

import mxnext as mx
from mxnext._runtime import device
from mxnext.base import MXNetError
from mxnext.device.cpu import CpuDevice
from mxnext._runtime.device.null import NullDevice


def test_builtins_are_available():
    assert device.get("cpu").type == "cpu"
    assert device.get("null").type == "null"
    assert {"cpu", "null"} <= set(device.available())
    assert device.get("cpu").xp is np


def test_unknown_device_lists_known_ones():
    with pytest.raises(MXNetError) as info:
        device.get("tpu")
    msg = str(info.value)
    assert "'tpu'" in msg and "cpu" in msg
    assert "null" not in msg                  # an internal test device is never offered


def test_register_same_type_is_idempotent_and_conflicts_are_refused():
    cpu = device.get("cpu")
    device.register(CpuDevice())
    assert device.get("cpu") is cpu

    class OtherCpu(CpuDevice):
        pass
    with pytest.raises(MXNetError, match="already registered"):
        device.register(OtherCpu())
    assert device.get("cpu") is cpu


def test_register_new_device_type(monkeypatch):
    monkeypatch.setattr(device, "_devices", dict(device._devices))  # leave no test device
    class Fake(CpuDevice):
        type = "fake_test_dev"
    dev = Fake()
    device.register(dev)
    assert device.get("fake_test_dev") is dev
    assert device.available()["fake_test_dev"] is dev


def test_cpu_ids_are_distinct_and_many():
    assert mx.cpu(0) != mx.cpu(1)
    assert device.get("cpu").count() > 1000


@pytest.mark.parametrize("name", ["cpu", "cpu_pinned", "cpu_shared", "null"])
def test_alloc_view_roundtrip(name):
    dev = device.get(name)
    raw = dev.alloc(64, 0)
    assert raw.nbytes == 64
    a = dev.view(raw, np.float32, (2, 3), offset=8)
    a[...] = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = dev.view(raw, np.float32, (2, 3), offset=8)
    np.testing.assert_array_equal(dev.to_host(b), np.arange(6).reshape(2, 3))
    host = np.ones((4,), np.int64)
    d = dev.from_host(host, 0)
    host[0] = 7
    assert d[0] == 1                    # a copy, not a view of the host array
    dev.free(raw, 0)


def test_null_device_counts_allocations():
    dev = NullDevice()
    r1, r2 = dev.alloc(10, 0), dev.alloc(30, 1)
    assert (dev.allocs, dev.frees, dev.live_bytes) == (2, 0, 40)
    dev.free(r1, 0)
    assert (dev.allocs, dev.frees, dev.live_bytes) == (2, 1, 30)
    dev.free(r2, 1)
    assert dev.live_bytes == 0


def test_device_copies_cast_fill_and_cross_device_types():
    cpu, null = device.get("cpu"), device.get("null")
    dst = np.zeros(3, np.int32)
    cpu.copy(dst, np.array([1.7, -2.2, 3.0]))
    assert dst.tolist() == [1, -2, 3]
    cpu.fill(dst, 7)
    assert dst.tolist() == [7, 7, 7]
    other = null.view(null.alloc(12, 0), np.float32, (3,))
    device.copy_across(null, other, 0, cpu, dst)
    assert other.dtype == np.float32 and other.tolist() == [7.0, 7.0, 7.0]


class HostTrips(CpuDevice):
    """Host memory under its own type name, logging its copies and every call that passes
    data through the host (as a GPU device's would)."""

    type = "host_trips_test"

    def __init__(self):
        self.trips = []

    def to_host(self, arr):
        self.trips.append("to_host")
        return arr

    def from_host(self, arr, device_id):
        self.trips.append("from_host")
        return super().from_host(arr, device_id)

    def copy(self, dst, src):
        self.trips.append("copy")
        super().copy(dst, src)

    def fill(self, dst, value):
        self.trips.append("fill")
        super().fill(dst, value)


@pytest.fixture
def trips(monkeypatch):
    monkeypatch.setattr(device, "_devices", dict(device.available()))  # leave no test device
    dev = HostTrips()
    device.register(dev)
    return dev, mx.Context(dev.type, 0)


def test_same_device_copies_never_pass_through_the_host(trips):
    from mxnext.kvstore._comm import assign_sum
    dev, ctx = trips

    def calls():
        mx.nd.waitall()
        out = list(dev.trips)
        dev.trips.clear()
        return out
    x = mx.nd.array([[1, 2], [3, 4]], ctx=ctx)
    assert calls() == ["from_host", "copy"]                 # from the host, into the array
    y = x.copyto(mx.nd.zeros((2, 2), ctx=ctx))
    assert calls() == ["fill", "copy"]
    x.attach_grad()
    with mx.autograd.record():
        z = x * y
    z.backward()
    assert set(calls()) == {"fill"}                         # zero gradient, head gradient
    total, copied = mx.nd.empty((2, 2), ctx=ctx), mx.nd.empty((2, 2), ctx=ctx)
    assign_sum([x.grad, y, x], total)                       # a KVStore's data movement
    assign_sum([total], copied)
    assert calls() == ["copy"]
    sym = mx.sym.var("a") * 2
    grad = mx.nd.empty((2, 2), ctx=ctx, dtype="float64")    # not the graph's dtype: copied
    ex = sym.bind(ctx, {"a": x}, args_grad={"a": grad})
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 2), ctx=ctx))
    # fills: the executor's head gradient array, ones; copies: ones into it, the gradient out
    assert sorted(calls()) == ["copy", "copy", "fill", "fill"]
    assert copied.asnumpy().tolist() == [[3, 6], [9, 12]]  # x.grad = y = x
    assert grad.asnumpy().tolist() == [[2, 2], [2, 2]]
    assert ex.outputs[0].asnumpy().tolist() == [[2, 4], [6, 8]]
    assert set(calls()) == {"to_host"}                      # the three reads above


def test_copies_between_device_types_go_through_the_host_once_each(trips):
    dev, ctx = trips
    on_dev = mx.nd.array([1.5, 2.5]).copyto(ctx)
    on_dev.wait_to_read()
    assert dev.trips == ["from_host", "copy"]
    back = on_dev.copyto(mx.cpu())
    back.wait_to_read()
    assert dev.trips == ["from_host", "copy", "to_host"]
    kv = mx.kv.create()                       # "local": its store lives in host memory
    kv.init("k", mx.nd.zeros((2,), ctx=ctx))
    kv.push("k", [on_dev])
    out = mx.nd.zeros((2,), ctx=ctx)
    dev.trips.clear()
    kv.pull("k", out=out)
    out.wait_to_read()
    assert dev.trips == ["from_host", "copy"]
    assert out.asnumpy().tolist() == [1.5, 2.5]


def test_stream_lanes_wait_on_the_device_only_for_their_own_kind():
    """A lane waits on the device for another lane's mark of its own device type; a mark of
    another type (whose work reached this device through host copies) is left alone, and a
    host wait synchronizes each lane's own event."""
    from mxnext._runtime.streams import Lane

    class Counted(Lane):
        __slots__ = ("waited", "synced")

        def __init__(self):
            super().__init__(stream=None)
            self.waited, self.synced = [], []

        def record(self):
            return (self, self.seq)

        def wait_event(self, event):
            self.waited.append(event)

        def synchronize_event(self, event):
            self.synced.append(event)

    class Other(Counted):
        __slots__ = ()

    a, b, c = Counted(), Counted(), Other()
    a.seq, c.seq = 3, 5
    b.wait_mark((a, 2))
    b.wait_mark((c, 4))
    assert b.waited == [(a, 3)]             # a's event covers all a had enqueued
    c.wait_host(4)
    assert c.synced == [(c, 5)] and c.done == 5
    b.wait_mark((c, 5))                     # known done: nothing to wait for
    assert b.waited == [(a, 3)]
