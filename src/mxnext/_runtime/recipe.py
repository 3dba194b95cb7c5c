"""Gradient rules compiled for the imperative tape (autograd).

An op's ``FGradient`` rule builds graph nodes; autograd runs them through
``invoke`` many times, so each rule is compiled once per (op, params, wanted
inputs) into a ``Recipe``: the nodes to run in order, with their inputs as
indices into one list of backward values. ``Recipe.reads`` tells recording
which inputs and outputs of the op the rule reads (MXNet's
``save_inputs``/``save_outputs``), so everything else can be freed early.
"""

from __future__ import annotations

from .base import MXNetError
from .graph import Node, NodeEntry
from .opctx import OpReqType

__all__ = ["Recipe", "recipe", "saves"]

_CACHE_MAX = 8192
_WRITE, _NULL = OpReqType.WRITE_TO, OpReqType.NULL


class Recipe:
    """What a gradient rule builds for one (op, params, wanted inputs): ``steps`` of
    ``(op, params, input refs, req, mirror)`` in run order (``mirror``: for the backward op
    of a stateful op, which runs with the node's state, the input of the node whose
    gradient each of its outputs is; else None) and one ``results`` ref per input
    (None where not wanted). A ref indexes the node's backward values in the order: output
    gradients, saved inputs, saved outputs, then each step's outputs as they are made.
    Outputs nothing reads get ``OpReqType.NULL``. ``reads``: which inputs and outputs of the
    node it uses (the ones recording must save)."""

    __slots__ = ("steps", "results", "params", "reads")


_recipes: dict = {}


def recipe(op, params, n_in, wanted) -> Recipe:
    """The compiled gradient rule of ``op`` for the inputs flagged in tuple ``wanted``."""
    key = (op, id(params), wanted)       # the recipe keeps the params alive
    r = _recipes.get(key)
    if r is None or r.params is not params:
        if len(_recipes) >= _CACHE_MAX:
            _recipes.clear()
        r = _recipes[key] = _compile(op, params, n_in, wanted)
    return r


def saves(op, params, n_in):
    """(inputs, outputs) the op's gradient rule reads, as two tuples of bools; nothing for
    an op without a usable rule (differentiating it raises later, naming the op)."""
    try:
        return recipe(op, params, n_in, (True,) * n_in).reads
    except Exception:
        return (False,) * n_in, (False,) * op.num_outputs(params)


def _compile(op, params, n_in, wanted):
    rule = op.get_attr("FGradient")
    if rule is None:
        raise MXNetError(f"Operator {op.name!r} is not differentiable: it has no FGradient "
                         f"rule (provided by {op.provider!r})")
    ins = [Node(None, None, ()) for _ in range(n_in)]
    t = Node(op, params, [NodeEntry(v, 0, 0) for v in ins])
    n_out = t.num_outputs()
    ogs = [Node(None, None, ()) for _ in range(n_out)]
    entries = rule(t, [NodeEntry(v, 0, 0) for v in ogs])
    if len(entries) != n_in:
        raise MXNetError(f"Operator {op.name!r}: FGradient returned {len(entries)} entries for "
                         f"{n_in} inputs")
    leaves = {id(v): n_out + j for j, v in enumerate(ins)}
    leaves.update((id(v), i) for i, v in enumerate(ogs))
    steps, index, used = [], {}, set()

    def ref(e):                 # (step, output) for step outputs, else the env index
        node = e.node
        if node is t:
            return n_out + n_in + e.index
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
    base, start = 2 * n_out + n_in, []      # env index of each step's first output
    for node, _ in steps:
        start.append(base)
        base += node.num_outputs()

    def at(r):
        return start[r[0]] + r[1] if type(r) is tuple else r
    compiled = Recipe()
    compiled.steps = [(node.op, node.params, [at(r) for r in refs],
                       [_WRITE if (k, i) in used else _NULL for i in range(node.num_outputs())],
                       _mirror(node, t, entries))
                      for k, (node, refs) in enumerate(steps)]
    compiled.results = [None if r is None else at(r) for r in results]
    compiled.params = params
    read = {r for step in compiled.steps for r in step[2]} | set(compiled.results)
    compiled.reads = (tuple(n_out + j in read for j in range(n_in)),
                      tuple(n_out + n_in + k in read for k in range(n_out)))
    return compiled


def _mirror(node, t, entries):
    """For a stateful op's backward ``node``: per output, the index of the input of ``t``
    whose gradient it is (its shape and dtype are that input's)."""
    if t not in (node._control_deps or ()) or node.op.get_attr("FCreateOpState") is not None:
        return None
    if node.op.get_attr("FInferShape") is not None or not t.op.get_attr("FCreateOpState"):
        return None
    of = {e.index: i for i, e in enumerate(entries) if e is not None and e.node is node}
    return tuple(of.get(j) for j in range(node.num_outputs()))
