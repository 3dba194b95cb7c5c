"""The registered control-flow ops ``_foreach``, ``_while_loop`` and ``_cond`` (and their
``_backward_*``): nodes that carry their body graphs (MXNet's ``subgraphs``) in a parameter,
as ``mx.sym.contrib.foreach`` / ``while_loop`` / ``cond`` build them; and ``_CachedOp``, a
graph given as symbol JSON run as one operator (MXNet's ``_CachedOp(*args, subgraph=js)``,
and a hybridized block's call in ``autograd.get_symbol``).

Shapes and dtypes are inferred through the body graphs. Running is ``_control_flow_run``'s:
each application runs its bodies through ``CachedOp`` step by step, on a custom-op thread
(as ``Custom`` runs Python), recording them when training so the backward op, which shares
the forward's state, passes the output gradients back through the recorded steps.
"""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar

from pydantic import ConfigDict, Field, field_validator

from . import _control_flow_run as run

from ._runtime import registry
from ._runtime.base import MXNetError
from ._runtime.graph import IndexedGraph, Node, NodeEntry
from ._runtime.graph.infer import infer_shapes, infer_types
from ._runtime.params import Param

__all__ = ["Subgraphs", "define"]


class Subgraphs:
    """The body graphs of one control-flow node (each a list of output ``NodeEntry``),
    compared by identity; indexed graphs and ``CachedOp``s of them made on first use."""

    __slots__ = ("graphs", "_indexed", "_cached")

    def __init__(self, graphs):
        self.graphs = tuple(list(getattr(g, "_outputs", g)) for g in graphs)
        self._indexed = [None] * len(self.graphs)
        self._cached = [None] * len(self.graphs)

    def indexed(self, k) -> IndexedGraph:
        if self._indexed[k] is None:
            self._indexed[k] = IndexedGraph(self.graphs[k])
        return self._indexed[k]

    def cached(self, k):
        """A ``CachedOp`` of graph ``k``, called with its inputs in ``list_inputs`` order."""
        if self._cached[k] is None:
            from .executor.cached_op import CachedOp
            from .symbol._symbol import Symbol
            self._cached[k] = CachedOp(Symbol(self.graphs[k]))
        return self._cached[k]

    def num_inputs(self, k) -> int:
        return len(self.indexed(k).input_ids)

    def __repr__(self):
        return f"<Subgraphs of {len(self.graphs)} graph(s)>"


class _LoopParam(Param):
    """What every control-flow op's parameters share: the body graphs (never written as an
    attribute: the JSON's ``subgraphs`` field holds them)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True,
                              arbitrary_types_allowed=True)
    num_args: int = Field(description="Number of inputs, the body graphs counted.")
    num_outputs: int = Field(description="Number of outputs: step outputs, then states.")
    subgraphs: Subgraphs = Field(description="The body graphs (JSON: the subgraphs field).")

    @field_validator("subgraphs", mode="before")
    @classmethod
    def _wrap(cls, value):
        return value if isinstance(value, Subgraphs) else Subgraphs(value)

    def to_mxnet_dict(self, include_defaults=False):
        d = super().to_mxnet_dict(include_defaults)
        d.pop("subgraphs", None)
        return d


class ForeachParam(_LoopParam):
    kind: ClassVar[str] = "foreach"
    num_out_data: int = Field(description="Number of output data of the body.")
    in_state_locs: tuple[int, ...] = Field(description="Body inputs that are states.")
    in_data_locs: tuple[int, ...] = Field(description="Body inputs stepped over axis 0.")
    remain_locs: tuple[int, ...] = Field(description="Body inputs read as they are.")


class WhileLoopParam(_LoopParam):
    kind: ClassVar[str] = "while_loop"
    num_out_data: int = Field(description="Number of step outputs of func.")
    max_iterations: int = Field(ge=1, description="Maximum number of iterations.")
    cond_input_locs: tuple[int, ...] = Field(description="The op inputs cond reads.")
    func_input_locs: tuple[int, ...] = Field(description="The op inputs func reads.")
    func_var_locs: tuple[int, ...] = Field(description="func's inputs that are loop_vars.")


class CondParam(_LoopParam):
    kind: ClassVar[str] = "cond"
    cond_input_locs: tuple[int, ...] = Field(description="The op inputs cond reads.")
    then_input_locs: tuple[int, ...] = Field(description="The op inputs then_func reads.")
    else_input_locs: tuple[int, ...] = Field(description="The op inputs else_func reads.")


class CachedOpParam(Param):
    """``_CachedOp``'s parameters, MXNet's ``CachedOpConfig``: the graph as a symbol JSON
    string, and CachedOp's flags (kept and written back; they change nothing here)."""

    kind: ClassVar[str] = "cached_op"
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)
    subgraph: str = Field(description="The graph, as symbol JSON.")
    static_alloc: bool = Field(False, description="Keep the memory between calls.")
    static_shape: bool = Field(False, description="The input shapes never change.")
    is_dynamic: bool = Field(False, description="The graph has ops of dynamic shape.")
    inline_limit: int = Field(2, description="Graphs of at most this many ops are inlined.")
    forward_bulk_size: int | None = Field(None, description="Ops per forward segment.")
    backward_bulk_size: int | None = Field(None, description="Ops per backward segment.")
    data_indices: tuple[int, ...] | None = Field(None, description="The data inputs.")
    param_indices: tuple[int, ...] | None = Field(None, description="The parameter inputs.")

    @field_validator("subgraph")
    @classmethod
    def _parses(cls, value):
        from .symbol import _json
        try:
            _json.loads(value)
        except MXNetError as exc:
            raise ValueError(f"expected a graph as symbol JSON ({exc})") from None
        return value

    @cached_property
    def subgraphs(self) -> Subgraphs:
        from .symbol import _json
        return Subgraphs([_json.loads(self.subgraph)])

    @property
    def num_args(self) -> int:
        return self.subgraphs.num_inputs(0) + 1

    @cached_property
    def aux_positions(self) -> list:
        """The inputs that are the graph's auxiliary states (read and updated: the node's
        mutable inputs, so an enclosing symbol lists them as its auxiliary states)."""
        from .symbol._symbol import Symbol
        sym = Symbol(self.subgraphs.graphs[0])
        aux = set(sym.list_auxiliary_states())
        return [i for i, name in enumerate(sym.list_inputs()) if name in aux]

    @property
    def num_outputs(self) -> int:
        return len(self.subgraphs.graphs[0])


