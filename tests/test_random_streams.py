"""MXNet's CPU random streams: after mx.random.seed, the same calls give MXNet 1.9.1's numbers
(tests/fixtures/random_streams: written by MXNet; uniforms, integers, Dropout masks and
initial weights bit for bit, 99% of normals too and the rest within a few units in the last
place)."""

import os
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext._runtime.parallel_random import ParallelRandom, base_seed

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "random_streams")
sys.path.insert(0, HERE)
from calls import CALLS, kept  # noqa: E402

NOT_BIT_EXACT = {"normal_f32", "normal_f64", "normal_large", "normal_ctx_seed", "init_normal"}


@pytest.fixture(scope="module")
def replayed():
    """Every call of the fixture, in its order, in this process (after the ones before)."""
    return {name: kept(call(mx)) for name, call in CALLS}


@pytest.mark.parametrize("name", [n for n, _ in CALLS])
def test_mxnet_numbers(replayed, name):
    ref = np.load(os.path.join(HERE, "ref.npz"))[name]
    mine = replayed[name]
    assert mine.dtype == ref.dtype and mine.shape == ref.shape
    if name in NOT_BIT_EXACT:      # libstdc++'s logf against numpy's log, one ulp, scaled
        np.testing.assert_array_max_ulp(mine, ref, maxulp=4)
        assert np.mean(mine == ref) > 0.99
    else:
        np.testing.assert_array_equal(mine, ref)


def test_unseeded_is_seed_zero():
    """MXNet's states start as after seed(0): a fresh process draws those numbers."""
    code = ("import mxnext as mx; print(mx.nd.random.uniform(shape=(4,)).asnumpy().tolist()); "
            "mx.random.seed(0); print(mx.nd.random.uniform(shape=(4,)).asnumpy().tolist())")
    import subprocess
    lines = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                           check=True).stdout.splitlines()
    assert lines[0] == lines[1]


def test_sizes_follow_launch_rng():
    """A kernel over n values: min(ceil(n / 64), 1024) states, ceil(n / states) values each,
    the last run shorter."""
    assert ParallelRandom.sizes(10) == [10]
    assert ParallelRandom.sizes(130) == [44, 44, 42]
    sizes = ParallelRandom.sizes(70001)     # 1024 runs of 69 would pass the end: 1015 draw
    assert len(sizes) == 1015 and sizes[-1] == 35 and set(sizes[:-1]) == {69}
    assert ParallelRandom.sizes(0) == []


def test_reseed_with_same_seed_restarts():
    streams = ParallelRandom(base_seed(9))
    first = streams.uniform(500)
    streams.reseed(base_seed(9))
    np.testing.assert_array_equal(streams.uniform(500), first)
    assert not np.array_equal(streams.uniform(500), first)


def test_seed_wraps_like_a_c_int():
    assert base_seed(-1) == (0xFFFFFFFF * 127) & 0xFFFFFFFF
    assert base_seed(1 << 32) == 0


def test_normal_draws_no_value_past_its_place():
    """Normals drawn in one call or in pieces of whole blocks use the same raw values: each
    state is left where MXNet leaves it, so the uniforms after them agree too."""
    a, b = ParallelRandom(5), ParallelRandom(5)
    a.normal(64)
    b.normal(64)
    np.testing.assert_array_equal(a.uniform(64), b.uniform(64))
    c = ParallelRandom(5)
    values = c.normal(64)
    assert np.all(np.isfinite(values)) and abs(values.mean()) < 0.5


def test_streams_live_on_the_host_parallel_random_resource():
    """Only a host context's PARALLEL_RANDOM resource holds them (every cpu(i) shares it);
    a device's samplers draw from its own generator."""
    from mxnext._runtime.resource import ResourceRequest, request
    streams = request(mx.cpu(), ResourceRequest.PARALLEL_RANDOM).get_parallel_random()
    assert isinstance(streams, ParallelRandom)
    assert request(mx.cpu(3), ResourceRequest.PARALLEL_RANDOM).get_parallel_random() is streams
    for kind in (ResourceRequest.RANDOM, ResourceRequest.TEMP_SPACE):
        with pytest.raises(TypeError, match="PARALLEL_RANDOM"):
            request(mx.cpu(), kind).get_parallel_random()
