"""Imperative automatic differentiation (MXNet's ``mx.autograd``).

While recording, every op whose inputs have history becomes a ``graph.Node``
whose ``info`` keeps only the inputs and outputs its gradient rule reads (as
MXNet's ``save_inputs``/``save_outputs``), so other activations are freed as soon
as the program drops them. ``backward``/``grad`` walk
the recorded graph in reverse, ask each op's ``FGradient`` rule for gradient
nodes (the same rules the symbolic executor uses) and run them through
``invoke``; with ``create_graph`` those runs are recorded too, so gradients
can be differentiated again.
"""

from __future__ import annotations

import threading

from .base import MXNetError
from .graph import Node, NodeEntry, entry
from .opctx import OpReqType, as_req

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Function"]


class _State(threading.local):
    recording = False
    training = False


_state = _State()
_WRITE, _NULL = OpReqType.WRITE_TO, OpReqType.NULL
_CACHE_MAX = 8192          # entries in the compiled-rule cache


class _Info:
    """Saved values of a recorded node; for variables also the gradient buffer and req."""

    __slots__ = ("outputs", "inputs", "specs", "grad", "grad_req")

    def __init__(self, outputs, grad=None, grad_req="null"):
        self.outputs = outputs      # saved outputs (None where not read); None once freed
        self.inputs = None          # saved inputs, the same way
        self.specs = None           # (shape, dtype, ctx) of each output
        self.grad = grad
        self.grad_req = grad_req


# -- scopes ---------------------------------------------------------------------------
def set_recording(is_recording: bool) -> bool:
    """Set recording on/off for this thread; returns the previous state."""
    prev, _state.recording = _state.recording, bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set train/predict mode for this thread; returns the previous state."""
    prev, _state.training = _state.training, bool(train_mode)
    return prev


def is_recording() -> bool:
    return _state.recording


def is_training() -> bool:
    return _state.training


class _Scope:
    def __init__(self, recording, training):
        self._rec, self._train = recording, training
        self._old = None

    def __enter__(self):
        self._old = (_state.recording, _state.training)
        if self._rec is not None:
            _state.recording = self._rec
        if self._train is not None:
            _state.training = self._train
        return self

    def __exit__(self, *exc):
        _state.recording, _state.training = self._old


def record(train_mode=True):
    """``with record():`` records ops for ``backward`` (train mode unless ``train_mode=False``)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """``with pause():`` stops recording inside a ``record`` block."""
    return _Scope(False, train_mode)


def train_mode():
    return _Scope(None, True)


def predict_mode():
    return _Scope(None, False)


# -- variables ------------------------------------------------------------------------
def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Make ``variables`` leaves whose gradients land in ``gradients``."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError(f"mark_variables: {len(variables)} variables, {len(gradients)} "
                         f"gradients and {len(grad_reqs)} grad_reqs must have the same length")
    for v, g, r in zip(variables, gradients, grad_reqs):
        as_req(r)
        node = Node(None, None, ())
        node.info = _Info([v._view(v._shape)], g, r)
        v._ag = NodeEntry(node, 0, 0)


def _check_assignable(arrays) -> None:
    """While recording, arrays already in a graph (variables included) must not be written."""
    for a in arrays:
        e = a._ag
        if e is not None and e.node.info is not None and e.node.info.outputs is not None:
            raise MXNetError("Assigning to NDArrays that are already in a computational graph "
                             "will cause undefined behavior when evaluating gradients. Please "
                             "call backward first to clear the graph or do this outside of a "
                             "record section. Also note that you cannot use inplace operations "
                             "like +=, *=, relu(x, out=x), y[idx]=x, etc inside a record section.")