# -- inference through a body graph ---------------------------------------------------------
def _through(p, k, given, infer):
    """(input values, output values) of body graph ``k`` given ``given`` (one value or None
    per body input, in ``list_inputs`` order)."""
    g = p.subgraphs.indexed(k)
    known = {g.entry_id(nid): v for nid, v in zip(g.input_ids, given) if v is not None}
    values = infer(g, known)
    return [values[g.entry_id(nid)] for nid in g.input_ids], [values[e] for e in g.outputs]


def _step_shape(s):
    return None if s is None or len(s) == 0 else tuple(s[1:])


def _foreach_infer(p, ins, outs, infer, is_shape):
    nd, ns = len(p.in_data_locs), len(p.in_state_locs)
    states = [i if i is not None else o for i, o in zip(ins[nd:nd + ns], outs[p.num_out_data:])]
    data = [_step_shape(s) for s in ins[:nd]] if is_shape else ins[:nd]
    given = run.placed(p.subgraphs.num_inputs(0), (p.in_data_locs, data),
                       (p.in_state_locs, states), (p.remain_locs, ins[nd + ns:]))
    sub_in, sub_out = _through(p, 0, given, infer)
    new_outs = list(sub_out)
    if is_shape:
        steps = next((s[0] for s in ins[:nd] if s), None)
        new_outs[:p.num_out_data] = [None if o is None or steps is None else (steps, *o)
                                     for o in sub_out[:p.num_out_data]]
    new_ins = list(ins[:nd]) if is_shape else [sub_in[loc] for loc in p.in_data_locs]
    new_ins += [sub_in[loc] if sub_in[loc] is not None else o
                for loc, o in zip(p.in_state_locs, sub_out[p.num_out_data:])]
    new_ins += [sub_in[loc] for loc in p.remain_locs]
    return new_ins, new_outs


def _while_infer(p, ins, outs, infer, is_shape):
    """Through ``func`` (MXNet infers the loop's shapes only when it runs): step outputs
    stacked to ``max_iterations`` rows, loop variables as they went in."""
    ins = list(ins)
    for i, j in enumerate(p.func_var_locs):
        pos = p.func_input_locs[j]
        if ins[pos] is None:
            ins[pos] = outs[p.num_out_data + i]
    sub_in, sub_out = _through(p, 1, [ins[k] for k in p.func_input_locs], infer)
    for k, v in zip(p.func_input_locs, sub_in):
        ins[k] = v if v is not None else ins[k]
    _through(p, 0, [ins[k] for k in p.cond_input_locs], infer)
    new_outs = list(sub_out)
    if is_shape:
        new_outs[:p.num_out_data] = [None if o is None else (p.max_iterations, *o)
                                     for o in sub_out[:p.num_out_data]]
    return ins, new_outs


