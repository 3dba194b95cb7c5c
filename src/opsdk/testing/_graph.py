"""Evaluate an op's ``FGradient`` graph with the harness (no autograd, no executor)."""

from __future__ import annotations

import numpy as np

from mxnext.base import MXNetError

from ._harness import op_def, parse, run_op

__all__ = ["eval_gradients"]


def _evaluate(entry, values):
    """Value of ``entry`` (a NodeEntry); ``values`` maps Node -> list of arrays."""
    stack = [entry.node]
    while stack:
        node = stack[-1]
        if node in values:
            stack.pop()
            continue
        if node.op is None:
            raise MXNetError(f"gradient graph reads unknown variable {node.name!r}")
        missing = [e.node for e in node.inputs if e.node not in values]
        if missing:
            stack.extend(missing)
            continue
        stack.pop()
        inputs = [values[e.node][e.index] for e in node.inputs]
        values[node] = run_op(node.op, inputs, node.params)
    return values[entry.node][entry.index]


def eval_gradients(op, inputs, out_grads, params=None, outputs=None, seed=None):
    """Input gradients of ``op`` at ``inputs`` for head gradients ``out_grads``.

    Builds the forward node, asks the op's ``FGradient`` for the backward
    entries and evaluates them in topological order. Returns one array per
    input, or None where the rule gives no gradient.
    """
    from mxnext.graph import NodeEntry, make_node, variable
    opdef = op_def(op)
    p = parse(opdef, params)
    fgrad = opdef.get_attr("FGradient")
    if fgrad is None:
        raise MXNetError(f"Operator {opdef.name!r} has no FGradient")
    in_vars = [variable(f"in{i}") for i in range(len(inputs))]
    node = make_node(opdef, [NodeEntry(v, 0) for v in in_vars], p, name=opdef.name)
    if outputs is None:
        outputs = run_op(opdef, [a.copy() for a in inputs], p, seed=seed)
    out_grads = list(out_grads) + [np.zeros_like(o) for o in outputs[len(out_grads):]]
    og_vars = [variable(f"ograd{i}") for i in range(len(out_grads))]
    values = {v: [a] for v, a in zip(in_vars, inputs)}
    values.update({v: [g] for v, g in zip(og_vars, out_grads)})
    values[node] = list(outputs)
    entries = fgrad(node, [NodeEntry(v, 0) for v in og_vars])
    if len(entries) != len(inputs):
        raise MXNetError(f"Operator {opdef.name!r}: FGradient returned {len(entries)} entries "
                         f"for {len(inputs)} inputs")
    grads = []
    for e in entries:
        grads.append(None if e is None else np.asarray(_evaluate(e, values)))
    return grads