def _record(op, params, inputs, outputs, saves=None) -> None:
    """Add an op application to the tape if any input has history. ``saves``: what
    ``_saves`` returns plus the outputs' specs, when the caller has them cached."""
    # Plain loops, no comprehensions: this runs once per recorded op.
    entries = []
    history = False
    for a in inputs:
        e = a._ag
        if e is None:
            entries.append(None)
        else:
            entries.append(e)
            history = True
    if not history:
        return
    if saves is None:
        saves = (*_saves(op, params, len(inputs)), [(o._shape, o._dtype, o._ctx) for o in outputs])
    save_in, save_out, specs = saves
    node = Node._new(op, params, entries)
    info = node.info = _Info.__new__(_Info)
    saved = []
    for i, a in enumerate(inputs):
        if entries[i] is None:
            entries[i] = _leaf()
        saved.append(a._alias() if save_in[i] else None)
    info.inputs = saved
    saved = []
    for o, s in zip(outputs, save_out):
        saved.append(o._alias() if s else None)
    info.outputs = saved
    info.specs = specs
    info.grad, info.grad_req = None, "null"
    for i, o in enumerate(outputs):
        o._ag = entry(node, i)


def _leaf():
    """The graph entry of an input without history (a constant)."""
    node = Node._new(None, None, [])
    node.info = _Info(None)
    return entry(node, 0)


def _saves(op, params, n_in):
    """(inputs, outputs) the op's gradient rule reads, as two tuples of bools; nothing for
    an op without a usable rule (differentiating it raises later, naming the op)."""
    if not isinstance(op, _FunctionOp):      # a Function's backward reads what it saved
        try:
            return _recipe(op, params, n_in, (True,) * n_in).reads
        except Exception:
            pass
    return (False,) * n_in, (False,) * op.num_outputs(params)


# -- backward ---------------------------------------------------------------------------
def backward(heads, head_grads=None, retain_graph=False, train_mode=True) -> None:
    """Accumulate d(heads)/d(variable) into every marked variable's gradient buffer."""
    heads, head_grads = _as_lists(heads, head_grads)
    _run_backward(heads, head_grads, None, retain_graph, False, train_mode)


def grad(heads, variables, head_grads=None, retain_graph=None, create_graph=False,
         train_mode=True):
    """Gradients of ``heads`` with respect to ``variables``, returned as a list (also for a
    single variable, as MXNet does) and not written to ``.grad``. With ``create_graph`` the
    result is recorded and can be differentiated."""
    variables = [variables] if isinstance(variables, NDArray) else list(variables)
    for i, v in enumerate(variables):
        if v._ag is None or v._ag.node.op is not None:
            raise MXNetError(f"autograd.grad: variables[{i}] is not a marked variable; call "
                             f"attach_grad() (or mark_variables) before recording")
    heads, head_grads = _as_lists(heads, head_grads)
    if retain_graph is None:
        retain_graph = create_graph
    return _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode)


def _as_lists(heads, head_grads):
    if isinstance(heads, NDArray):
        heads = [heads]
    if head_grads is None or isinstance(head_grads, NDArray):
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


def _topo(entries):
    order, seen = [], set()
    stack = [(e.node, False) for e in entries]
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


