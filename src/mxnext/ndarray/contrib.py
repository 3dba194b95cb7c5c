"""MXNet's ``mx.nd.contrib``: the ``_contrib_*`` ops under their short names
(``mx.nd.contrib.CTCLoss`` is ``_contrib_CTCLoss``), and MXNet's contrib functions written in
Python: ``isinf``, ``isnan``, ``isfinite``, ``rand_zipfian`` and the control flow
``foreach``, ``while_loop`` and ``cond``."""

from __future__ import annotations

import math
import sys

import numpy as np

from .._runtime import registry
from .._runtime.context import current_context
from . import random
from ._control_flow import cond, foreach, while_loop
from ._imperative import op_attribute

__all__ = ["isinf", "isnan", "isfinite", "rand_zipfian", "foreach", "while_loop", "cond"]
registry.require("mx.nd.contrib functions", "abs", "_equal_scalar", "_not_equal_scalar",
                 "broadcast_not_equal", "broadcast_mul", "exp", "log", "Cast", "_mod_scalar")


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
