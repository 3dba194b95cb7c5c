"""Samplers draw from the RANDOM resource: reproducible under a seed, right distribution."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import ops as registry
from opsdk import ParamError, ResourceRequest
from opsdk.testing import run_op

N = (20000,)


def draw(op, seed=1, **params):
    return run_op(op, [], params, seed=seed)[0]


@pytest.mark.parametrize("op", ["_random_gamma", "_random_poisson", "_sample_multinomial",
                                "_shuffle", "_sample_uniform"])
def test_samplers_request_the_random_resource(op):
    d = registry.get(op)
    assert d.get_attr("FResourceRequest")(d.parse_params({})) == [ResourceRequest.RANDOM]


@pytest.mark.parametrize("op", ["_random_uniform", "_random_normal", "_random_exponential",
                                "_random_uniform_like", "_random_normal_like"])
def test_mxnet_stream_samplers_request_parallel_random(op):
    """The samplers that draw MXNet's own numbers on a CPU (tests/test_random_streams.py)."""
    d = registry.get(op)
    assert d.get_attr("FResourceRequest")(d.parse_params({})) == \
        [ResourceRequest.PARALLEL_RANDOM]


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


@pytest.mark.parametrize("op, params, message", [
    ("uniform", {"low": 2, "high": 1}, "'_random_uniform': parameter high must be >= low=2.0"),
    ("_random_randint", {"low": 3, "high": 3}, "parameter high must be > low=3, got high=3"),
    ("normal", {"scale": -1}, "'_random_normal': parameter scale must be > 0, got scale=-1.0"),
    ("normal", {"scale": 0}, "scale must be > 0"),
    ("random_exponential", {"lam": 0}, "lam must be > 0"),
    ("random_gamma", {"alpha": 0}, "alpha must be > 0"),
    ("random_gamma", {"beta": -1}, "beta must be > 0"),
    ("random_poisson", {"lam": -0.5}, "lam must be >= 0"),
    ("random_negative_binomial", {"k": -1}, "k must be >= 0"),
    ("random_negative_binomial", {"p": -0.1}, "p must be >= 0"),
    ("random_generalized_negative_binomial", {"mu": -1}, "mu must be >= 0"),
    ("random_generalized_negative_binomial", {"alpha": -1}, "alpha must be >= 0"),
    ("_random_normal_like", {"scale": -2}, "'_random_normal_like': parameter scale must be > 0")])
def test_bad_sampler_values_fail_in_the_kernel_not_at_parse(op, params, message):
    """As MXNet: the parameters parse, the kernel rejects them."""
    registry.get(op).parse_params(params)
    inputs = [np.zeros((2,), np.float32)] if op.endswith("_like") else []
    shape = {} if inputs else {"shape": (2,)}
    with pytest.raises(ParamError, match=message):
        run_op(op, inputs, {**params, **shape})


def test_bad_sampler_value_surfaces_when_the_result_is_read():
    b = mx.nd.random.normal(0, -1, (2, 2))          # returns: the kernel has not run yet
    with pytest.raises(mx.base.MXNetError, match="'_random_normal': parameter scale must be > 0"):
        b.asnumpy()


def test_parse_time_checks_stay():
    with pytest.raises(ParamError, match="high"):
        registry.get("_random_randint").parse_params({"low": 1})
    with pytest.raises(ParamError, match="dtype"):
        registry.get("_random_normal").parse_params({"dtype": "int32"})


def test_sampler_bounds_are_mxnets():
    assert (draw("uniform", low=2, high=2, shape=(3,)) == 2).all()
    assert (draw("random_poisson", lam=0, shape=(3,)) == 0).all()
    assert (draw("random_generalized_negative_binomial", mu=0, shape=(3,)) == 0).all()
    assert (draw("random_negative_binomial", k=0, p=0.5, shape=(3,)) == 0).all()
    assert (draw("random_negative_binomial", k=2, p=1.5, shape=(3,)) == 0).all()
    assert np.isinf(draw("random_negative_binomial", k=2, p=0, shape=(3,))).all()


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


def test_unique_zipfian():
    classes, tries = run_op("_sample_unique_zipfian", [], {"range_max": 1000, "shape": (3, 200)},
                            seed=7)
    assert classes.shape == (3, 200) and classes.dtype == tries.dtype == np.int64
    for row, n in zip(classes, tries):
        assert np.unique(row).size == 200 and row.min() >= 0 and row.max() < 1000
        assert 200 <= n < 1000
    again = run_op("_sample_unique_zipfian", [], {"range_max": 1000, "shape": (3, 200)}, seed=7)
    np.testing.assert_array_equal(again[0], classes)
    everything, tries = run_op("_sample_unique_zipfian", [], {"range_max": 6, "shape": (1, 6)})
    assert sorted(everything[0]) == list(range(6)) and tries[0] >= 6
    with pytest.raises(ParamError, match="num_sampled=7 .* must be <= range_max=6"):
        run_op("_sample_unique_zipfian", [], {"range_max": 6, "shape": (1, 7)})


def test_unique_zipfian_distribution():
    """One draw per row is the base distribution: class c where round(R ** u) - 1 = c."""
    r = 20
    (c, _) = run_op("_sample_unique_zipfian", [], {"range_max": r, "shape": (20000, 1)}, seed=3)
    edges = np.log(np.clip(np.arange(r + 1) + 0.5, 1, r)) / np.log(r)
    np.testing.assert_allclose(np.bincount(c[:, 0], minlength=r) / 20000, np.diff(edges),
                               atol=0.01)


def test_unique_zipfian_shape_from_the_output():
    d = registry.get("_sample_unique_zipfian")
    infer = d.get_attr("FInferShape")
    assert infer(d.parse_params({"range_max": 9}), [], [(4, 3), None])[1] == [(4, 3), (4,)]
    with pytest.raises(mx.base.ShapeError, match="2-D"):
        infer(d.parse_params({"range_max": 9, "shape": (4,)}), [], [None, None])


@pytest.mark.parametrize("kind, args", [("uniform", {"low": -1, "high": 2}),
                                        ("normal", {"loc": 1, "scale": 2}),
                                        ("gamma", {"alpha": 0.3, "beta": 2}),
                                        ("poisson", {"lam": 30}),
                                        ("randint", {"low": -3, "high": 9})])
def test_a_large_output_drawn_in_pieces_holds_the_values_of_one_draw(monkeypatch, kind, args):
    """A large host output is filled piece by piece (no float64 copy of the whole): the same
    values as one draw, and the generator left where one draw leaves it."""
    from mxnext_ops_tensor import random as sampling
    f = getattr(mx.nd.random, kind)

    def draws():
        mx.random.seed(7)
        return f(shape=(5, 11), **args).asnumpy(), f(shape=(3,), **args).asnumpy()
    whole = draws()
    monkeypatch.setattr(sampling, "_CHUNK", 4)
    pieces = draws()
    for a, b in zip(whole, pieces):
        assert a.dtype == b.dtype and np.array_equal(a, b)
