"""MXNet 1.x's ``mx.nd.CachedOp``: a Symbol called like a function on NDArrays.

Per input signature (shapes, dtypes, context, which inputs need gradients) the graph is
compiled once (a ``Program``: inference, gradient graph, memory plan). A call binds the
inputs, pushes the forward operators and, while autograd records, puts *one* node on the
tape whose backward runs the planned backward graph. With ``static_alloc`` instances
(arena and pre-built operators) serve call after call: an instance is free again once its
recorded backward ran or can no longer run (the node is gone: a loss computed under
``record`` and dropped); a call finding none free gets another (kept, up to ``_POOL``), so
results never depend on the flag.
"""

from __future__ import annotations

import weakref

import numpy as np

from .._runtime import tape as _tape
from .._runtime.base import MXNetError
from .._runtime.context import current_context
from ..ndarray._array import NDArray
from ..ndarray._copies import filled, push_copy
from ..ndarray._imperative import new_array
from ._bulk import max_nodes
from ._dynamic import has_dynamic_shape, run_nodes
from ._instance import Instance
from ._program import Program

__all__ = ["CachedOp"]

# MXNet's CachedOp flags; inlining changes nothing here. The bulk sizes (nodes per segment
# of a training program, see _bulk) default to MXNet's environment variables.
_FLAGS = {"static_alloc": False, "static_shape": False, "is_dynamic": False,
          "inline_limit": 2, "forward_bulk_size": None, "backward_bulk_size": None,
          "data_indices": None, "param_indices": None}
_POOL = 4      # static instances kept per program (calls whose backward is pending)


def _defaults() -> dict:
    """The flags a CachedOp has unless given others (bulk sizes from the environment)."""
    flags = dict(_FLAGS)
    flags["forward_bulk_size"], flags["backward_bulk_size"] = max_nodes()
    return flags


