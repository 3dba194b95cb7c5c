"""The device conformance kit: checks any device plugin passes (``opsdk.device`` is the
contract), through the engine and the NDArray frontend as users reach the device.

In a plugin's tests::

    from opsdk.testing import device_conformance_tests
    test_device = device_conformance_tests("gpu")

From a script: ``run_device_checks(mx.gpu(0))`` returns ``[(check, error or None)]``.
"""

from __future__ import annotations

import threading

import numpy as np

__all__ = ["DEVICE_CHECKS", "run_device_checks", "device_conformance_tests", "device_unusable"]


def _mx():
    import mxnext
    return mxnext


def _dev(ctx):
    from mxnext import device
    return device.get(ctx.device_type)


def _host(a):
    """``a``'s data as numpy, read straight from device memory with no engine wait."""
    return np.asarray(_dev(a.context).to_host(a._data()))


def check_contract(ctx):
    from opsdk.device import check_contract as missing_of
    missing = missing_of(_dev(ctx))
    assert not missing, f"device {ctx.device_type!r} lacks {', '.join(missing)}"


def check_pool(ctx):
    """Blocks come from the pool and go back to it; a view of one holds what is written."""
    from mxnext import storage
    dev = _dev(ctx)
    before = storage.stats(ctx)
    h = storage.alloc(4000, ctx)
    assert h.nbytes == 4000 and h.capacity >= 4000, h
    assert storage.stats(ctx)["in_use"] >= before["in_use"] + 4000
    v = dev.view(h.raw, np.float32, (1000,))
    dev.fill(v, 2.5)
    dev.synchronize(ctx.device_id)
    assert np.all(np.asarray(dev.to_host(v)) == 2.5)
    storage.free(h)
    after = storage.stats(ctx)
    assert after["in_use"] == before["in_use"], (before, after)
    if after["pool_type"] != "Unpooled":
        h2 = storage.alloc(4000, ctx)
        assert storage.stats(ctx)["hits"] == after["hits"] + 1, "a freed block was not reused"
        storage.free(h2)


def check_copies(ctx):
    """host -> device -> host and device -> device, queued through the engine with no wait
    in between; the last read waits for the chain."""
    mx = _mx()
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    a = mx.nd.array(x, ctx=ctx)                        # host -> device
    other = mx.Context(ctx.device_type, 1 if _dev(ctx).count() > 1 else 0)
    b = a.copyto(other)                                # device -> device
    c = (b * 2).copyto(mx.cpu())                       # device -> host
    d = c.copyto(ctx)                                  # host -> device again
    e = mx.nd.zeros((4, 6), ctx=ctx)
    d.copyto(e)                                        # same device
    assert a.context == ctx and b.context == other and e.context == ctx
    np.testing.assert_array_equal(e.asnumpy(), x * 2)
    np.testing.assert_array_equal(a.astype("float64").asnumpy(), x)


def check_rng(ctx):
    """Seeding a device's generator makes its draws repeat; another seed changes them."""
    mx = _mx()

    def draw(seed):
        mx.random.seed(seed, ctx=ctx)
        return mx.nd.random.uniform(shape=(64,), ctx=ctx).asnumpy()
    first, again, other = draw(7), draw(7), draw(8)
    np.testing.assert_array_equal(first, again)
    assert not np.array_equal(first, other), "seeds 7 and 8 drew the same numbers"
    assert 0 <= first.min() and first.max() < 1


def check_dispatch(ctx):
    """One op runs on the device (its own kernel or the generic ``ctx.xp`` one) into device
    memory."""
    mx = _mx()
    rng = np.random.default_rng(0)
    x, w = rng.random((8, 5), np.float32), rng.random((5, 3), np.float32)
    y = mx.nd.dot(mx.nd.array(x, ctx=ctx), mx.nd.array(w, ctx=ctx))
    assert y.context == ctx
    xp = _dev(ctx).xp
    assert isinstance(y._data(), xp.ndarray), f"result is {type(y._data())}, not {xp.__name__}"
    np.testing.assert_allclose(y.asnumpy(), x @ w, rtol=1e-5)


def check_error(ctx):
    """A failure in a function running on the device is raised once, at the wait, naming
    the function; the stream it ran on is the running thread's."""
    mx = _mx()
    from mxnext.base import MXNetError
    a = mx.nd.zeros((3,), ctx=ctx)
    seen = []

    def broken(rctx):
        seen.append((rctx.ctx, rctx.stream, _dev(ctx).stream(ctx.device_id)))
        raise ValueError("device kernel failed")
    mx.engine.get().push_sync(broken, ctx, mutate_vars=(a._chunk.var,), name="broken_kernel")
    try:
        a.wait_to_read()
    except MXNetError as e:
        assert "broken_kernel" in str(e) and "device kernel failed" in str(e), str(e)
    else:
        raise AssertionError("the device function's error was not raised at the wait")
    a.wait_to_read()                                   # raised once only
    (rctx_ctx, stream, thread_stream), = seen
    assert rctx_ctx == ctx and stream is thread_stream, (rctx_ctx, stream, thread_stream)


