"""MXNet's ``mx.sym.linalg``: the ``_linalg_*`` ops under their short names
(``mx.sym.linalg.gemm2`` is ``_linalg_gemm2``), from whichever plugin defines them."""

import sys

from ._create import op_attribute


def __getattr__(name):
    return op_attribute(sys.modules[__name__], name, "_linalg_")