def _cond_infer(p, ins, outs, infer, is_shape):
    ins = list(ins)
    _through(p, 0, [ins[k] for k in p.cond_input_locs], infer)
    outs = list(outs)
    for k, locs in ((1, p.then_input_locs), (2, p.else_input_locs)):
        sub_in, sub_out = _through(p, k, [ins[j] for j in locs], infer)
        for j, v in zip(locs, sub_in):
            ins[j] = v if v is not None else ins[j]
        outs = [o if o is not None else s for o, s in zip(outs, sub_out)]
    return ins, outs


def _cached_infer(p, ins, outs, infer, is_shape):
    sub_in, sub_out = _through(p, 0, ins, infer)
    return ([i if i is not None else v for i, v in zip(ins, sub_in)],
            [o if o is not None else v for o, v in zip(outs, sub_out)])


def _rules(infer_fn):
    return (lambda p, ins, outs: infer_fn(p, ins, outs, infer_shapes, True),
            lambda p, ins, outs: infer_fn(p, ins, outs, infer_types, False))


# -- gradients and registration -------------------------------------------------------------
_backward_ops: dict = {}


def _gradient(node, out_grads):
    """``_backward_<op>`` reads the output gradients, and the outputs (so the engine runs it
    after the forward, whose state it shares); its outputs are the gradients of every
    input."""
    outs = [NodeEntry(node, i, 0) for i in range(node.num_outputs())]
    bwd = Node(_backward_ops[node.op.name], node.params, list(out_grads) + outs)
    bwd.control_deps.append(node)
    return [NodeEntry(bwd, i, 0) for i in range(len(node.inputs))]


_KINDS = {  # op: (parameter model, body graphs, inference, description)
    "_foreach": (ForeachParam, 1, _foreach_infer,
                 "Run a for loop over an NDArray with user-defined computation."),
    "_while_loop": (WhileLoopParam, 2, _while_infer,
                    "Run a while loop over with user-defined condition and computation."),
    "_cond": (CondParam, 3, _cond_infer,
              "Run an if-then-else using user-defined condition and computation."),
    "_CachedOp": (CachedOpParam, 1, _cached_infer,
                  "Run a graph given as symbol JSON (subgraph) as one operator."),
}


def _num_inputs(n_graphs):
    def count(p):
        if p.num_args - n_graphs < 0:
            raise MXNetError(f"num_args ({p.num_args}) counts the {n_graphs} body graph(s) "
                             f"and the inputs, so it cannot be below {n_graphs}")
        return p.num_args - n_graphs
    return count


def define(registrar) -> None:
    """Register the control-flow ops and their backward ops through the builtin plugin's op
    hook's ``registrar``."""
    for name, (model, n_graphs, infer_fn, text) in _KINDS.items():
        count = _num_inputs(n_graphs)
        shape_rule, type_rule = _rules(infer_fn)
        fwd = registrar.register(name)
        fwd.description = text
        fwd.set_param_model(model)
        fwd.arguments = [registry.Argument("data", "NDArray-or-Symbol[]",
                                           "The inputs: data, states and free variables.")]
        for key, value in {
            "FNumInputs": count, "FNumOutputs": lambda p: p.num_outputs,
            "FListInputNames": lambda p, count=count: [f"data{i}" for i in range(count(p))],
            "FInferShape": shape_rule, "FInferType": type_rule, "FGradient": _gradient,
            "FExecType": lambda p: "async", "FCreateOpState": run.LoopState,
            "FStatefulCompute<cpu>": run.forward,
        }.items():
            fwd.set_attr(key, value)
        if "num_args" in model.model_fields:
            fwd.set_attr("key_var_num_args", "num_args")
        if model is CachedOpParam:
            fwd.set_attr("FMutateInputs", lambda p: p.aux_positions)
        bwd = _backward_ops[name] = registrar.register("_backward" + name)
        bwd.description = f"Backward of {name}."
        bwd.set_param_model(model)
        for key, value in {
            "FNumInputs": lambda p: 2 * p.num_outputs, "FNumOutputs": count,
            "TIsBackward": True, "TIsLayerOpBackward": True,
            "FExecType": lambda p: "async", "FStatefulCompute<cpu>": run.backward,
        }.items():
            bwd.set_attr(key, value)
