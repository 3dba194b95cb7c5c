"""Graphs holding an op whose output shapes depend on input values (``FInferShapeFromData``,
as boolean_mask): no shape plan exists before the values do, so a CachedOp runs them node
by node as imperative calls (MXNet's dynamic-shape CachedOp does the same), each sized when
it runs and each recorded on the autograd tape, which then gives the backward pass."""

from __future__ import annotations

from .._runtime.graph import IndexedGraph
from ..ndarray._imperative import invoke_from_data, invoke_params

__all__ = ["has_dynamic_shape", "run_nodes"]


def has_dynamic_shape(outputs) -> bool:
    """Whether the graph of ``outputs`` (entries) holds an op sized by its input values."""
    return any(n.op is not None and n.op.get_attr("FInferShapeFromData") is not None
               for n in IndexedGraph(outputs).nodes)


def run_nodes(outputs, arrays):
    """The arrays of ``outputs`` (entries), running their graph on ``arrays`` (variable name
    -> NDArray) one imperative call per node."""
    g = IndexedGraph(outputs)
    values = [None] * g.num_entries
    for nid, node in enumerate(g.nodes):
        if node.op is None:
            values[g.entry_id(nid)] = arrays[node.name]
            continue
        inputs = [values[e] for e in g.input_entries(nid)]
        run = invoke_from_data if node.op.get_attr("FInferShapeFromData") else invoke_params
        for k, out in enumerate(run(node.op, node.params, inputs, all_outputs=True)):
            values[g.entry_id(nid, k)] = out
    return [values[e] for e in g.outputs]
