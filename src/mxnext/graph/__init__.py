"""``mx.graph``: the public face of ``mxnext._runtime.graph``.

The graph IR and the passes every graph frontend shares (Symbol, the executor, CachedOp,
Gluon): shape/type inference (``infer``), the gradient pass (``gradient``), common-
subexpression elimination (``cse``) and memory planning (``memory``).
"""

from mxnext._runtime.graph import (
    Node,
    NodeEntry,
    IndexedGraph,
    entry,
    make_node,
    variable,
    outputs_of,
)

from . import ir, infer, gradient, cse, memory  # noqa: F401  (mx.graph.<submodule>)

__all__ = ["Node", "NodeEntry", "IndexedGraph", "entry", "make_node", "variable",
           "outputs_of"]
