"""Common subexpression elimination over a copy of a forward graph (MXNet's
``EliminateCommonExpr``, on by default, ``MXNET_ELIMINATE_COMMON_EXPR=0`` turns it off).

Two op nodes with the same inputs, op, parameters and attributes compute the same values,
so readers of the second read the first instead, until no such pair is left. Not merged:
ops that mutate inputs (``FMutateInputs``) or keep state (``FCreateOpState``), and ops
requesting a resource other than temp space (random numbers), unless their
``THasDeterministicOutput`` says otherwise. Outputs that become one entry twice get a
``_copy`` each after the first, so every output stays its own array.
"""

from __future__ import annotations

import os

from . import IndexedGraph, Node, NodeEntry, make_node
from ..resource import ResourceRequest

__all__ = ["enabled", "eliminate_common_expr"]


def enabled() -> bool:
    return os.environ.get("MXNET_ELIMINATE_COMMON_EXPR", "1").lower() not in ("0", "false")


def eliminate_common_expr(outputs) -> list:
    """New output entries over a copy of the graph of ``outputs`` with common
    subexpressions merged (the Symbol's own nodes are left as they are)."""
    outputs = _copied(outputs)
    while True:
        pairs = _common_nodes(outputs)
        if not pairs:
            break
        outputs = _merged(outputs, pairs)
    return _distinct(outputs)


def _copied(outputs):
    copies = {}
    for node in IndexedGraph(outputs).nodes:      # inputs and control deps come first
        c = Node(node.op, node.params, [NodeEntry(copies[e.node], e.index, e.version)
                                         for e in node.inputs], node.name, node._attrs)
        if node._control_deps:
            c.control_deps.extend(copies[d] for d in node._control_deps)
        copies[node] = c
    return [NodeEntry(copies[e.node], e.index, e.version) for e in outputs]


def _mergeable(op, params) -> bool:
    if op.get_attr("FMutateInputs") is not None or op.get_attr("FCreateOpState") is not None:
        return False
    deterministic = op.get_attr("THasDeterministicOutput")
    if deterministic is not None:
        return bool(deterministic)
    rr = op.get_attr("FResourceRequest")
    return rr is None or all(r == ResourceRequest.TEMP_SPACE for r in rr(params))


def _common_nodes(outputs):
    """(kept, replaced) pairs of equal nodes, grouped by their inputs as MXNet does."""
    groups: dict = {}
    for node in IndexedGraph(outputs).nodes:
        if node.inputs:
            key = tuple((id(e.node), e.index) for e in node.inputs)
            groups.setdefault(key, []).append(node)
    pairs = []
    for nodes in groups.values():
        replaced = set()
        for i, n in enumerate(nodes):
            if i in replaced or not _mergeable(n.op, n.params):
                continue
            for j in range(i + 1, len(nodes)):
                m = nodes[j]
                if j not in replaced and m.op is n.op and m.params == n.params \
                        and (m._attrs or {}) == (n._attrs or {}):
                    replaced.add(j)
                    pairs.append((n, m))
    return pairs


def _merged(outputs, pairs):
    src = {id(replaced): kept for kept, replaced in pairs}
    for node in IndexedGraph(outputs).nodes:
        node.inputs = [NodeEntry(src.get(id(e.node), e.node), e.index, e.version)
                       for e in node.inputs]
        if node._control_deps:
            node._control_deps = [src.get(id(d), d) for d in node._control_deps]
    for kept, replaced in pairs:
        if replaced._control_deps:
            kept.control_deps.extend(replaced._control_deps)
    return [NodeEntry(src.get(id(e.node), e.node), e.index, e.version) for e in outputs]


def _distinct(outputs):
    seen: dict = {}
    out = []
    for e in outputs:
        key = (id(e.node), e.index)
        if key not in seen:
            seen[key] = 0
            out.append(e)
            continue
        copy = make_node("_copy", [e], name=f"{e.node.name}_{seen[key]}_copy")
        seen[key] += 1
        out.append(NodeEntry(copy, 0, 0))
    return out
