"""MXNet's ``mx.sym._internal``: the underscore ops (``_plus_scalar``, ``_zeros`` ...)."""

import sys

from ._create import op_attribute


def __getattr__(name):
    if not name.startswith("_") or name.startswith("__"):
        raise AttributeError(f"module 'mxnext.symbol._internal' holds only '_' ops, not {name!r}")
    return op_attribute(sys.modules[__name__], name)
