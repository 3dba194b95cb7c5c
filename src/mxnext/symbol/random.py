"""MXNet's ``mx.sym.random``: samplers over the ``_random_*`` ops (scalar parameters: one
draw set of ``shape``) and the ``_sample_*`` ops (Symbol parameters: ``shape`` draws per
element); the ``_random_*_like`` ops under their short names (``normal_like``), as MXNet
puts them here."""

from __future__ import annotations

import sys
from numbers import Number

from .._runtime.opfunc import _Null
from ._create import op_attribute, op_function
from ._symbol import Symbol

__all__ = ["uniform", "normal", "randn", "poisson", "exponential", "gamma", "multinomial",
           "negative_binomial", "generalized_negative_binomial", "shuffle", "randint"]


def __getattr__(name):
    if not name.endswith("_like"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return op_attribute(sys.modules[__name__], name, "_random_")


def _sample(kind, params, shape, dtype, kwargs):
    values = list(params.values())
    extra = {k: v for k, v in (("shape", shape), ("dtype", dtype)) if v is not _Null}
    extra.update(kwargs)
    if all(isinstance(v, Symbol) for v in values):
        return op_function(f"_sample_{kind}")(*values, **extra)
    if all(isinstance(v, Number) for v in values):
        return op_function(f"_random_{kind}")(**params, **extra)
    raise TypeError(f"random.{kind}: parameters {', '.join(params)} must be all Symbols or "
                    f"all numbers, got {', '.join(type(v).__name__ for v in values)}")


def uniform(low=0, high=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the uniform distribution on [low, high)."""
    return _sample("uniform", {"low": low, "high": high}, shape, dtype, kwargs)


def normal(loc=0, scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the normal distribution N(loc, scale**2)."""
    return _sample("normal", {"loc": loc, "scale": scale}, shape, dtype, kwargs)


def randn(*shape, **kwargs):
    """Normal samples of the given shape (``loc``/``scale`` keywords allowed)."""
    loc, scale = kwargs.pop("loc", 0), kwargs.pop("scale", 1)
    return normal(loc, scale, shape, **kwargs)


def poisson(lam=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the Poisson distribution with rate ``lam``."""
    return _sample("poisson", {"lam": lam}, shape, dtype, kwargs)


def exponential(scale=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the exponential distribution with mean ``scale`` (a number)."""
    return _sample("exponential", {"lam": 1.0 / scale}, shape, dtype, kwargs)


def gamma(alpha=1, beta=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the gamma distribution with shape ``alpha`` and scale ``beta``."""
    return _sample("gamma", {"alpha": alpha, "beta": beta}, shape, dtype, kwargs)


def negative_binomial(k=1, p=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the negative binomial distribution (``k`` failures, success ``p``)."""
    return _sample("negative_binomial", {"k": k, "p": p}, shape, dtype, kwargs)


def generalized_negative_binomial(mu=1, alpha=1, shape=_Null, dtype=_Null, **kwargs):
    """Samples from the generalized negative binomial distribution (mean ``mu``,
    dispersion ``alpha``)."""
    return _sample("generalized_negative_binomial", {"mu": mu, "alpha": alpha}, shape, dtype,
                   kwargs)


def randint(low, high, shape=_Null, dtype=_Null, **kwargs):
    """Samples integers uniformly from [low, high)."""
    return _sample("randint", {"low": low, "high": high}, shape, dtype, kwargs)


def multinomial(data, shape=_Null, get_prob=True, dtype="int32", **kwargs):
    """Draws from the categorical distributions whose probabilities are the last axis of
    ``data`` (and, with ``get_prob``, the log-probability of each draw)."""
    extra = {"get_prob": get_prob, "dtype": dtype, **kwargs}
    if shape is not _Null:
        extra["shape"] = shape
    return op_function("_sample_multinomial")(data, **extra)


def shuffle(data, **kwargs):
    """``data`` with its first axis randomly permuted."""
    return op_function("_shuffle")(data, **kwargs)