def _run_backward(heads, head_grads, variables, retain_graph, create_graph, train_mode):
    for h in heads:
        if h._ag is None:
            raise MXNetError(_NOT_IN_GRAPH)
    order = _topo([h._ag for h in heads])
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
        else:
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

    grads: dict = {}          # node -> per output: list of gradient parts, or None
    for h, g in zip(heads, head_grads):
        _add_part(grads, h._ag.node, h._ag.index, _filled_like(h, 1) if g is None else g)
    prev = (_state.recording, _state.training)
    _state.recording, _state.training = create_graph, train_mode
    try:
        fresh: set = set()        # vars of the chunks this backward's ops created
        for n in reversed(order):
            if n.op is None or n not in needs:
                continue
            slots = grads.pop(n, None) or ()
            if len(slots) == 1 and len(slots[0]) == 1 and len(n.info.specs) == 1:
                ogs = slots[0]                       # the usual case: one gradient part
            else:
                specs = n.info.specs
                ogs = [_sum(slots[i], fresh) if i < len(slots) and slots[i]
                       else _filled(*specs[i], 0) for i in range(len(specs))]
            if isinstance(n.op, _FunctionOp):
                in_grads = n.op.run_backward(ogs)
            else:
                wanted = []
                for e in n.inputs:
                    wanted.append(e.node in needs)
                in_grads = _apply_rule(n, ogs, tuple(wanted), fresh, create_graph)
            for e, g in zip(n.inputs, in_grads):
                if g is not None and e.node in needs:
                    _add_part(grads, e.node, e.index, g)
            if not retain_graph:
                n.info.outputs = n.info.inputs = None
        if variables is not None:
            result = []
            for v in variables:
                result.append(_sum(grads[v._ag.node][0], fresh))
            return result
        totals = [(n, _sum(grads[n][0], fresh)) for n in order
                  if n.op is None and n in grads and n in needs]
        uses: dict = {}           # by memory: one chunk may stand behind several totals
        for _, t in totals:
            uses[t._chunk.var] = uses.get(t._chunk.var, 0) + 1
        for n, t in totals:
            owned = not create_graph and uses[t._chunk.var] == 1 and t._chunk.var in fresh
            _write_grad(n.info, t, owned)
        return []
    finally:
        _state.recording, _state.training = prev


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
    """Input gradients of node ``n`` (None where not ``wanted``) from its ``FGradient``
    rule, run through invoke; the rule's nodes are compiled once per (op, params, wanted)."""
    recipe = _recipe(n.op, n.params, len(n.inputs), wanted)
    info = n.info
    if info.inputs is None:
        raise MXNetError(_NOT_IN_GRAPH)
    if create_graph:        # saved values read with their history, so the run is recorded
        env = [*ogs, *_with_history(info.inputs, n.inputs),
               *_with_history(info.outputs, [entry(n, k) for k in range(len(info.outputs))])]
    else:
        env = [*ogs, *info.inputs, *info.outputs]
    # plain loops, no comprehensions: this runs once per node of every backward pass
    for op, params, refs, req in recipe.steps:
        args = []
        for r in refs:
            args.append(env[r])
        outs = invoke_params(op, params, args, all_outputs=True, req=req)
        for o in outs:
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


class _Recipe:
    """What a gradient rule builds for one (op, params, wanted inputs): ``steps`` of
    ``(op, params, input refs, req)`` in run order and one ``results`` ref per input
    (None where not wanted). A ref indexes the node's backward values in the order: output
    gradients, saved inputs, saved outputs, then each step's outputs as they are made.
    Outputs nothing reads get ``OpReqType.NULL``. ``reads``: which inputs and outputs of the
    node it uses (the ones recording must save)."""

    __slots__ = ("steps", "results", "params", "reads")


_recipes: dict = {}


def _recipe(op, params, n_in, wanted):
    key = (op, id(params), wanted)       # the recipe keeps the params alive
    recipe = _recipes.get(key)
    if recipe is None or recipe.params is not params:
        if len(_recipes) >= _CACHE_MAX:
            _recipes.clear()
        recipe = _recipes[key] = _compile(op, params, n_in, wanted)
    return recipe


