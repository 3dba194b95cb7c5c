"""The imperative backward pass (MXNet's ``Imperative::Backward``), under ``mx.autograd``.

Walks the graph the tape recorded (``mxnext._runtime.tape``) in reverse, runs each op's compiled
``FGradient`` rule (``mxnext._runtime.recipe``, the same rules the symbolic executor uses)
through ``invoke``, and sums the parts; with ``create_graph`` those runs are recorded
too, so gradients can be differentiated again.
"""

from __future__ import annotations

from .._runtime import recipe as _recipe, registry
from .._runtime.tape import FunctionOp
from .._runtime.tape import state as _state
from .._runtime.base import MXNetError
from .._runtime.graph import entry
from ._copies import filled, filled_like, push_add, push_copy
from ._imperative import array_class, invoke_name, invoke_params

__all__ = ["backward", "grad"]
registry.require("autograd's gradient sums", "add_n")


def backward(heads, head_grads=None, retain_graph=False, train_mode=True) -> None:
    """Accumulate d(heads)/d(variable) into every marked variable's gradient buffer."""
    heads, head_grads = _as_lists(heads, head_grads)
    _run_backward(heads, head_grads, None, retain_graph, False, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned as a list (also for a
    single variable, as MXNet does) and not written to ``.grad``. With ``create_graph`` the
    result is recorded and can be differentiated."""
    variables = [variables] if isinstance(variables, array_class()) else list(variables)
    for i, v in enumerate(variables):
        if v._ag is None or v._ag.node.op is not None:
            raise MXNetError(f"autograd.grad: variables[{i}] is not a marked variable; call "
                             f"attach_grad() (or mark_variables) before recording")
    heads, head_grads = _as_lists(heads, head_grads)
    if retain_graph is None:
        retain_graph = create_graph
    return _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode)


def _as_lists(heads, head_grads):
    if isinstance(heads, array_class()):
        heads = [heads]
    if head_grads is None or isinstance(head_grads, array_class()):
        head_grads = [head_grads] * len(heads) if head_grads is None else [head_grads]
    if len(heads) != len(head_grads):
        raise MXNetError(f"autograd.backward: {len(heads)} heads but {len(head_grads)} head_grads")
    for i, (h, g) in enumerate(zip(heads, head_grads)):
        if g is not None and (g.shape != h.shape or g.context != h.context):
            raise MXNetError(f"autograd.backward: head_grads[{i}] is {g.shape} on {g.context} "
                             f"but heads[{i}] is {h.shape} on {h.context}; they must match")
    return list(heads), list(head_grads)


_NOT_IN_GRAPH = ("Cannot differentiate node because it is not in a computational graph. You need "
                 "to set is_recording to true or use autograd.record() to save computational "
                 "graphs for backward. If you want to differentiate the same graph twice, you "
                 "need to pass retain_graph=True to backward.")


def _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode):
    order = _recorded_graph(heads)
    needs = _nodes_to_differentiate(order, variables)
    grads = _seed(heads, head_grads)
    fresh = set()        # vars of the chunks this backward's ops created
    prev = (_state.recording, _state.training)
    _state.recording, _state.training = create_graph, train_mode
    try:
        for n in reversed(order):
            if n.op is not None and n in needs:
                _backprop(n, grads, needs, fresh, create_graph)
                if not retain_graph:
                    n.info.outputs = n.info.inputs = None
        if variables is not None:     # reachable, yet every path's gradient was zero: zeros
            return [_sum(grads[v._ag.node][0], fresh) if v._ag.node in grads
                    else filled_like(v, 0) for v in variables]
        _write_leaf_grads(order, grads, needs, fresh, create_graph)
        return []
    finally:
        _state.recording, _state.training = prev


def _recorded_graph(heads):
    """Every node the heads depend on, inputs before the nodes reading them."""
    for h in heads:
        if h._ag is None:
            raise MXNetError(_NOT_IN_GRAPH)
    order, seen = [], set()
    stack = [(h._ag.node, False) for h in heads]
    while stack:
        n, done = stack.pop()
        if done:
            order.append(n)
            continue
        if n in seen:
            continue
        seen.add(n)
        stack.append((n, True))
        for e in n.inputs:
            if e.node not in seen:
                stack.append((e.node, False))
    return order


def _nodes_to_differentiate(order, variables):
    """The wanted variables (``variables``, else every leaf with a gradient buffer) and the
    nodes on a path from one of them to the heads."""
    if variables is not None:
        wanted = {v._ag.node for v in variables}
    else:
        wanted = {n for n in order
                  if n.op is None and n.info.grad_req != "null" and n.info.grad is not None}
        if not wanted:
            raise MXNetError("There are no inputs in computation graph that require gradients "
                             "(attach_grad() with grad_req 'write' or 'add' on an input used "
                             "while recording)")
    needs = set()
    for n in order:
        if n.op is None:
            if n in wanted:
                needs.add(n)
            continue
        for e in n.inputs:
            if e.node in needs:
                if n.info is None or n.info.outputs is None:
                    raise MXNetError(_NOT_IN_GRAPH)
                needs.add(n)
                break
    if variables is not None:
        for i, v in enumerate(variables):
            if v._ag.node not in needs:
                raise MXNetError(f"Cannot differentiate with respect to variables[{i}] because "
                                 f"it is unreachable from the heads")
    return needs


def _seed(heads, head_grads):
    """The gradient bookkeeping: node -> per output, the list of gradient parts; the heads'
    start as ones (or the head gradients given)."""
    grads = {}
    for h, g in zip(heads, head_grads):
        _add_part(grads, h._ag.node, h._ag.index, filled_like(h, 1) if g is None else g)
    return grads


def _backprop(n, grads, needs, fresh, create_graph):
    """Pass the summed output gradients of node ``n`` back to the inputs that need them."""
    slots = grads.pop(n, None) or ()
    specs = n.info.specs
    if len(slots) == 1 and len(slots[0]) == 1 and len(specs) == 1:
        ogs = slots[0]                       # the usual case: one gradient part
    else:
        ogs = [_sum(slots[i], fresh) if i < len(slots) and slots[i] else filled(*specs[i], 0)
               for i in range(len(specs))]
    if isinstance(n.op, FunctionOp):
        in_grads = n.op.run_backward(ogs)
        if n.op.fresh_results:              # new arrays: a gradient buffer may take them over
            for g in in_grads:
                if g is not None:
                    fresh.add(g._chunk.var)
    else:
        wanted = []                          # a plain loop: this runs once per node
        for e in n.inputs:
            wanted.append(e.node in needs)
        in_grads = _apply_rule(n, ogs, tuple(wanted), fresh, create_graph)
    for e, g in zip(n.inputs, in_grads):
        if g is not None and e.node in needs:
            _add_part(grads, e.node, e.index, g)


def _write_leaf_grads(order, grads, needs, fresh, create_graph):
    """Store each wanted variable's total gradient in its buffer (see ``_write_grad``)."""
    totals = [(n, _dense_for(n.info.grad, _sum(grads[n][0], fresh))) for n in order
              if n.op is None and n in grads and n in needs]
    uses: dict = {}           # by memory: one chunk may stand behind several totals
    for _, t in totals:
        if t.stype == "default":
            uses[t._chunk.var] = uses.get(t._chunk.var, 0) + 1
    for n, t in totals:
        owned = (not create_graph and t.stype == "default" and uses[t._chunk.var] == 1
                 and t._chunk.var in fresh)
        _write_grad(n.info, t, owned)


def _dense_for(buffer, total):
    """A sparse total (a sparse kernel's gradient) as a dense buffer takes it."""
    if total.stype != "default" and buffer.stype == "default":
        return total.tostype("default")
    return total


def _add_part(grads, node, index, g):
    slots = grads.get(node)
    if slots is None:
        slots = grads[node] = [None] * (index + 1)
    elif len(slots) <= index:
        slots.extend([None] * (index + 1 - len(slots)))
    parts = slots[index]
    if parts is None:
        slots[index] = [g]
    else:
        parts.append(g)


def _apply_rule(n, ogs, wanted, fresh, create_graph):
    """Input gradients of node ``n`` (None where not ``wanted``) from its compiled
    ``FGradient`` rule, run through invoke."""
    recipe = _recipe.recipe(n.op, n.params, len(n.inputs), wanted)
    info = n.info
    if info.inputs is None:
        raise MXNetError(_NOT_IN_GRAPH)
    if create_graph:        # saved values read with their history, so the run is recorded
        env = [*ogs, *_with_history(info.inputs, n.inputs),
               *_with_history(info.outputs, [entry(n, k) for k in range(len(info.outputs))])]
    else:
        env = [*ogs, *info.inputs, *info.outputs]
    for op, params, refs, req, mirror in recipe.steps:   # plain loops: once per node
        args = []
        for r in refs:
            args.append(env[r])
        if mirror is None:
            outs = invoke_params(op, params, args, all_outputs=True, req=req)
        else:                               # a stateful op's backward (see _recipe)
            state, shapes, dtypes = info.state
            outs = invoke_params(op, params, args, all_outputs=True, req=req, state=state,
                                 out_specs=[(shapes[i], dtypes[i]) for i in mirror])
        for o in outs:
            if o.stype == "default":       # a sparse kernel's result owns no chunk
                fresh.add(o._chunk.var)
        env += outs
    results = []
    for r in recipe.results:
        results.append(None if r is None else env[r])
    return results


def _with_history(saved, entries):
    out = []
    for v, e in zip(saved, entries):
        if v is not None:
            v = v._alias()
            v._ag = e
        out.append(v)
    return out


def _sum(parts, fresh):
    if len(parts) == 1:
        return parts[0]
    total = invoke_name("add_n", parts, {"num_args": len(parts)})
    if total.stype == "default":
        fresh.add(total._chunk.var)
    return total


def _write_grad(info, total, owned):
    """Store a variable's gradient; an ``owned`` (fresh, unshared) result with
    ``grad_req='write'`` is handed over to the gradient array instead of copied."""
    req, g = info.grad_req, info.grad
    if req != "null":
        info.fresh = True
    if g.stype != "default":          # a sparse buffer: the total compressed to its type
        if req != "null":
            g._take(total if req == "write" else g + total)
    elif req == "add":
        push_add(total, g)
    elif req != "null":
        if owned and total._sig == g._sig:
            g._chunk, g._offset, g._v = total._chunk, total._offset, None
        else:
            push_copy(total, g)
