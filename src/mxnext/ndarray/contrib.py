"""MXNet's ``mx.nd.contrib``: the ``_contrib_*`` ops under their short names
(``mx.nd.contrib.CTCLoss`` is ``_contrib_CTCLoss``), and MXNet's contrib functions written in
Python: ``isinf``, ``isnan``, ``isfinite``, ``rand_zipfian`` and the control flow
``foreach``, ``while_loop`` and ``cond``; the AdamW updates (``adamw_update``,
``mp_adamw_update`` and their ``multi_`` forms) take ``rescale_grad`` as a number or an
NDArray and hand it to the ``_*adamw_update`` ops as an array on the weight's context."""

from __future__ import annotations

import math
import sys

import numpy as np

from .._runtime import registry
from .._runtime.context import current_context
from . import _internal, random
from ._array import NDArray
from ._control_flow import cond, foreach, while_loop
from ._imperative import op_attribute

__all__ = ["isinf", "isnan", "isfinite", "rand_zipfian", "foreach", "while_loop", "cond",
           "adamw_update", "mp_adamw_update", "multi_adamw_update", "multi_mp_adamw_update"]
registry.require("mx.nd.contrib functions", "abs", "_equal_scalar", "_not_equal_scalar",
                 "broadcast_not_equal", "broadcast_mul", "exp", "log", "Cast", "_mod_scalar", "_full")


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name, "_contrib_")


def isinf(data):
    """1 where ``data`` is +inf or -inf, else 0 (``data``'s dtype)."""
    return data.abs() == np.inf


def isnan(data):
    """1 where ``data`` is NaN, else 0."""
    return data != data


def isfinite(data):
    """1 where ``data`` is neither infinite nor NaN, else 0."""
    return (data == data) * (data.abs() != np.inf)


def rand_zipfian(true_classes, num_sampled, range_max, ctx=None):
    """Draw ``num_sampled`` classes in [0, range_max) from the approximately Zipfian (log-
    uniform) distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1), with
    replacement. Returns (sampled classes as int64, the expected count of each of
    ``true_classes`` among ``num_sampled`` draws, the same for each sampled class)."""
    ctx = ctx or current_context()
    log_range = math.log(range_max + 1)
    draws = random.uniform(0, log_range, shape=(num_sampled,), dtype="float64", ctx=ctx)
    sampled = (draws.exp() - 1).astype("int64") % range_max

    def expected_count(classes):
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled
    return sampled, expected_count(true_classes.as_in_context(ctx)), expected_count(sampled)


def _rescale_array(rescale_grad, ctx):
    if isinstance(rescale_grad, NDArray):
        return rescale_grad.as_in_context(ctx)
    return _internal._full(shape=(1,), value=float(rescale_grad), ctx=ctx, dtype="float32")


def adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, beta1=0.9, beta2=0.999,
                 epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None, **kwargs):
    """One AdamW step (``_adamw_update``); skipped when ``rescale_grad`` is NaN, inf or 0."""
    return _internal._adamw_update(
        weight, grad, mean, var, _rescale_array(rescale_grad, weight.context), lr=lr, eta=eta,
        beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
        out=out, name=name, **kwargs)


def mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, beta1=0.9,
                    beta2=0.999, epsilon=1e-8, wd=0, clip_gradient=-1, out=None, name=None,
                    **kwargs):
    """AdamW on the float32 master copy ``weight32`` (``_mp_adamw_update``)."""
    return _internal._mp_adamw_update(
        weight, grad, mean, var, weight32, _rescale_array(rescale_grad, weight.context), lr=lr,
        eta=eta, beta1=beta1, beta2=beta2, epsilon=epsilon, wd=wd, clip_gradient=clip_gradient,
        out=out, name=name, **kwargs)


def multi_adamw_update(weights, grads, mean, var, rescale_grad, lrs, wds, etas, out=None,
                       name=None, size=0, **kwargs):
    """AdamW over lists of weights, one op call (``_multi_adamw_update``)."""
    data = [a for group in zip(weights, grads, mean, var) for a in group]
    return _internal._multi_adamw_update(
        *data, _rescale_array(rescale_grad, weights[0].context), out=out,
        num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas, name=name, **kwargs)


def multi_mp_adamw_update(weights, grads, mean, var, weights32, rescale_grad, lrs, wds, etas,
                          out=None, name=None, size=0, **kwargs):
    """The multi-precision form of ``multi_adamw_update`` (``_multi_mp_adamw_update``)."""
    data = [a for group in zip(weights, grads, mean, var, weights32) for a in group]
    return _internal._multi_mp_adamw_update(
        *data, _rescale_array(rescale_grad, weights[0].context), out=out,
        num_weights=size or len(weights), lrs=lrs, wds=wds, etas=etas, name=name, **kwargs)