def _compile(op, params, n_in, wanted):
    rule = op.get_attr("FGradient")
    if rule is None:
        raise MXNetError(f"Operator {op.name!r} is not differentiable: it has no FGradient "
                         f"rule (provided by {op.provider!r})")
    ins = [Node(None, None, ()) for _ in range(n_in)]
    t = Node(op, params, [NodeEntry(v, 0, 0) for v in ins])
    ogs = [Node(None, None, ()) for _ in range(t.num_outputs())]
    entries = rule(t, [NodeEntry(v, 0, 0) for v in ogs])
    if len(entries) != n_in:
        raise MXNetError(f"Operator {op.name!r}: FGradient returned {len(entries)} entries for "
                         f"{n_in} inputs")
    n_og, n_out = len(ogs), t.num_outputs()
    leaves = {id(v): n_og + j for j, v in enumerate(ins)}
    leaves.update((id(v), i) for i, v in enumerate(ogs))
    steps, index, used = [], {}, set()

    def ref(e):                 # (step, output) for step outputs, else the env index
        node = e.node
        if node is t:
            return n_og + n_in + e.index
        if id(node) in leaves:
            return leaves[id(node)]
        if node.op is None:
            raise MXNetError(f"Operator {op.name!r}: FGradient refers to a variable that is "
                             f"neither an input nor an output gradient of the node")
        k = index.get(id(node))
        if k is None:
            refs = [ref(x) for x in node.inputs]
            k = index[id(node)] = len(steps)
            steps.append((node, refs))
        used.add((k, e.index))
        return (k, e.index)

    results = [ref(e) if (e is not None and w) else None for e, w in zip(entries, wanted)]
    base, start = n_og + n_in + n_out, []      # env index of each step's first output
    for node, _ in steps:
        start.append(base)
        base += node.num_outputs()

    def at(r):
        return start[r[0]] + r[1] if type(r) is tuple else r
    recipe = _Recipe()
    recipe.steps = [(node.op, node.params, [at(r) for r in refs],
                     [_WRITE if (k, i) in used else _NULL for i in range(node.num_outputs())])
                    for k, (node, refs) in enumerate(steps)]
    recipe.results = [None if r is None else at(r) for r in results]
    recipe.params = params
    read = {r for step in recipe.steps for r in step[2]} | set(recipe.results)
    recipe.reads = (tuple(n_og + j in read for j in range(n_in)),
                    tuple(n_og + n_in + k in read for k in range(n_out)))
    return recipe


def _sum(parts, fresh):
    if len(parts) == 1:
        return parts[0]
    total = _invoke_name("add_n", parts, {"num_args": len(parts)})
    fresh.add(total._chunk.var)
    return total


def _write_grad(info, total, owned):
    """Store a variable's gradient; an ``owned`` (fresh, unshared) result with
    ``grad_req='write'`` is handed over to the gradient array instead of copied."""
    req, g = info.grad_req, info.grad
    if req == "add":
        _push_add(total, g)
    elif req != "null":
        if owned and total._sig == g._sig:
            g._chunk, g._offset, g._v = total._chunk, total._offset, None
        else:
            _push_copy(total, g)


# -- custom functions -------------------------------------------------------------------
class _FunctionOp:
    """Stands in for an OpDef on nodes recorded by ``Function``."""

    provider = "autograd.Function"

    def __init__(self, func, n_out, n_in, name=None):
        self.func = func
        self.name = name or type(func).__name__
        self.n_out = n_out
        self.n_in = n_in

    def num_outputs(self, params):
        return self.n_out

    def get_attr(self, key, default=None):
        return default

    def run_backward(self, ogs):
        with pause(train_mode=_state.training):
            res = self.func.backward(*ogs)
        res = list(res) if isinstance(res, (list, tuple)) else [res]
        if len(res) != self.n_in:
            raise MXNetError(f"{self.name}.backward returned {len(res)} gradient(s) for "
                             f"{self.n_in} input(s)")
        return res


class Function:
    """A differentiable function with Python ``forward`` and ``backward``.

    Subclass it, compute outputs in ``forward(*inputs)`` (use
    ``save_for_backward``) and input gradients in ``backward(*output_grads)``.
    """

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        with pause(train_mode=_state.training):
            outputs = self.forward(*inputs)
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if _state.recording:
            _record(_FunctionOp(self, len(outs), len(inputs)), None, list(inputs), outs)
        return outputs


# The NDArray layer imports this module's recording state; bind it back last (circular import).
from .ndarray import NDArray  # noqa: E402
from .ndarray._imperative import invoke_name as _invoke_name, invoke_params  # noqa: E402
from .ndarray.ndarray import _filled, _filled_like, _push_add, _push_copy  # noqa: E402