class CachedOp:
    """``CachedOp(sym, flags=())``; call it with one NDArray per ``sym.list_inputs()``, in
    that order. Returns an NDArray, or a list for several outputs."""

    def __init__(self, sym, flags=()):
        self._sym = sym
        self._names = sym.list_inputs()
        self.flags = _defaults()
        for key, value in dict(flags).items():
            if key not in _FLAGS:
                raise MXNetError(f"CachedOp: unknown flag {key!r}; flags are "
                                 f"{', '.join(_FLAGS)}")
            self.flags[key] = value
        self._programs: dict = {}
        self._static: dict = {}     # program -> {instance: weakref to its pending backward}
        self._hook = None           # (callback, monitor_all): ``register_op_hook``
        self._dynamic = has_dynamic_shape(sym._outputs)   # run node by node (_dynamic)

    def inlined(self) -> bool:
        """Whether MXNet would inline this op's graph into an enclosing recording (its ops
        recorded one by one): at most ``inline_limit`` ops, and not ``static_alloc``."""
        from .._runtime.graph import IndexedGraph
        ops = sum(n.op is not None for n in IndexedGraph(self._sym._outputs).nodes)
        return not self.flags["static_alloc"] and ops <= self.flags["inline_limit"]

    def as_op_params(self):
        """The parameters of a ``_CachedOp`` node running this op's graph: the graph as
        symbol JSON and the flags set to other than their defaults."""
        from .._runtime import registry
        model, defaults = registry.get("_CachedOp").param_model, _defaults()
        flags = {k: v for k, v in self.flags.items()
                 if k in model.model_fields and v != defaults[k]}
        return model(subgraph=self._sym.tojson(), **flags)

    def register_op_hook(self, callback, monitor_all=False):
        """Call ``callback(name, op_name, array)`` with every node's outputs (with
        ``monitor_all``, its inputs first) as each call pushes the node: names are
        ``<node>_<output name>`` and ``<node>_<input name>`` (Gluon's
        ``HybridBlock.register_op_hook``). Nodes are then pushed one by one."""
        self._hook = (callback, monitor_all)

    def __call__(self, *args, out=None, default_ctx=None):
        if len(args) != len(self._names):
            raise MXNetError(f"CachedOp: expected {len(self._names)} inputs "
                             f"({', '.join(self._names)}), got {len(args)}")
        op_by_op = self._dynamic        # also for sparse inputs: each op's storage dispatch
        for name, a in zip(self._names, args):
            if not isinstance(a, NDArray):
                raise MXNetError(f"CachedOp: input {name!r} must be an NDArray, got "
                                 f"{type(a).__name__}")
            if a.stype != "default":
                op_by_op = True
        if op_by_op:
            return self._run_dynamic(args, out)
        ctx = args[0].context if args else (default_ctx or current_context())
        wanted = tuple(_tape.state.recording and _tape.has_history(a) for a in args)
        record = any(wanted)
        program = self._program(args, wanted, ctx)
        outs = self._outputs(program, ctx, out)
        inst = self._instance(program, args, wanted, outs)
        if self._hook is None:
            inst.run(_tape.state.training)
        else:
            inst.run(_tape.state.training, bulk=False, each=lambda nid, pushed: _call_hook(
                self._hook, program, inst, nid, pushed))
        g = program.graph
        for k, eid in enumerate(g.outputs[:program.num_outputs]):
            if eid not in program.fresh_outputs:      # an input, or an output given twice
                push_copy(inst.array(eid), outs[k])
        if record:
            backward = _Backward(self, program, inst, args, wanted)
            pool = self._static.get(program)
            if pool is not None and inst in pool:
                pool[inst] = weakref.ref(backward)
            node_op = _tape.FunctionOp(backward, len(outs), len(args), name="CachedOp",
                                       fresh_results=True)
            _tape.record(node_op, None, list(args), outs)
        return outs[0] if len(outs) == 1 else outs

    def _run_dynamic(self, args, out):
        if self._hook is not None:
            raise MXNetError("CachedOp: register_op_hook is not supported on a graph with a "
                             "dynamic-shape op (such as boolean_mask), which runs op by op")
        outs = run_nodes(self._sym._outputs, dict(zip(self._names, args)))
        if out is not None:
            for src, dst in zip(outs, [out] if isinstance(out, NDArray) else out):
                push_copy(src, dst)
        return outs[0] if len(outs) == 1 else outs

    def _program(self, args, wanted, ctx):
        key = (tuple((a._shape, a._dtype) for a in args), ctx, wanted)
        program = self._programs.get(key)
        if program is None:
            reqs = {n: "write" for n, w in zip(self._names, wanted) if w}
            program = self._programs[key] = Program(
                self._sym._outputs, reqs, {n: a.shape for n, a in zip(self._names, args)},
                {n: np.dtype(a.dtype) for n, a in zip(self._names, args)}, ctx,
                fresh_outputs=True)
        return program

    @staticmethod
    def _outputs(program, ctx, out):
        """The arrays this call returns: ``out``, checked, or new ones."""
        specs = [(program.shapes[e], program.dtypes[e])
                 for e in program.graph.outputs[:program.num_outputs]]
        if out is None:
            return [new_array(s, t, ctx) for s, t in specs]
        outs = [out] if isinstance(out, NDArray) else list(out)
        if len(outs) != len(specs) or any(
                not isinstance(o, NDArray) or (o.shape, np.dtype(o.dtype)) != spec
                for o, spec in zip(outs, specs)):
            raise MXNetError(f"CachedOp: out= must be {len(specs)} NDArray(s) of "
                             f"{', '.join(f'{s} {t}' for s, t in specs)}")
        return outs

    def _instance(self, program, args, wanted, outs):
        """The instance for this call, bound to its inputs and outputs: with
        ``static_alloc`` a kept one whose recorded backward is not pending; else a new
        one."""
        arrays = dict(zip(self._names, args))
        fresh = [o if eid in program.fresh_outputs else None
                 for o, eid in zip(outs, program.graph.outputs)]
        static = self.flags["static_alloc"]
        pool = self._static.get(program) if static else None
        if pool:
            for cached, pending in pool.items():
                if pending is None or pending() is None:
                    cached.rebind(arrays, fresh)
                    pool[cached] = None
                    return cached
        grads = {n: filled(a.shape, np.dtype(a.dtype), a.context, 0)
                 for n, a, w in zip(self._names, args, wanted) if w}
        inst = Instance(program, arrays, grads, bulk_sizes=(
            int(self.flags["forward_bulk_size"]), int(self.flags["backward_bulk_size"])))
        inst.rebind({}, fresh)
        if static:
            pool = self._static.setdefault(program, {})
            if len(pool) < _POOL:
                pool[inst] = None
        return inst

    def _backward_done(self, program, inst):
        pool = self._static.get(program)
        if pool is not None and inst in pool:
            pool[inst] = None


def _call_hook(hook, program, inst, nid, pushed):
    """An op hook at node ``nid`` (no separate entry for a variable input, as MXNet's)."""
    callback, monitor_all = hook
    op_name = program.graph.nodes[nid].op.name
    for name, arr in inst.monitored(nid, pushed, monitor_all, var_names=False):
        callback(name, op_name, arr)


class _Backward:
    """The recorded node's backward: the instance's planned backward graph, fed with the
    output gradients autograd passes."""

    def __init__(self, op, program, inst, args, wanted):
        self.op, self.program, self.inst = op, program, inst
        self.names, self.wanted = op._names, wanted

    def backward(self, *ograds):
        """New gradient arrays, written by the backward graph (autograd takes them over
        without a copy: ``FunctionOp.fresh_results``)."""
        inst, p = self.inst, self.program
        grads = {}
        for n, w in zip(self.names, self.wanted):
            if w and n in p.grads:    # an auxiliary state (read and updated) has no gradient
                eid = p.inputs[n]
                grads[n] = new_array(p.shapes[eid], p.dtypes[eid], inst.ctx)
        inst.rebind({}, grads=grads)
        for head, og in zip(inst.head_arrays, ograds):
            if head is not None:
                push_copy(og, head)
        inst.run(_tape.state.training, backward=True)
        self.op._backward_done(self.program, inst)
        return [grads.get(n) for n in self.names]
