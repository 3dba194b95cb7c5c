"""MXNet's ``mx.sym.sparse``: the symbol function of every op (``mx.sym.sparse.dot``), and of
MXNet's sparse-only ops under their short names (``retain`` is ``_sparse_retain``).
Executors run sparse arrays through the storage fallback: the graph computes on dense
copies and its outputs are dense."""

import sys

from ._create import op_attribute


def __getattr__(name):
    module = sys.modules[__name__]
    try:
        return op_attribute(module, name)
    except AttributeError:
        return op_attribute(module, name, "_sparse_")
