"""The graph IR and the passes every graph frontend shares (Symbol, the executor,
CachedOp, Gluon): shape/type inference (``infer``), the gradient pass (``gradient``),
common-subexpression elimination (``cse``) and memory planning (``memory``)."""

from .ir import IndexedGraph, Node, NodeEntry, entry, make_node, outputs_of, variable

__all__ = ["Node", "NodeEntry", "IndexedGraph", "entry", "make_node", "variable", "outputs_of"]
