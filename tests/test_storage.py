"""Pooled storage: size classes, reuse, statistics, release, freeing through the engine."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext import device, engine, storage
from mxnext.base import MXNetError
from mxnext.engine import NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice
from mxnext.storage import StorageManager

NULL = mx.Context("null", 0)


@pytest.fixture
def null_dev():
    return device.get("null")


def _raw_counts(dev):
    return dev.allocs, dev.frees


def test_round_pool_rounds_to_powers_of_two_and_reuses(null_dev):
    sm = StorageManager("Round")
    a0, f0 = _raw_counts(null_dev)
    h = sm.alloc(100, NULL)
    assert (h.nbytes, h.capacity, h.ctx) == (100, 128, NULL)
    raw = h.raw
    sm.free(h)
    h2 = sm.alloc(120, NULL)                 # same class: the same block comes back
    assert h2.raw is raw and h2.capacity == 128
    h3 = sm.alloc(129, NULL)                 # next class: a new block
    assert h3.capacity == 256 and h3.raw is not raw
    assert _raw_counts(null_dev) == (a0 + 2, f0)
    st = sm.stats(NULL)
    assert {k: st[k] for k in ("in_use", "pooled", "peak", "hits", "misses", "allocs",
                                "frees")} == dict(in_use=384, pooled=0, peak=384, hits=1,
                                                  misses=2, allocs=3, frees=1)
    sm.free(h2)
    sm.free(h3)
    st = sm.stats(NULL)
    assert (st["in_use"], st["pooled"], st["peak"]) == (0, 384, 384)


def test_round_pool_is_linear_above_cutoff(monkeypatch):
    monkeypatch.setenv("MXNEXT_MEM_POOL_ROUND_LINEAR_CUTOFF", "10")
    sm = StorageManager("Round")
    assert sm.alloc(1025, NULL).capacity == 2048
    assert sm.alloc(3000, NULL).capacity == 3072     # a multiple of 1024, not 4096
    assert sm.alloc(1000, NULL).capacity == 1024


def test_naive_pool_reuses_exact_sizes_only():
    sm = StorageManager("Naive")
    h = sm.alloc(100, NULL)
    assert h.capacity == 100
    raw = h.raw
    sm.free(h)
    other = sm.alloc(101, NULL)
    assert other.raw is not raw
    again = sm.alloc(100, NULL)
    assert again.raw is raw
    st = sm.stats(NULL)
    assert (st["hits"], st["misses"], st["pool_type"]) == (1, 2, "Naive")


def test_unpooled_frees_straight_to_the_device(null_dev):
    sm = StorageManager("Unpooled")
    a0, f0 = _raw_counts(null_dev)
    h = sm.alloc(100, NULL)
    sm.free(h)
    h2 = sm.alloc(100, NULL)
    assert _raw_counts(null_dev) == (a0 + 2, f0 + 1)
    st = sm.stats(NULL)
    assert (st["pooled"], st["hits"], st["misses"], st["in_use"]) == (0, 0, 2, 100)
    sm.free(h2)


def test_release_all_returns_pooled_blocks_to_the_device(null_dev):
    sm = StorageManager("Round")
    hs = [sm.alloc(n, NULL) for n in (10, 100, 1000)]
    held = sm.alloc(50, NULL)
    live0 = null_dev.live_bytes
    for h in hs:
        sm.free(h)
    assert sm.stats(NULL)["pooled"] == 16 + 128 + 1024
    sm.release_all()
    assert sm.stats(NULL)["pooled"] == 0
    assert null_dev.live_bytes == live0 - (16 + 128 + 1024)
    assert sm.stats(NULL)["in_use"] == 64           # blocks in use are untouched
    sm.free(held)
    sm.release_all(NULL)
    assert sm.stats(NULL)["pooled"] == 0


def test_pools_are_per_device_id():
    sm = StorageManager("Round")
    h0 = sm.alloc(64, mx.cpu(0))
    sm.free(h0)
    h1 = sm.alloc(64, mx.cpu(1))
    assert h1.raw is not h0.raw
    assert sm.stats(mx.cpu(0))["pooled"] == 64 and sm.stats(mx.cpu(1))["in_use"] == 64


def test_pool_type_from_environment(monkeypatch):
    monkeypatch.delenv("MXNEXT_MEM_POOL_TYPE", raising=False)
    monkeypatch.setenv("MXNET_GPU_MEM_POOL_TYPE", "Naive")
    assert StorageManager().alloc(100, NULL).capacity == 100
    monkeypatch.setenv("MXNEXT_MEM_POOL_TYPE", "Unpooled")
    assert StorageManager().stats(NULL)["pool_type"] == "Unpooled"
    monkeypatch.setenv("MXNEXT_MEM_POOL_TYPE", "Huge")
    with pytest.raises(MXNetError, match="MXNEXT_MEM_POOL_TYPE.*Round.*'Huge'"):
        StorageManager().alloc(1, NULL)
    with pytest.raises(MXNetError, match="pool_type"):
        StorageManager("Huge")


def test_double_free_is_an_error():
    sm = StorageManager()
    h = sm.alloc(8, NULL)
    sm.free(h)
    with pytest.raises(MXNetError, match="already freed"):
        sm.free(h)


def test_device_id_out_of_range():
    with pytest.raises(MXNetError, match="device id -1"):
        StorageManager().alloc(8, mx.Context("null", -1))


def test_view_of_a_handle_holds_data():
    h = storage.alloc(24, mx.cpu())
    a = device.get("cpu").view(h.raw, np.float64, (3,))
    a[:] = [1, 2, 3]
    assert device.get("cpu").view(h.raw, np.float64, (3,)).tolist() == [1.0, 2.0, 3.0]
    storage.free(h)


@pytest.mark.parametrize("engine_cls", [NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice],
                         ids=lambda c: c.__name__)
def test_free_async_waits_for_readers(engine_cls):
    sm = StorageManager("Round")
    with engine.use_engine(engine_cls()) as e:
        v = e.new_var()
        h = sm.alloc(256, NULL)
        gate = threading.Event()
        seen = []
        e.push_sync(lambda r: (gate.wait(20) if engine_cls is not NaiveEngine else None,
                               seen.append(sm.stats(NULL)["pooled"])), NULL, (v,))
        sm.free_async(h, v)
        gate.set()
        e.wait_for_var(v, write=True)
        assert seen == [0]                              # still in use while it was read
        st = sm.stats(NULL)
        assert (st["in_use"], st["pooled"]) == (0, 256)
        assert sm.alloc(200, NULL).raw is h.raw
    e.shutdown()


def test_concurrent_alloc_free_keeps_counts_consistent():
    sm = StorageManager("Round")
    ctx = mx.cpu(3)

    def churn(seed):
        rng = np.random.default_rng(seed)
        for _ in range(2000):
            h = sm.alloc(int(rng.integers(1, 5000)), ctx)
            sm.free(h)
    threads = [threading.Thread(target=churn, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    st = sm.stats(ctx)
    assert (st["allocs"], st["frees"], st["in_use"]) == (8000, 8000, 0)
    assert st["hits"] + st["misses"] == 8000 and st["misses"] <= 4 * 14  # 14 size classes


def test_a_failed_allocation_says_what_was_asked_and_leaves_the_counters():
    sm = StorageManager("Round")
    cpu = mx.cpu()
    held = sm.alloc(1000, cpu)
    before = sm.stats(cpu)
    want = 2 ** 62                           # addressable, never available
    cap = sm.pool(cpu).size_class(want)
    with pytest.raises(MXNetError, match=rf"^storage\.alloc: out of memory: failed to allocate "
                                         rf"{want} bytes \(size class {cap}\) on cpu\(0\) "
                                         rf"\(Round pool: 1024 bytes in use by other blocks, "
                                         rf"peak 1024;"):
        sm.alloc(want, cpu)
    after = sm.stats(cpu)
    assert (after["in_use"], after["peak"], after["allocs"]) == \
        (before["in_use"], before["peak"], before["allocs"])
    with pytest.raises(MXNetError, match=rf"^storage\.alloc: failed to allocate {2 ** 64} "
                                         rf"bytes \(size class {2 ** 64}\) on cpu\(0\): "):
        sm.alloc(2 ** 64, cpu)                # beyond what numpy can address
    assert sm.stats(cpu)["peak"] == before["peak"]
    sm.free(held)


def test_a_large_miss_gives_large_cached_blocks_back_first(monkeypatch, null_dev):
    """Shape after shape, the cache of large blocks stays near what is live: a new large
    block first returns as many cached large bytes (largest first); small ones stay."""
    monkeypatch.setenv("MXNEXT_MEM_POOL_ROUND_LINEAR_CUTOFF", "10")     # large: >= 1 KB
    sm = StorageManager("Round")
    small, a, b = sm.alloc(100, NULL), sm.alloc(3000, NULL), sm.alloc(5000, NULL)
    for h in (small, a, b):
        sm.free(h)
    assert sm.stats(NULL)["pooled"] == 128 + 3072 + 5120
    live0 = null_dev.live_bytes
    c = sm.alloc(4000, NULL)                        # a miss: the 5 KB block goes back
    st = sm.stats(NULL)
    assert (st["pooled"], st["evicted"], st["in_use"]) == (128 + 3072, 5120, 4096)
    assert null_dev.live_bytes == live0 - 5120 + 4096
    assert sm.alloc(3000, NULL).raw is a.raw        # the other large block is still cached
    sm.alloc(60, NULL)                              # small misses give nothing back
    assert sm.stats(NULL)["evicted"] == 5120
    d = sm.alloc(9000, NULL)                        # too little cached to cover it: kept
    assert sm.stats(NULL)["evicted"] == 5120
    for h in (c, d):
        sm.free(h)


def test_a_host_pool_keeps_a_bounded_cache(monkeypatch, null_dev):
    """Freed blocks stay cached up to MXNEXT_MEM_POOL_CACHE_MB (the largest others go back
    to make room for the one freed now); one larger than that never stays."""
    monkeypatch.setenv("MXNEXT_MEM_POOL_ROUND_LINEAR_CUTOFF", "10")     # large: >= 1 KB
    monkeypatch.setenv("MXNEXT_MEM_POOL_CACHE_MB", str(10000 / 2**20))
    sm = StorageManager("Round")
    hs = [sm.alloc(n, NULL) for n in (3000, 5000, 4000, 20000, 100)]
    live0 = null_dev.live_bytes
    for h in hs[:2]:
        sm.free(h)
    assert sm.stats(NULL)["pooled"] == 3072 + 5120
    sm.free(hs[2])                                  # 4 KB more: the 5 KB block goes back
    st = sm.stats(NULL)
    assert (st["pooled"], st["evicted"]) == (3072 + 4096, 5120)
    sm.free(hs[3])                                  # larger than the whole budget
    sm.free(hs[4])                                  # small ones count too; this one fits
    st = sm.stats(NULL)
    assert (st["pooled"], st["evicted"], st["in_use"]) == (3072 + 4096 + 128, 5120 + 20480, 0)
    assert null_dev.live_bytes == live0 - 5120 - 20480
    monkeypatch.setenv("MXNEXT_MEM_POOL_CACHE_MB", "lots")
    with pytest.raises(MXNetError, match="MXNEXT_MEM_POOL_CACHE_MB: expected a number"):
        StorageManager("Round").alloc(10, NULL)
