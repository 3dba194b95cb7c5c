"""Device registry and the builtin cpu / null devices."""

from __future__ import annotations

import numpy as np
import pytest

import mxnext as mx
from mxnext import device
from mxnext.base import MXNetError
from mxnext.device.cpu import CpuDevice
from mxnext.device.null import NullDevice


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
    np.testing.assert_array_equal(dev.to_numpy(b), np.arange(6).reshape(2, 3))
    host = np.ones((4,), np.int64)
    d = dev.from_numpy(host, 0)
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
