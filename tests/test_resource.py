"""Resources (RNG, temp space) and mx.random.seed."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext import engine, resource
from mxnext.base import ParamError
from mxnext.engine import NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice
from mxnext.resource import ResourceRequest

RANDOM, TEMP = ResourceRequest.RANDOM, ResourceRequest.TEMP_SPACE


@pytest.fixture(autouse=True)
def _reseed():
    yield
    mx.random.seed(0)


def _draw(ctx, n, req=RANDOM):
    """Push one sampler-like op on the current engine; return its numbers after a wait."""
    res = resource.request(ctx, req)
    out = {}
    engine.get().push_sync(lambda r: out.setdefault("x", res.get_random().random(n)), ctx,
                           mutate_vars=(res.var,))
    engine.get().wait_for_var(res.var, write=True)
    return out["x"]


def test_one_resource_per_context_and_kind():
    r = resource.request(mx.cpu(0), RANDOM)
    assert resource.request(mx.cpu(0), RANDOM) is r
    assert resource.request(mx.cpu(1), RANDOM) is r      # host contexts share it, as in MXNet
    t = resource.request(mx.cpu(0), TEMP)
    assert t is not r and t.var is not r.var
    assert isinstance(r.get_random(), np.random.Generator)


def test_wrong_use_of_a_resource():
    with pytest.raises(TypeError, match="TEMP_SPACE"):
        resource.request(mx.cpu(), RANDOM).get_space((2,), np.float32)
    with pytest.raises(TypeError, match="RANDOM"):
        resource.request(mx.cpu(), TEMP).get_random()


@pytest.mark.parametrize("engine_cls", [NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice],
                         ids=lambda c: c.__name__)
def test_same_seed_same_numbers_on_every_engine(engine_cls):
    with engine.use_engine(engine_cls()) as e:
        mx.random.seed(42)
        a = [_draw(mx.cpu(), 4) for _ in range(3)]
        mx.random.seed(42)
        b = [_draw(mx.cpu(), 4) for _ in range(3)]
        mx.random.seed(43)
        c = _draw(mx.cpu(), 4)
    e.shutdown()
    np.testing.assert_array_equal(np.stack(a), np.stack(b))
    assert not np.array_equal(a[0], c)
    assert not np.array_equal(a[0], a[1])      # the stream moves on between draws
    mx.random.seed(42)
    np.testing.assert_array_equal(_draw(mx.cpu(), 4), a[0])   # and across engines


def test_seed_is_ordered_after_pending_users_of_the_generator():
    # No fast paths: the gated draw must run on a worker (the fast paths may let the pushing
    # thread run it itself, which would then wait for its own later gate.set()).
    e = ThreadedEngine(fast_paths=False)
    try:
        with engine.use_engine(e):
            mx.random.seed(7)
            expect_first = _draw(mx.cpu(), 3)
            expect_after = _draw(mx.cpu(), 3)
            mx.random.seed(7)
            res = resource.request(mx.cpu(), RANDOM)
            gate = threading.Event()
            got = []
            e.push_sync(lambda r: (gate.wait(20), got.append(res.get_random().random(3))),
                        mx.cpu(), mutate_vars=(res.var,))
            assert not got                 # held by the gate: the seed below queues behind
            mx.random.seed(7)              # pushed behind the pending draw
            e.push_sync(lambda r: got.append(res.get_random().random(3)), mx.cpu(),
                        mutate_vars=(res.var,))
            gate.set()
            e.wait_for_all()
        np.testing.assert_array_equal(got[0], expect_first)
        np.testing.assert_array_equal(got[1], expect_first)   # reseeded between the two
        assert not np.array_equal(expect_first, expect_after)
    finally:
        e.shutdown()


def test_host_contexts_share_one_stream():
    """As in MXNet, every cpu(i) draws from one stream, in push order, and seeding any of
    them reseeds it."""
    mx.random.seed(5)
    first, second = _draw(mx.cpu(0), 3), _draw(mx.cpu(1), 3)
    mx.random.seed(5)
    np.testing.assert_array_equal(_draw(mx.cpu(1), 3), first)
    np.testing.assert_array_equal(_draw(mx.cpu(0), 3), second)
    mx.random.seed(5, ctx=mx.cpu(1))
    np.testing.assert_array_equal(_draw(mx.cpu(0), 3), first)


def test_seed_applies_to_contexts_first_used_later():
    mx.random.seed(11)
    first = _draw(mx.cpu(57), 3)
    mx.random.seed(11)
    np.testing.assert_array_equal(_draw(mx.cpu(57), 3), first)
    mx.random.seed(12, ctx=mx.cpu(58))
    x = _draw(mx.cpu(58), 3)
    mx.random.seed(12, ctx=mx.cpu(58))
    np.testing.assert_array_equal(_draw(mx.cpu(58), 3), x)


def test_parallel_random_is_its_own_stream():
    mx.random.seed(3)
    a = _draw(mx.cpu(), 3)
    mx.random.seed(3)
    b = _draw(mx.cpu(), 3, ResourceRequest.PARALLEL_RANDOM)
    assert not np.array_equal(a, b)


def test_seed_arguments_are_checked():
    with pytest.raises(ParamError, match="seed_state must be int, got float"):
        mx.random.seed(1.5)
    with pytest.raises(ParamError, match="ctx"):
        mx.random.seed(1, ctx="gpu")
    with pytest.raises(ValueError):
        mx.random.seed("1")
    mx.random.seed(np.int64(4))
    a = _draw(mx.cpu(), 2)
    mx.random.seed(4)
    np.testing.assert_array_equal(_draw(mx.cpu(), 2), a)


def test_temp_space_is_reused_and_grows():
    res = resource.request(mx.cpu(5), TEMP)
    a = res.get_space((4, 4), np.float32)
    assert a.shape == (4, 4) and a.dtype == np.float32
    a[...] = 3
    b = res.get_space(16, np.int32)                # fits: the same memory
    assert b.shape == (16,) and np.shares_memory(a, b)
    c = res.get_space((1000,), np.float64)         # grows
    assert c.shape == (1000,) and not np.shares_memory(a, c)
    c[...] = 1.0
    d = res.get_space((10,), np.float64)           # smaller again: kept, not shrunk
    assert np.shares_memory(c, d)
    assert mx.storage.stats(mx.cpu(5))["in_use"] >= 8000
