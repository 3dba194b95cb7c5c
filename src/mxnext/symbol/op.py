"""MXNet's ``mx.sym.op``: every registered op by its name (generated on first access)."""

import sys

from ._create import op_attribute


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name)
