"""Samplers draw from the RANDOM resource: reproducible under a seed, right distribution."""

import numpy as np
import pytest

import mxnext as mx
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


@pytest.mark.parametrize("kind, params", [
    ("uniform", {"low": 2.0, "high": 3.0}), ("normal", {"loc": 5.0, "scale": 0.1}),
    ("gamma", {"alpha": 4.0, "beta": 0.5}), ("exponential", {"scale": 0.5}),
    ("poisson", {"lam": 3.0}), ("negative_binomial", {"k": 3, "p": 0.4}),
    ("generalized_negative_binomial", {"mu": 2.0, "alpha": 0.3})])
def test_frontend_samplers_scalar_array_and_like_forms(kind, params):
    """Scalar parameters, per-element NDArray parameters (MXNet's _sample_* ops) and the
    *_like forms, checked by their sample means."""
    nd = mx.nd
    mean = {"uniform": 2.5, "normal": 5.0, "gamma": 2.0, "exponential": 0.5, "poisson": 3.0,
            "negative_binomial": 3 * 0.6 / 0.4, "generalized_negative_binomial": 2.0}[kind]
    fn, like = getattr(nd.random, kind), getattr(nd.random, f"{kind}_like")
    a = fn(**params, shape=(20000,)).asnumpy()
    assert a.shape == (20000,) and a.dtype == np.float32 and abs(a.mean() - mean) < 0.1 * mean
    arrays = {k: nd.array([v, v]) for k, v in params.items()}
    if kind == "exponential":
        arrays = {"scale": nd.array([0.5, 0.5])}
    b = fn(**arrays, shape=(3, 10000)).asnumpy()
    assert b.shape == (2, 3, 10000) and abs(b.mean() - mean) < 0.1 * mean
    c = like(nd.zeros((200, 100), dtype="float64"), **params).asnumpy()
    assert c.shape == (200, 100) and c.dtype == np.float64 and abs(c.mean() - mean) < 0.1 * mean


def test_array_parameters_vary_per_element():
    b = mx.nd.random.uniform(mx.nd.array([0, 10]), mx.nd.array([1, 11]), shape=500).asnumpy()
    assert (b[0] < 1).all() and (b[1] >= 10).all()
    with pytest.raises(mx.base.ShapeError, match="one shape"):
        mx.nd.random.normal(mx.nd.zeros((2,)), mx.nd.ones((3,)))
    with pytest.raises(TypeError, match="all NDArrays or all scalars"):
        mx.nd.random.normal(mx.nd.zeros((2,)), 1.0)
