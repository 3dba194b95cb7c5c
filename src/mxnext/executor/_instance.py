"""A program bound to arrays: the arena holding every planned entry, a device view of each
entry, engine vars, and engine operators built once and pushed on each run (the seeds' "save
object creation cost"): one per segment of consecutive nodes (``_bulk``: MXNet's bulk
execution), or per node where bulking is off.

Vars: an external array's own; one per memory group. A node reads its inputs' vars and
mutates those of its outputs, of the inputs it mutates and of its resources; and since a
group reuses bytes of groups that died before it (their lives never overlap), its writer
also mutates their vars, which orders the reuse after their last readers, in this run and
the next.
"""

from __future__ import annotations

import weakref
from time import perf_counter

import numpy as np

from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime import storage as _storage
from .._runtime.engine import Var, _check
from .._runtime.inline import CHEAP_BYTES
from .. import ndarray as _nd
from ..ndarray._array import NDArray
from .._runtime.opctx import BoundState, OpContext, call_compute
from . import _bulk

__all__ = ["Instance"]


class Instance:
    """``program`` on ``arrays`` (variable name -> NDArray: arguments, auxiliary states) with
    gradients into ``grad_arrays`` (name -> NDArray, for the variables with a gradient).
    ``share``: another instance whose arena this one uses when it is large enough (MXNet's
    ``shared_exec``: ``Executor.reshape``, bucketing); see ``_share``. ``bulk_sizes``: a
    training program's (forward, backward) nodes per segment (CachedOp's flags), else the
    environment's (``_bulk``)."""

    def __init__(self, program, arrays, grad_arrays, share=None, bulk_sizes=None):
        self.program = p = program
        g, plan, ctx = p.graph, p.plan, p.ctx
        self.ctx = ctx
        self._dev = dev = _device.get(ctx.device_type)
        self._policy = dev.inline_policy
        self._group_vars = [Var() for _ in plan.size]
        self._shared = [()] * len(plan.size)       # per group: vars of other instances' bytes
        if share is not None and share.arena is not None and share.arena.nbytes >= plan.total:
            self.arena = share.arena
            self._share(share)
        else:
            self.arena = _storage.alloc(plan.total, ctx)     # may be 0 bytes: zero-size outputs
        # the arena returns to the pool only after the functions pushed on its groups ran
        self.arena.guard(self, self._group_vars)
        self.arrays = dict(arrays)
        self.grad_arrays = dict(grad_arrays)
        self.head_arrays = [None if eid is None else
                            _zeros(p.shapes[eid], p.dtypes[eid], ctx) for eid in p.head_grads]
        self.views = [None] * g.num_entries
        self.vars = [None] * g.num_entries
        self._bound = {}                   # external entry -> (chunk, offset) bound there
        self._bind_externals()
        self._bind_planned()
        self._aliases = {}                 # entry -> the entries that are views of it
        for e, src in plan.alias.items():
            self._aliases.setdefault(src, []).append(e)
        self._rebindable = set()           # inputs, fresh outputs, direct gradients, views
        direct = [eid for eid, _req, d in p.grads.values() if d]
        for e in [*p.inputs.values(), *p.fresh_outputs, *direct]:
            self._rebindable.update((e, *self._aliases.get(e, ())))
        self._users = {}                   # rebindable entry -> [(view list, index, run)]
        self._states = {}                  # stateful forward node id -> its state
        self._runs = [self._make_run(nid) for nid in range(len(g.nodes))]
        weakref.finalize(self, _unlink, self._runs)
        self._transfers = self._make_transfers()
        self._limits = _bulk.limits(len(g.nodes) > p.num_forward, bulk_sizes)
        self._oprs = {}                    # (is_train, backward, bulk) -> [OprHandle]
        self._opr_nodes = {}               # (is_train, backward, False) -> node id of each
        self.outputs = [None if eid in p.fresh_outputs else self.array(eid)
                        for eid in g.outputs[:p.num_outputs]]

    # -- views and vars -----------------------------------------------------------------
    def _bind_externals(self):
        p = self.program
        for name, eid in p.inputs.items():
            if name.startswith("_head_grad_"):
                k = int(name.rsplit("_", 1)[1])
                arr = self.head_arrays[k]
            else:
                arr = self.arrays.get(name)
            if arr is not None:
                self._set_external(eid, arr)
        for name, (eid, _req, direct) in p.grads.items():
            if direct:
                self._set_external(eid, self.grad_arrays[name])

    def _set_external(self, eid, arr):
        p = self.program
        if arr.shape != p.shapes[eid] or np.dtype(arr.dtype) != p.dtypes[eid]:
            raise ValueError(f"bind: array for entry {eid} is {arr.shape} {np.dtype(arr.dtype)}, "
                             f"the graph needs {p.shapes[eid]} {p.dtypes[eid]}")
        self.views[eid] = arr._data()
        self.vars[eid] = arr._chunk.var
        self._bound[eid] = (arr._chunk, arr._offset)

    def _share(self, other):
        """Order this instance's use of the arena after and before ``other``'s (and what
        ``other`` shares in turn): a group's writer mutates, and its readers read, the vars
        of every group of theirs whose bytes it overlaps."""
        mine, theirs = self.program.plan, other.program.plan
        for g, (a, n) in enumerate(zip(mine.offset, mine.size)):
            ext = []
            for h, (b, m) in enumerate(zip(theirs.offset, theirs.size)):
                if a < b + m and b < a + n:
                    ext.append(other._group_vars[h])
                    ext += other._shared[h]
            self._shared[g] = tuple(dict.fromkeys(ext))

    def _bind_planned(self):
        p, plan = self.program, self.program.plan
        raw = self.arena.raw if self.arena is not None else None
        for eid in range(p.graph.num_entries):
            shape, dtype = p.shapes[eid], p.dtypes[eid]
            src = plan.alias.get(eid)             # made before it: a smaller entry id
            if src is not None:
                if self.views[src] is not None:       # a reshaped view of its source
                    self.views[eid] = self.views[src].reshape(shape)
                self.vars[eid] = self.vars[src]
            elif plan.group[eid] is not None:
                gid = plan.group[eid]
                self.views[eid] = self._dev.view(raw, dtype, shape, plan.offset[gid])
                self.vars[eid] = self._group_vars[gid]
                if _check.ENABLED:
                    _check.bind(self.vars[eid], raw, plan.offset[gid],
                                plan.offset[gid] + plan.size[gid])
            elif eid in plan.unused and shape is not None:
                xp = self._dev.xp                                      # never written
                self.views[eid] = xp.broadcast_to(xp.empty((), dtype), shape)

    def monitored(self, nid, pushed, monitor_all, var_names):
        """``(name, NDArray)`` of what a monitor sees at node ``nid`` (MXNet's names): before it
        runs (not ``pushed``), with ``monitor_all``, its inputs as ``<node>_<input name>``
        (``FListInputNames`` or ``input<i>``; with ``var_names`` a variable input first under
        its own name, as the executor's monitor, not CachedOp's hook); after, its outputs as
        ``<node>_<output name>``, hidden ones and those nothing keeps (as zeros) included."""
        p = self.program
        g, node = p.graph, p.graph.nodes[nid]
        seen = []
        if pushed:
            seen = [(f"{node.name}_{n}", g.entry_id(nid, o))
                    for o, n in enumerate(node.op.list_output_names(node.params))]
        elif monitor_all:
            flist = node.op.get_attr("FListInputNames")
            names = flist(node.params) if flist is not None else [
                f"input{i}" for i in range(len(node.inputs))]
            for e, eid, n in zip(node.inputs, g.input_entries(nid), names):
                if var_names and e.node.op is None:
                    seen.append((e.node.name, eid))
                seen.append((f"{node.name}_{n}", eid))
        kept = [(name, eid, self.views[eid] is not None and eid not in p.plan.unused)
                for name, eid in seen]
        # an output nothing keeps (a gradient not asked for) shows as zeros: MXNet's shows
        # the buffer it left unset
        return [(name, self.array(eid) if has else
                 _nd.zeros(p.shapes[eid], ctx=self.ctx, dtype=p.dtypes[eid]))
                for name, eid, has in kept if has or pushed]

    def array(self, eid):
        """An NDArray over entry ``eid`` (an output, an intermediate, an input)."""
        p, plan = self.program, self.program.plan
        gid = plan.group[eid]
        if gid is None:
            src = plan.alias.get(eid, eid)
            bound = self._bound.get(src)          # an array bound there (a fresh output)
            if bound is not None:
                return NDArray._new(bound[0], bound[1], p.shapes[eid], p.dtypes[eid],
                                    view=self.views[eid])
            for name, e in p.inputs.items():
                if e == src and name in self.arrays:
                    return self.arrays[name].reshape(p.shapes[eid])
            raise ValueError(f"executor: output entry {eid} has no array")
        chunk = _storage.Handle(self.arena.raw, self.arena.nbytes, self.arena.capacity, self.ctx,
                                None, self._group_vars[gid], base=self.arena)
        return NDArray._new(chunk, plan.offset[gid], p.shapes[eid], p.dtypes[eid],
                            view=self.views[eid])

    # -- the operators -----------------------------------------------------------------
    def _make_run(self, nid):
        p = self.program
        kernel = p.kernels[nid]
        if kernel is None:
            return None
        g = p.graph
        ins = g.input_entries(nid)
        outs = [g.entry_id(nid, o) for o in range(g.nodes[nid].num_outputs())]
        grad_req = {eid: req for eid, req, _ in p.grads.values()}
        run = _Run(kernel, self._compute_of(nid, kernel), [self.views[e] for e in ins],
                   [self.views[e] for e in outs],
                   [p.req(nid, o, grad_req) for o in range(len(outs))], self._policy)
        run.in_eids, run.out_eids = ins, outs
        for views, eids in ((run.ins, ins), (run.outs, outs)):
            for k, e in enumerate(eids):
                if e in self._rebindable:
                    self._users.setdefault(e, []).append((views, k, run))
        nbytes = sum(p.nbytes[e] for e in outs)
        self._policy.start(run, nbytes, kernel.requested, kernel.is_async)
        run.bulkable = nbytes <= CHEAP_BYTES and not kernel.is_async
        return run

    def _compute_of(self, nid, kernel):
        """The node's compute function: its ``FCompute``, or its stateful kernel bound to the
        state made for this node once per bind (as MXNet's executor), which the node's
        backward shares."""
        if kernel.stateful is None:
            return kernel.fcompute
        if kernel.create_state is not None:
            p = self.program
            ins = p.graph.input_entries(nid)
            state = self._states[nid] = kernel.create_state(
                kernel.params, self.ctx, [p.shapes[e] for e in ins], [p.dtypes[e] for e in ins])
        else:
            state = self._states[kernel.forward]
        return BoundState(kernel.stateful, state)

    def _vars_of(self, run):
        """(const, mutate) vars of a node: its inputs' read; its written outputs', the
        groups their bytes overlap, its mutated inputs' and its resources' written (each
        once; a var both read and written is written). Kept until a rebind changes them."""
        if run.vars is not None:
            return run.vars
        plan, v = self.program.plan, self.vars
        if run.fixed is None:                       # what no rebind changes
            run.fixed = [r.var for r in run.kernel.requested]
            for e, req in zip(run.out_eids, run.req):
                gid = plan.group[e]
                if req and gid is not None:
                    run.fixed += [self._group_vars[h] for h in plan.overlaps[gid]]
                    run.fixed += self._shared[gid]
            run.fixed_reads = [x for e in run.in_eids if plan.group[e] is not None
                               for x in self._shared[plan.group[e]]]
        mutate = [v[e] for e, req in zip(run.out_eids, run.req) if req]
        mutate += [v[run.in_eids[i]] for i in run.kernel.mutate]
        mutate = tuple(x for x in dict.fromkeys(mutate + run.fixed) if x is not None)
        const = [v[e] for e in run.in_eids] + run.fixed_reads
        const = tuple(x for x in dict.fromkeys(const) if x is not None and x not in mutate)
        run.vars = const, mutate
        return run.vars

    def _segment_vars(self, seg):
        """The union of its members' vars (a var both read and written is written)."""
        if len(seg.runs) == 1:
            return self._vars_of(seg.runs[0])
        parts = [run.vars or self._vars_of(run) for run in seg.runs]
        mutate = dict.fromkeys(x for _c, m in parts for x in m)
        return tuple(dict.fromkeys(x for c, _m in parts for x in c if x not in mutate)), \
            tuple(mutate)

    def _operators(self, is_train, backward, bulk):
        key = (is_train, backward, bulk)
        oprs = self._oprs.get(key)
        if oprs is None:
            p = self.program
            nodes = range(p.num_forward, len(p.graph.nodes)) if backward else range(p.num_forward)
            pairs = [(nid, run) for nid, run in zip(nodes, map(self._runs.__getitem__, nodes))
                     if run is not None and (any(run.req) or run.kernel.mutate)]
            runs = [run for _, run in pairs]
            if not bulk:                    # one run per operator: its node, for ``each``
                self._opr_nodes[key] = [nid for nid, _ in pairs]
            eng = _engine.get()
            oprs = []
            for members in _bulk.segments(runs, self._limits[backward] if bulk else 1):
                seg = _bulk.Segment(members)
                const, mutate = self._segment_vars(seg)
                seg.slot = (oprs, len(oprs))
                oprs.append(eng.new_operator(seg.function(is_train), const, mutate,
                                             name=seg.name, cheap=seg.cheap,
                                             is_async=members[0].kernel.is_async, leaf=True))
                for run in members:
                    run.segs.append(seg)
            self._oprs[key] = oprs
        return oprs

    def _make_transfers(self):
        """Copies (or sums) of gradients that their op could not write in place."""
        p, eng, copy = self.program, _engine.get(), self._dev.copy
        out = []
        for name, (eid, req, direct) in p.grads.items():
            if direct:
                continue
            dst = self.grad_arrays[name]
            src, d = self.views[eid], dst._data()
            fn = (lambda rctx, s=src, d=d: d.__iadd__(s)) if req == 3 else \
                (lambda rctx, s=src, d=d: copy(d, s))
            out.append(eng.new_operator(fn, (self.vars[eid],), (dst._chunk.var,),
                                        name=f"{name}_grad", cheap=self._policy.inline,
                                        is_async=False, leaf=True))
        return out

    # -- running ------------------------------------------------------------------------
    def run(self, is_train, backward=False, bulk=True, each=None):
        """Push the forward (or backward) operators; ``bulk=False`` pushes one per node
        (an executor with a monitor callback, as MXNet's) and calls ``each(node id, False)``
        before pushing each one and ``each(node id, True)`` after."""
        push, ctx = _engine.get().push, self.ctx
        oprs = self._operators(is_train, backward, bulk)
        if each is None:
            for opr in oprs:
                push(opr, ctx)
        else:
            for opr, nid in zip(oprs, self._opr_nodes[is_train, backward, bulk]):
                each(nid, False)
                push(opr, ctx)
                each(nid, True)
        if backward:
            for opr in self._transfers:
                push(opr, ctx)

    def rebind(self, arrays, outputs=(), grads=None) -> None:
        """Point the nodes using the variables in ``arrays`` (name -> NDArray of the same
        shape and dtype), the fresh outputs (``outputs``: one NDArray per output, None for
        the others) and the gradients in ``grads`` (name -> NDArray) at those arrays
        (CachedOp: new inputs and outputs each call, new gradients each backward)."""
        p = self.program
        entries = {}
        for name, arr in arrays.items():
            self.arrays[name] = arr
            entries[p.inputs[name]] = arr
        for eid, arr in zip(p.graph.outputs, outputs):
            if arr is not None:        # not kept: its autograd node may hold this instance
                entries[eid] = arr
        if grads:
            self.grad_arrays.update(grads)
            for name, arr in grads.items():
                eid, _req, direct = p.grads[name]
                if direct:
                    entries[eid] = arr
            self._transfers = self._make_transfers()
        entries = {eid: arr for eid, arr in entries.items()
                   if self._bound.get(eid) != (arr._chunk, arr._offset)}  # not a parameter
        eng = _engine.get()
        for var in {self.vars[eid] for eid in entries} - {None}:
            # the argument lists below change in place: operators pushed before that
            # still use an entry's old array must have run (not the device work they
            # enqueued: that holds no list, and a freed block keeps its marks, storage.py)
            eng.wait_for_var(var, write=True, device=False)
        runs = set()
        for eid, arr in entries.items():
            self._set_external(eid, arr)
            for e in (eid, *self._aliases.get(eid, ())):
                if e != eid:                       # a reshaped view of it
                    self.views[e] = self.views[eid].reshape(p.shapes[e])
                    self.vars[e] = self.vars[eid]
                for views, k, run in self._users.get(e, ()):
                    views[k] = self.views[e]
                    run.vars = None
                    runs.add(run)
        for seg in {seg: None for run in runs for seg in run.segs}:
            const, mutate = self._segment_vars(seg)   # new operators: one pushed before
            oprs, i = seg.slot                        # may still be in flight
            old = oprs[i]
            oprs[i] = eng.new_operator(old.fn, const, mutate, name=old.name, cheap=old.cheap,
                                       is_async=old.is_async, leaf=True)


