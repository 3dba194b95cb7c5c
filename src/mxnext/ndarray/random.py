"""MXNet's ``mx.nd.random``: samplers over the ``_random_*`` ops (scalar parameters), the
``_sample_*`` ops (NDArray parameters, one draw set per element) and the ``_random_*_like``
ops (the shape and dtype of an array), drawing from the device's RANDOM resource."""

from __future__ import annotations

from .._runtime.opfunc import _Null
from ._imperative import op_function
from ._array import NDArray

__all__ = ["uniform", "normal", "randn", "randint", "poisson", "exponential", "gamma",
           "negative_binomial", "generalized_negative_binomial", "multinomial", "shuffle",
           "uniform_like", "normal_like", "exponential_like", "gamma_like", "poisson_like",
           "negative_binomial_like", "generalized_negative_binomial_like"]


def _sample(kind, params, shape, dtype, ctx, out, kwargs):
    tensors = [v for v in params.values() if isinstance(v, NDArray)]
    extra = {k: v for k, v in (("shape", shape), ("dtype", dtype)) if v is not _Null}
    extra.update(kwargs)
    if tensors:
        if len(tensors) != len(params):
            raise TypeError(f"random.{kind}: parameters {', '.join(params)} must be all "
                            f"NDArrays or all scalars")
        return op_function(f"_sample_{kind}")(*tensors, out=out, **extra)
    if ctx is not None:
        extra["ctx"] = ctx
    if shape is _Null:       # as MXNet's front end: one draw, or as many as ``out`` holds
        extra["shape"] = (1,) if out is None else out.shape
    return op_function(f"_random_{kind}")(out=out, **params, **extra)


def uniform(low=0, high=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from the uniform distribution on [low, high)."""
    return _sample("uniform", {"low": low, "high": high}, shape, dtype, ctx, out, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples from the normal distribution N(loc, scale**2)."""
    return _sample("normal", {"loc": loc, "scale": scale}, shape, dtype, ctx, out, kwargs)


def randn(*shape, **kwargs):
    """Standard-normal samples of the given shape (``loc``/``scale`` keywords allowed)."""
    loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
    return normal(loc, scale, shape, **kwargs)


def randint(low, high, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    """Samples integers uniformly from [low, high)."""
    return _sample("randint", {"low": low, "high": high}, shape, dtype, ctx, out, kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    return _sample("poisson", {"lam": lam}, shape, dtype, ctx, out, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    return _sample("exponential", {"lam": 1.0 / scale}, shape, dtype, ctx, out, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    return _sample("gamma", {"alpha": alpha, "beta": beta}, shape, dtype, ctx, out, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, ctx=None, out=None, **kwargs):
    return _sample("negative_binomial", {"k": k, "p": p}, shape, dtype, ctx, out, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, ctx=None, out=None,
                                  **kwargs):
    return _sample("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, dtype,
                   ctx, out, kwargs)


def multinomial(data, shape=_Null, get_prob=False, out=None, dtype="int32", **kwargs):
    """Draws from the categorical distributions whose probabilities are the last axis of ``data``."""
    extra = {"get_prob": get_prob, "dtype": dtype, **kwargs}
    if shape is not _Null:
        extra["shape"] = shape
    return op_function("_sample_multinomial")(data, out=out, **extra)


def _like(kind, data, params, out, kwargs):
    return op_function(f"_random_{kind}_like")(data, out=out, **params, **kwargs)


def uniform_like(data, low=0, high=1, out=None, **kwargs):
    """Uniform samples on [low, high) with the shape and dtype of ``data``."""
    return _like("uniform", data, {"low": low, "high": high}, out, kwargs)


def normal_like(data, loc=0, scale=1, out=None, **kwargs):
    return _like("normal", data, {"loc": loc, "scale": scale}, out, kwargs)


def exponential_like(data, scale=1, out=None, **kwargs):
    return _like("exponential", data, {"lam": 1.0 / scale}, out, kwargs)


def gamma_like(data, alpha=1, beta=1, out=None, **kwargs):
    return _like("gamma", data, {"alpha": alpha, "beta": beta}, out, kwargs)


def poisson_like(data, lam=1, out=None, **kwargs):
    return _like("poisson", data, {"lam": lam}, out, kwargs)


def negative_binomial_like(data, k=1, p=1, out=None, **kwargs):
    return _like("negative_binomial", data, {"k": k, "p": p}, out, kwargs)


def generalized_negative_binomial_like(data, mu=1, alpha=1, out=None, **kwargs):
    return _like("generalized_negative_binomial", data, {"mu": mu, "alpha": alpha}, out, kwargs)


def shuffle(data, **kwargs):
    """A copy of ``data`` with its first axis randomly permuted."""
    return op_function("_shuffle")(data, **kwargs)
