"""MXNet's ``mx.sym.contrib``: the ``_contrib_*`` ops under their short names
(``mx.sym.contrib.CTCLoss`` is ``_contrib_CTCLoss``), ``rand_zipfian`` written with
symbols, and the control-flow functions ``foreach``, ``while_loop`` and ``cond``."""

from __future__ import annotations

import math
import sys

from ._control_flow import cond, foreach, while_loop
from ._create import op_attribute
from ._symbol import Symbol
from .random import uniform

__all__ = ["rand_zipfian", "foreach", "while_loop", "cond"]


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name, "_contrib_")


def rand_zipfian(true_classes, num_sampled, range_max):
    """Symbols for ``num_sampled`` classes drawn from [0, range_max) with the approximately
    Zipfian (log-uniform) distribution P(c) = log((c + 2) / (c + 1)) / log(range_max + 1),
    with replacement: (sampled classes as int64, the expected count of each of
    ``true_classes`` among the draws, the same for each sampled class)."""
    if not isinstance(true_classes, Symbol):
        raise TypeError(f"rand_zipfian: true_classes must be a Symbol, got "
                        f"{type(true_classes).__name__}")
    log_range = math.log(range_max + 1)
    draws = uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled = (draws.exp() - 1).astype("int64") % range_max

    def expected_count(classes):
        c = classes.astype("float64")
        return ((c + 2.0) / (c + 1.0)).log() / log_range * num_sampled
    return sampled, expected_count(true_classes), expected_count(sampled)
