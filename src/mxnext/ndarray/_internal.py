"""MXNet's ``mx.nd._internal``: the underscore ops (``_plus_scalar``, ``_zeros`` ...)."""

import sys

from ._imperative import op_attribute


def __getattr__(name):
    if not name.startswith("_") or name.startswith("__"):
        raise AttributeError(f"module 'mxnext.ndarray._internal' holds only '_' ops, not {name!r}")
    return op_attribute(sys.modules[__name__], name)