def check_wait(ctx):
    """``wait_to_read`` returns once the device work behind the array is done: its memory,
    read directly, holds the result."""
    mx = _mx()
    x = np.full((256, 256), 0.5, np.float32)
    a = mx.nd.array(x, ctx=ctx)
    y = a
    for _ in range(4):
        y = mx.nd.dot(y, a)
    y.wait_to_read()
    np.testing.assert_allclose(_host(y), np.linalg.matrix_power(x, 5), rtol=1e-4)
    mx.nd.waitall()


def check_threads(ctx):
    """Work pushed from another thread (a stream device: that thread's own stream) is seen by
    work and reads on this one, and a write here by work there."""
    mx = _mx()
    x = np.full((96, 96), 0.5, np.float32)
    a = mx.nd.array(x, ctx=ctx)
    made = []
    t = threading.Thread(target=lambda: made.append(mx.nd.dot(a, a) + 1))
    t.start()
    t.join()
    np.testing.assert_allclose((made[0] * 2).asnumpy(), (x @ x + 1) * 2, rtol=1e-5)
    a[:] = 1.0
    seen = []
    t = threading.Thread(target=lambda: seen.append((a * 3).asnumpy()))
    t.start()
    t.join()
    np.testing.assert_array_equal(seen[0], np.full((96, 96), 3.0))


def check_stays_on_device(ctx):
    """Copies, fills and sums between arrays of the device (``copyto``, creation, autograd's
    gradients, a KVStore's sums, an executor's gradient copy) use its ``copy``/``fill`` and
    ``xp``: never ``to_host``/``from_host``."""
    mx = _mx()
    from mxnext.kvstore._comm import assign_sum
    dev = _dev(ctx)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    a = mx.nd.array(x, ctx=ctx)
    a.wait_to_read()
    trips = []

    def counted(name, fn):
        def call(*args):
            trips.append(name)
            return fn(*args)
        return call
    dev.to_host = counted("to_host", dev.to_host)
    dev.from_host = counted("from_host", dev.from_host)
    try:
        b = a.copyto(mx.nd.zeros((2, 3), ctx=ctx))
        a.attach_grad()
        with mx.autograd.record():
            y = a * b
        y.backward()
        total = mx.nd.empty((2, 3), ctx=ctx)
        assign_sum([a.grad, b, a], total)
        grad = mx.nd.empty((2, 3), ctx=ctx, dtype="float64")   # another dtype: copied in
        ex = (mx.sym.var("v") * 2).bind(ctx, {"v": total}, args_grad={"v": grad})
        ex.forward(is_train=True)
        ex.backward(mx.nd.ones((2, 3), ctx=ctx))
        mx.nd.waitall()
    finally:
        del dev.to_host, dev.from_host
    assert not trips, f"work within the device passed through the host: {trips}"
    np.testing.assert_array_equal(ex.outputs[0].asnumpy(), x * 6)
    np.testing.assert_array_equal(grad.asnumpy(), np.full((2, 3), 2.0))


def check_inline_policy(ctx):
    """Where the device's functions run follows its ``inline_policy``: with ``NEVER_INLINE``
    never on the thread that pushed them, even when that thread then waits for them."""
    mx = _mx()
    policy = _dev(ctx).inline_policy
    if policy.inline:
        return                    # timed: the engine may run fast kernels on either thread
    eng = mx.engine.get()
    a = mx.nd.zeros((256,), ctx=ctx)
    b = mx.nd.zeros((256,), ctx=ctx)
    ran = []

    def probe(rctx):
        ran.append(threading.get_ident())
    cheap = policy.cheap(1024)
    eng.push_kernel(probe, ctx, (), (a._chunk.var,), "inline_probe", cheap)
    eng.push_kernel(probe, ctx, (a._chunk.var,), (b._chunk.var,), "inline_probe", cheap)
    b.wait_to_read()
    me = threading.get_ident()
    assert len(ran) == 2 and me not in ran, "a function of the device ran on the pushing thread"


DEVICE_CHECKS = {"contract": check_contract, "pool": check_pool, "copies": check_copies,
                 "stays_on_device": check_stays_on_device, "inline_policy": check_inline_policy,
                 "rng": check_rng, "dispatch": check_dispatch, "error": check_error,
                 "wait_for_var": check_wait, "threads": check_threads}


def device_unusable(device_type) -> str | None:
    """Why ``device_type`` cannot run here (its ``count()`` error, or no device), else None."""
    from mxnext import device
    try:
        n = device.get(device_type).count()
    except Exception as e:   # the device's reason: no driver, no library
        return f"{device_type}: {e}"
    return None if n > 0 else f"{device_type}: no device"


def run_device_checks(ctx, checks=None) -> list:
    """Run ``checks`` (names; all by default) on ``ctx``: ``[(name, error text or None)]``."""
    results = []
    for name in checks or DEVICE_CHECKS:
        try:
            DEVICE_CHECKS[name](ctx)
            results.append((name, None))
        except Exception as e:   # reported per check
            results.append((name, f"{type(e).__name__}: {e}"))
    return results


def device_conformance_tests(device_type, device_id=0):
    """A pytest test running every check on ``device_type(device_id)``; it skips with the
    device's reason where the device cannot run."""
    import pytest

    @pytest.mark.parametrize("check", list(DEVICE_CHECKS))
    def test_device_conformance(check):
        reason = device_unusable(device_type)
        if reason:
            pytest.skip(reason)
        from mxnext import Context
        DEVICE_CHECKS[check](Context(device_type, device_id))
    return test_device_conformance
