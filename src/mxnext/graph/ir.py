"""``mx.graph.ir``: the public face of ``mxnext._runtime.graph.ir``.

The graph IR shared by autograd, Symbol and the executor (NNVM's Node/NodeEntry).
"""

from mxnext._runtime.graph.ir import (
    Node,
    NodeEntry,
    IndexedGraph,
    entry,
    make_node,
    variable,
    outputs_of,
)

__all__ = ["Node", "NodeEntry", "IndexedGraph", "entry", "make_node", "variable",
           "outputs_of"]
