"""MXNet's ``mx.nd.op``: every registered op by its public name (generated on first access)."""

import sys

from ._imperative import op_attribute


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name)
