"""Samplers draw from the RANDOM resource: reproducible under a seed, right distribution."""

import numpy as np
import pytest

from mxnext import registry
from opsdk import ParamError, ResourceRequest
from opsdk.testing import run_op

N = (20000,)


def draw(op, seed=1, **params):
    return run_op(op, [], params, seed=seed)[0]


@pytest.mark.parametrize("op", ["_random_uniform", "_random_normal", "_random_exponential",
                                "_random_gamma", "_random_poisson", "_sample_multinomial",
                                "_shuffle"])
def test_samplers_request_the_random_resource(op):
    d = registry.get(op)
    assert d.get_attr("FResourceRequest")(d.parse_params({})) == [ResourceRequest.RANDOM]


def test_seed_reproduces_and_streams_advance():
    a, b = draw("uniform", shape=(5,)), draw("uniform", shape=(5,))
    np.testing.assert_array_equal(a, b)
    c = run_op("random_uniform", [], {"shape": (5,)})[0]
    assert not np.array_equal(a, c)
    assert not np.array_equal(a, draw("uniform", seed=2, shape=(5,)))


def test_distributions():
    u = draw("uniform", low=-2, high=3, shape=N)
    assert u.dtype == np.float32 and u.min() >= -2 and u.max() < 3 and abs(u.mean() - 0.5) < 0.05
    n = draw("normal", loc=1, scale=2, shape=N, dtype="float64")
    assert n.dtype == np.float64 and abs(n.mean() - 1) < 0.05 and abs(n.std() - 2) < 0.05
    i = draw("_random_randint", low=-3, high=4, shape=N)
    assert i.dtype == np.int32 and set(np.unique(i)) == set(range(-3, 4))
    e = draw("random_exponential", lam=4, shape=N)
    assert abs(e.mean() - 0.25) < 0.01
    g = draw("random_gamma", alpha=2, beta=0.5, shape=N)
    assert abs(g.mean() - 1.0) < 0.03
    p = draw("random_poisson", lam=3, shape=N)
    assert p.dtype == np.float32 and abs(p.mean() - 3) < 0.05 and (p == np.round(p)).all()


def test_bad_sampler_params():
    with pytest.raises(ParamError, match="low=2.0 must be less than or equal to high=1.0"):
        draw("uniform", low=2, high=1, shape=(2,))
    with pytest.raises(ParamError, match="'_random_randint': low=3 must be less than high=3"):
        draw("_random_randint", low=3, high=3, shape=(2,))
    assert (draw("uniform", low=2, high=2, shape=(3,)) == 2).all()      # as MXNet
    with pytest.raises(ParamError, match="scale"):
        draw("normal", scale=-1, shape=(2,))
    with pytest.raises(ParamError, match="lam"):
        draw("random_exponential", lam=0, shape=(2,))


def test_multinomial():
    probs = np.array([[0.1, 0.2, 0.7], [1.0, 0.0, 0.0]], np.float32)
    s, logp = run_op("sample_multinomial", [probs], {"shape": (5000,), "get_prob": True}, seed=3)
    assert s.shape == (2, 5000) and s.dtype == np.int32
    np.testing.assert_allclose(np.bincount(s[0], minlength=3) / 5000, probs[0], atol=0.03)
    assert (s[1] == 0).all()
    np.testing.assert_allclose(logp, np.log(probs[np.arange(2)[:, None], s]), rtol=1e-6)


def test_shuffle_permutes_rows():
    x = np.arange(20, dtype=np.float32).reshape(10, 2)
    (y,) = run_op("shuffle", [x], seed=5)
    assert not np.array_equal(x, y)
    np.testing.assert_array_equal(np.sort(y[:, 0]), x[:, 0])
    np.testing.assert_array_equal(y[:, 1], y[:, 0] + 1)
