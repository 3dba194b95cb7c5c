"""A graph compiled for one set of input shapes and dtypes, independent of any arrays: the
forward nodes, the backward nodes the gradient pass adds, every entry's shape and dtype,
each node's kernel and resources, and the memory plan. Executors and CachedOp instances
run programs on arrays (``_instance``)."""

from __future__ import annotations

import numpy as np

from .._runtime import device as _device
from .._runtime import resource as _resource
from .._runtime.base import MXNetError
from .._runtime.graph import IndexedGraph, NodeEntry, variable
from .._runtime.opctx import OpReqType, is_async, kernel_of
from .._runtime.graph import cse as _cse, infer as _infer
from .._runtime.graph.gradient import gradient
from .._runtime.graph.memory import options_from_env, plan_memory

__all__ = ["Program", "backward_graph", "forward_graph", "select_kernels"]

_WRITE, _INPLACE, _ADD, _NULL = (OpReqType.WRITE_TO, OpReqType.WRITE_INPLACE,
                                 OpReqType.ADD_TO, OpReqType.NULL)


class Program:
    """``outputs``: the forward graph's output entries; ``grad_req``: variable name ->
    'write' | 'add' | 'null' (variables not named get no gradient); ``shapes`` / ``dtypes``:
    what is known of the variables by name. ``ctx`` picks the kernels.

    ``fresh_outputs``: the outputs made by an op are written into arrays given on each run
    (``Instance.rebind``; CachedOp returns new arrays per call), not planned.
    ``grad_dtypes``: the gradient arrays' dtypes by name (one that differs from the
    gradient's is written by a cast after backward).

    After compiling: ``graph`` (IndexedGraph of forward and backward), ``num_forward``
    (the first nodes of ``graph``), ``shapes``/``dtypes`` per entry, ``inputs`` (variable
    name -> entry id), ``arg_names``/``aux_names``, ``head_grads`` (entry id of each
    output's head gradient, None where no rule reads it), ``grads`` (variable name ->
    (entry id, req, direct): direct gradients are written by their op straight into the
    gradient array), ``kernels`` (per node), ``plan``."""

    def __init__(self, outputs, grad_req, shapes, dtypes, ctx, *, plan_options=None,
                 fresh_outputs=False, grad_dtypes=None):
        self.ctx = ctx
        self.output_names = _output_names(outputs)
        outputs, forward = forward_graph(outputs)
        self.forward_outputs = outputs          # the forward graph as run (get_optimized_symbol)
        self.arg_names = [forward.nodes[i].name for i in forward.arg_ids]
        self.aux_names = [forward.nodes[i].name for i in forward.aux_ids]
        wrt = [forward.nodes[i] for i in forward.arg_ids
               if grad_req.get(forward.nodes[i].name, "null") != "null"]
        g, self.head_grads = backward_graph(outputs, wrt)
        self.graph = g
        self.num_forward = len(forward.nodes)
        self.num_outputs = len(outputs)
        self.inputs = {g.nodes[i].name: g.entry_id(i) for i in g.input_ids}
        self._infer(shapes, dtypes, forward)
        self.grads = _grad_targets(g, wrt, grad_req, len(outputs), self.dtypes,
                                   grad_dtypes or {})
        self.kernels = select_kernels(g, ctx)
        self.fresh_outputs = _fresh_outputs(g, len(outputs)) if fresh_outputs else set()
        self.plan = self._plan_memory(plan_options)

    # -- shapes and dtypes ---------------------------------------------------------------
    def _infer(self, shapes, dtypes, forward):
        """Shapes and dtypes of every entry: the forward graph's first (its entry ids are the
        full graph's: the full graph numbers the forward outputs first), then the whole graph
        with each head gradient shaped as its output."""
        g = self.graph
        known_s = [None] * g.num_entries
        known_t = [None] * g.num_entries
        for name, eid in self.inputs.items():
            if name in shapes:
                known_s[eid] = tuple(shapes[name])
            if name in dtypes:
                known_t[eid] = np.dtype(dtypes[name])
        if len(g.nodes) > self.num_forward:
            n = forward.num_entries
            fwd_s = _infer.infer_shapes(forward, known_s[:n])
            fwd_t = _infer.infer_types(forward, known_t[:n])
            for out, head in zip(forward.outputs, self.head_grads):
                if head is not None:
                    known_s[head], known_t[head] = fwd_s[out], fwd_t[out]
        self.shapes = _infer.infer_shapes(g, known_s)
        self.dtypes = _infer.infer_types(g, known_t)
        missing = [n for n, eid in self.inputs.items()
                   if not _infer.shape_known(self.shapes[eid]) or self.dtypes[eid] is None]
        if missing:
            raise MXNetError(f"bind: the shapes or dtypes of {', '.join(map(repr, missing))} "
                             f"cannot be inferred; give them (e.g. simple_bind(ctx, "
                             f"{missing[0]}=(...)))")
        self.nbytes = [0 if s is None or t is None else int(np.prod(s, dtype=np.int64)) *
                       t.itemsize for s, t in zip(self.shapes, self.dtypes)]

    # -- memory ---------------------------------------------------------------------------
    def _plan_memory(self, plan_options):
        """The memory plan: inputs, fresh outputs and direct gradients have arrays of their
        own; the outputs and the other gradients live to the end."""
        g, grads = self.graph, self.grads.values()
        external = (set(self.inputs.values()) | self.fresh_outputs
                    | {eid for eid, _, direct in grads if direct})
        keep = set(g.outputs[:self.num_outputs]) | {eid for eid, _, direct in grads
                                                    if not direct}
        inplace, share = plan_options or options_from_env()
        return plan_memory(g, self.nbytes, external, keep, self._inplace_claims, inplace, share)

    def _inplace_claims(self, nid):
        return self.kernels[nid].inplace

    # -- what a run needs ---------------------------------------------------------------
    def req(self, nid, o, grad_eids):
        """How node ``nid`` writes its output ``o``."""
        eid = self.graph.entry_id(nid, o)
        plan = self.plan
        if eid in plan.unused or eid in plan.alias:
            return _NULL
        if eid in grad_eids:
            return grad_eids[eid]
        return _INPLACE if (nid, o) in plan.inplace else _WRITE

    def sizes(self) -> tuple[int, int]:
        """(planned, naive) bytes of the intermediate entries."""
        return self.plan.total, self.plan.naive


