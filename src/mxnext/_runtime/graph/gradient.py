"""The gradient pass (NNVM's ``Gradient``): the backward graph of a forward graph, built from
each op's ``FGradient`` rule.

Walking the forward nodes in reverse, a node's output gradient is the sum (``add_n``) of the
parts its readers passed back, or zeros where none did; its rule turns those into gradient
entries for its inputs. Only nodes on a path from a wanted variable to an output take
part, and a rule reads only what it needs, so forward values no gradient reads are not
kept for backward (the memory planner frees them early). Head gradients enter as
variables, one per output; a loss op's rule ignores its own, so no array is needed for it.
"""

from __future__ import annotations

from ..base import MXNetError
from . import IndexedGraph, NodeEntry, make_node

__all__ = ["gradient"]


def gradient(outputs, head_grads, wrt):
    """Gradient entries of ``outputs`` (NodeEntry list) with respect to the variable nodes
    ``wrt``, given one head-gradient entry per output. A variable no output depends on gets
    a ``zeros_like`` entry, as in MXNet."""
    forward = IndexedGraph(outputs).nodes
    needs = _on_a_path(forward, set(wrt))
    parts: dict = {}
    for out, head in zip(outputs, head_grads):
        parts.setdefault((out.node, out.index), []).append(head)
    for node in reversed(forward):
        if node.op is not None and node in needs:
            _backprop(node, parts, needs)
    result = []
    for x in wrt:
        got = _nonzero(parts.get((x, 0)))
        result.append(_summed(got, x.name) if got else
                      NodeEntry(make_node("zeros_like", [NodeEntry(x, 0, 0)],
                                          name=f"{x.name}_zero_grad"), 0, 0))
    return result


_ZERO_OPS = ("zeros_like", "_zeros")


def _nonzero(entries):
    """The gradient parts that are not known zeros (NNVM's ``zero_ops``)."""
    return [e for e in entries or () if e.node.op is None or e.node.op.name not in _ZERO_OPS]


def _on_a_path(forward, wrt):
    """Nodes that depend on a node in ``wrt`` (those included)."""
    needs = set()
    for node in forward:
        if node in wrt or any(e.node in needs for e in node.inputs):
            needs.add(node)
    return needs


def _backprop(node, parts, needs):
    """Pass ``node``'s output gradients back through its rule; a node whose output gradients
    are all zero passes nothing (its inputs' gradients are zero: no backward nodes, and its
    forward values need not be kept), as NNVM's gradient pass does."""
    got = [_nonzero(parts.get((node, i))) for i in range(node.num_outputs())]
    if not any(got):
        return
    ograds = []
    for i, g in enumerate(got):
        ograds.append(_summed(g, f"{node.name}_{i}") if g else NodeEntry(
            make_node("zeros_like", [NodeEntry(node, i, 0)], name=f"{node.name}_zero_ograd{i}"),
            0, 0))
    rule = node.op.get_attr("FGradient")
    if rule is None:
        raise MXNetError(f"Operator {node.op.name!r} (node {node.name!r}) is not differentiable: "
                         f"it has no FGradient rule (provided by {node.op.provider!r})")
    grads = rule(node, ograds)
    if len(grads) != len(node.inputs):
        raise MXNetError(f"Operator {node.op.name!r}: FGradient returned {len(grads)} entries "
                         f"for {len(node.inputs)} inputs")
    _name_new_nodes(grads, node, ograds)
    for e, g in zip(node.inputs, grads):
        if g is not None and e.node in needs:
            parts.setdefault((e.node, e.index), []).append(g)


def _summed(entries, what):
    if len(entries) == 1:
        return entries[0]
    total = make_node("add_n", list(entries), {"num_args": len(entries)}, name=f"{what}_sum_grad")
    return NodeEntry(total, 0, 0)


def _name_new_nodes(grads, node, ograds):
    """Name the nodes a rule made (they come nameless) after their forward node, as MXNet
    names them: ``fc1_backward``, then ``fc1_backward1`` ..."""
    known = {e.node for e in ograds} | {e.node for e in node.inputs} | {node}
    todo = [g.node for g in grads if g is not None]
    made = []
    while todo:
        n = todo.pop()
        if n in known or n.name:
            continue
        known.add(n)
        made.append(n)
        todo.extend(e.node for e in n.inputs)
    for k, n in enumerate(reversed(made)):
        n.name = f"{node.name}_backward" + (str(k) if k else "")