class _Run:
    """One node's kernel (``fn``, its compute function) on its arrays; ``bound(is_train)``
    is the function pushed."""

    __slots__ = ("kernel", "fn", "ins", "outs", "req", "in_eids", "out_eids", "cheap", "timed",
                 "fastest", "segs", "octx", "fixed", "fixed_reads", "vars", "bulkable",
                 "policy", "timing")

    def __init__(self, kernel, fn, ins, outs, req, policy):
        self.kernel, self.fn, self.ins, self.outs, self.req = kernel, fn, ins, outs, req
        self.policy = policy        # its device's inline policy: ``cheap``, ``timing``
        self.segs = []              # the segments (operators) it runs in
        self.octx = {}
        self.fixed = None           # mutated vars that stay (resources, overlapped groups)
        self.fixed_reads = None     # read vars that stay (shared arenas)
        self.vars = None            # (const, mutate), see Instance._vars_of

    def bound(self, is_train):
        k = self.kernel
        if k.is_async:
            def run_async(rctx, on_complete):
                octx = OpContext(is_train, rctx, k.requested,
                                 _device.get(rctx.ctx.device_type).xp, on_complete)
                call_compute(self.fn, octx, self.ins, self.req, self.outs, k.params)
            return run_async

        def run(rctx):
            octx = self.octx.get(is_train)
            if octx is None or octx.run_ctx is not rctx:
                octx = self.octx[is_train] = OpContext(is_train, rctx, k.requested,
                                                       _device.get(rctx.ctx.device_type).xp)
            if not self.timing:
                call_compute(self.fn, octx, self.ins, self.req, self.outs, k.params)
                return
            t = perf_counter()
            call_compute(self.fn, octx, self.ins, self.req, self.outs, k.params)
            self._observe(perf_counter() - t)
        return run

    def _observe(self, seconds):
        """The device's inline policy settles ``cheap`` after the first few runs, as on the
        imperative path; a segment is cheap (runs at once where pushed) while all its nodes
        are."""
        self.policy.observe(self, seconds)
        if not self.timing:
            for seg in self.segs:
                seg.update_cheap()


def _unlink(runs):
    """Break the cycle each run is in (run -> its segments -> their operators -> the pushed
    function -> run) when its instance goes: the arena views the runs hold are then freed
    as soon as the engine ran what was pushed on them, not at the next garbage collection
    (a dropped CachedOp's arena, in a loop of large hybridized calls)."""
    for run in runs:
        if run is not None:
            run.segs = []


def _zeros(shape, dtype, ctx):
    from ..ndarray._copies import filled
    return filled(shape, dtype, ctx, 0)
