"""A device's inline policy (mxnext._runtime.inline): the cpu device times kernels and runs
the fast ones on the pushing thread; a device whose policy never inlines gets none of its
work run there, by any fast path of the threaded engines."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import numpy as np
import pytest
from opsdk import ElemwiseShape, ElemwiseType, assign, register_op

import mxnext as mx
from mxnext._runtime import device
from mxnext._runtime.inline import (CHEAP_BYTES, INLINE_SECONDS, NEVER_INLINE, TIMED_INLINE,
                                    TIMED_RUNS, NeverInline, TimedInline)
from mxnext.device.cpu import CpuDevice

THREADED = ["ThreadedEnginePerDevice", "ThreadedEngine"]


def _kernel(nbytes, requested=(), is_async=False, policy=TIMED_INLINE):
    k = SimpleNamespace()
    policy.start(k, nbytes, requested, is_async)
    return k


def test_cpu_device_times_kernels_inline():
    assert device.get("cpu").inline_policy is TIMED_INLINE
    assert TIMED_INLINE.inline and TIMED_INLINE.cheap(CHEAP_BYTES)
    assert not TIMED_INLINE.cheap(CHEAP_BYTES + 1)


def test_timed_policy_settles_cheap_from_the_fastest_of_the_first_runs():
    small, large = _kernel(CHEAP_BYTES), _kernel(CHEAP_BYTES + 1)
    assert (small.cheap, small.timing, large.cheap, large.timing) == (True, True, False, True)
    for seconds in [INLINE_SECONDS * 5] * (TIMED_RUNS - 1) + [INLINE_SECONDS / 2]:
        assert large.timing
        TIMED_INLINE.observe(large, seconds)
    assert (large.cheap, large.timing) == (True, False)     # the fastest run counts
    for _ in range(TIMED_RUNS):
        TIMED_INLINE.observe(small, INLINE_SECONDS * 2)
    assert (small.cheap, small.timing) == (False, False)


def test_kernels_with_resources_or_async_completion_are_never_cheap_nor_timed():
    for k in (_kernel(4, requested=["temp space"]), _kernel(4, is_async=True)):
        assert (k.cheap, k.timing) == (False, False)


def test_policy_thresholds_are_per_policy():
    quick = TimedInline(cheap_bytes=8, timed_runs=1, inline_seconds=1.0)
    k = _kernel(16, policy=quick)
    assert not k.cheap
    quick.observe(k, 0.5)
    assert (k.cheap, k.timing) == (True, False)


def test_never_inline_policy_makes_nothing_cheap_and_times_nothing():
    assert isinstance(NEVER_INLINE, NeverInline) and not NEVER_INLINE.inline
    assert not NEVER_INLINE.cheap(0)
    k = _kernel(0, policy=NEVER_INLINE)
    assert (k.cheap, k.timing) == (False, False)


# -- through the engine and the imperative path --------------------------------------------
@pytest.fixture
def enqueuing_ctx(monkeypatch):
    """A context of a registered host-memory device whose policy never inlines, as a GPU
    device's (it runs the cpu kernels)."""
    class Enqueuing(CpuDevice):
        type = "enqueue_test"
        inline_policy = NEVER_INLINE
    monkeypatch.setattr(device, "_devices", dict(device.available()))
    device.register(Enqueuing())
    return mx.Context("enqueue_test", 0)


@pytest.mark.parametrize("name", THREADED)
def test_work_of_a_never_inline_device_runs_on_its_workers_only(name, enqueuing_ctx):
    me = threading.get_ident()
    for ctx, on_me in ((mx.cpu(), True), (enqueuing_ctx, False)):
        with mx.engine.use_engine(name) as eng:
            ran = {}
            a, b, c = eng.new_var(), eng.new_var(), eng.new_var()

            def record(key):
                return lambda rctx: ran.setdefault(key, threading.get_ident())
            cheap = device.get(ctx.device_type).inline_policy.cheap(1 << 20)
            eng.push_kernel(record("alone"), ctx, (), (a,), "alone", cheap)
            eng.wait_for_var(a)                 # kept for this thread, or run by a worker
            assert (ran["alone"] == me) is on_me
            # a chain through a cpu kernel this thread keeps: the wait drives the chain
            eng.push_kernel(record("cpu first"), mx.cpu(), (), (a,), "cpu first", False)
            eng.push_kernel(record("device"), ctx, (a,), (b,), "device", cheap)
            eng.push_kernel(record("cpu last"), mx.cpu(), (b,), (c,), "cpu last", False)
            eng.wait_for_var(c)
            assert (ran["device"] == me) is on_me