class Kernel:
    """A node's compute: its ``FCompute`` for the device, or ``FStatefulCompute`` with
    ``create_state`` (a stateful forward) or ``forward`` (a stateful backward: the id of the
    forward node whose state it shares); ``is_async``; params, resources, in-place claims
    ((input index, output index, identity)) and the inputs it mutates."""

    __slots__ = ("op", "params", "fcompute", "stateful", "create_state", "forward", "is_async",
                 "requested", "inplace", "mutate", "name")


# -- the compile steps ---------------------------------------------------------------------
def forward_graph(outputs):
    """The forward graph as run: ``outputs`` with common expressions merged (unless
    ``MXNET_ELIMINATE_COMMON_EXPR=0``), and its IndexedGraph."""
    if _cse.enabled():
        outputs = _cse.eliminate_common_expr(outputs)
    return outputs, IndexedGraph(outputs)


def backward_graph(outputs, wrt):
    """The gradient pass: an IndexedGraph of ``outputs`` then the gradients of the variable
    nodes ``wrt``, each output's head gradient a variable ``_head_grad_<k>``; and the entry
    id of each head gradient (None where no gradient rule reads it)."""
    heads = [NodeEntry(variable(f"_head_grad_{k}"), 0, 0) for k in range(len(outputs))]
    grads = gradient(outputs, heads, wrt) if wrt else []
    g = IndexedGraph([*outputs, *grads])
    head_ids = {id(h.node): k for k, h in enumerate(heads)}
    head_grads = [None] * len(outputs)
    for i in g.input_ids:
        k = head_ids.get(id(g.nodes[i]))
        if k is not None:
            head_grads[k] = g.entry_id(i)
    return g, head_grads


def select_kernels(g, ctx):
    """Each node's ``Kernel`` on ``ctx`` (None for variables)."""
    return [None if node.op is None else _kernel(g, nid, ctx)
            for nid, node in enumerate(g.nodes)]


def _kernel(g, nid, ctx):
    node = g.nodes[nid]
    op, params = node.op, node.params
    dev = _device.get(ctx.device_type)
    kind = getattr(dev, "kernels", ctx.device_type)
    k = Kernel()
    k.op, k.params, k.name = op, params, node.name or op.name
    k.fcompute, k.stateful, k.create_state = kernel_of(op, kind, f" (node {k.name!r} on {ctx})")
    k.forward = None
    if k.stateful is not None and k.create_state is None:
        k.forward = next((g.node_id(d) for d in (node._control_deps or ())
                          if d.op is not None and d.op.get_attr("FCreateOpState")), None)
        if k.forward is None:
            raise MXNetError(f"Operator {op.name!r} (node {k.name!r}) is the backward of a "
                             f"stateful op but has no control dependency on its forward node")
    k.is_async = is_async(op, params)
    rr = op.get_attr("FResourceRequest")
    k.requested = [_resource.request(ctx, r) for r in rr(params)] if rr is not None else []
    pairs = op.get_attr("FInplaceOption")
    pairs = [tuple(p) for p in pairs(params)] if pairs is not None else []
    ident = op.get_attr("FInplaceIdentity")
    ident = list(ident(params)) if ident is not None else [False] * len(pairs)
    k.inplace = [(i, o, bool(same)) for (i, o), same in zip(pairs, ident)]
    k.mutate = op.mutate_inputs(params)
    return k


def _output_names(outputs):
    names = []
    for e in outputs:
        node = e.node
        if node.op is None:
            names.append(node.name)
        else:
            names.append(f"{node.name}_{node.op.list_output_names(node.params)[e.index]}")
    return names


def _fresh_outputs(g, n_out):
    """Output entries an op makes, each once (a variable or repeated output is copied)."""
    eids = g.outputs[:n_out]
    return {e for e in eids if g.nodes[g.entry_node(e)].op is not None and eids.count(e) == 1}


def _grad_targets(g, wrt, grad_req, n_out, dtypes, grad_dtypes):
    """Variable name -> (gradient entry, req, direct). A gradient is written straight into
    its array by the op making it when nothing else reads that entry, it is the gradient
    of one variable only and the array has its dtype (``grad_dtypes``: the arrays' dtypes,
    when known); otherwise it is copied (or added, cast as needed) there after backward."""
    entries = g.outputs[n_out:]
    readers = [0] * g.num_entries
    for nid in range(len(g.nodes)):
        for eid in g.input_entries(nid):
            readers[eid] += 1
    for eid in g.outputs[:n_out]:
        readers[eid] += 1
    count: dict = {}
    for eid in entries:
        count[eid] = count.get(eid, 0) + 1
    out = {}
    for x, eid in zip(wrt, entries):
        direct = (g.nodes[g.entry_node(eid)].op is not None and not readers[eid]
                  and count[eid] == 1 and grad_dtypes.get(x.name, dtypes[eid]) == dtypes[eid])
        out[x.name] = (eid, _ADD if grad_req[x.name] == "add" else _WRITE, direct)
    return out