@pytest.mark.parametrize("name", THREADED)
def test_never_inline_work_made_ready_by_a_waiting_thread_goes_to_a_worker(name, enqueuing_ctx):
    """Another thread keeps the kernel the device's work waits for; this thread's wait runs
    that kernel itself, and what it makes ready must still go to the device's workers."""
    with mx.engine.use_engine(name) as eng:
        ran = {}
        a, b = eng.new_var(), eng.new_var()

        def record(key):
            return lambda rctx: ran.setdefault(key, threading.current_thread())
        keeper = threading.Thread(target=eng.push_kernel,
                                  args=(record("kept"), mx.cpu(), (), (a,), "kept", False))
        keeper.start()
        keeper.join()
        eng.push_kernel(record("device"), enqueuing_ctx, (a,), (b,), "device", False)
        eng.wait_for_var(a)
        eng.wait_for_var(b)
        assert ran["kept"] is threading.current_thread()      # the wait ran it here
        assert ran["device"].name.startswith("mxnext-")        # a worker of the engine


def _probe_op(name, seconds):
    """A new op ``name``, an elementwise copy whose kernel records (thread, whether the call that pushed it has
    returned) and takes at least ``seconds``."""
    log, returned = [], []

    def kernel(ctx, i, req, o, p):
        log.append((threading.get_ident(), bool(returned)))
        time.sleep(seconds)
        assign(o[0], req[0], i[0])
    (register_op(name).set_num_inputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", ElemwiseType(1, 1))
     .set_attr("FCompute<cpu>", kernel).add_argument("data", "NDArray-or-Symbol", "x"))
    op = getattr(mx.nd._internal, name)

    def call(x):
        returned.clear()
        y = op(x)
        returned.append(True)
        return y
    return call, log


@pytest.mark.parametrize("name", THREADED)
def test_cpu_op_runs_inline_once_timed_fast_and_stays_queued_when_slow(name):
    fast, fast_log = _probe_op(f"_test_inline_fast_{name}", 0)
    slow, slow_log = _probe_op(f"_test_inline_slow_{name}", INLINE_SECONDS * 5)
    me = threading.get_ident()
    with mx.engine.use_engine(name):
        x = mx.nd.ones((CHEAP_BYTES // 4 + 1,))      # too large to start out cheap
        for _ in range(TIMED_RUNS):
            fast(x).wait_to_read()
            slow(x).wait_to_read()
        y, z = fast(x), slow(x)
        assert fast_log[-1] == (me, False)     # ran inline: on this thread, inside the call
        assert len(slow_log) == TIMED_RUNS     # not run yet: kept for a wait or a worker
        mx.nd.waitall()
        assert len(slow_log) == TIMED_RUNS + 1 and slow_log[-1][1]
        np.testing.assert_array_equal(y.asnumpy(), z.asnumpy())


@pytest.mark.parametrize("name", THREADED)
def test_op_on_a_never_inline_device_never_runs_on_the_calling_thread(name, enqueuing_ctx):
    probe, log = _probe_op(f"_test_inline_enqueued_{name}", 0)
    me = threading.get_ident()
    with mx.engine.use_engine(name):
        x = mx.nd.ones((4,), ctx=enqueuing_ctx)     # small: cheap from the start on cpu
        for _ in range(TIMED_RUNS + 2):
            y = probe(x)
            assert y.asnumpy().tolist() == [1, 1, 1, 1]
        mx.nd.waitall()
    assert len(log) == TIMED_RUNS + 2 and all(tid != me for tid, _ in log)
