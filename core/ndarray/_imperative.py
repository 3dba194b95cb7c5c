"""``invoke``: the one path every imperative op call takes (MXNet's ``Imperative::Invoke``).

Per (op, kwargs, input signature) a ``_Plan`` is built once: parsed params,
inferred output shapes/dtypes, the device kernel, resources, the engine
lane. A call then allocates outputs, pushes the kernel with input vars as
const and output (and mutated-input, resource) vars as mutate, and records
the op for autograd when recording.
"""

from __future__ import annotations

from operator import attrgetter
from time import perf_counter

from .. import engine as _engine
from .. import registry as _registry
from .. import resource as _resource
from .. import storage as _storage
from ..autograd import _check_assignable, _record, _saves, _state
from ..base import MXNetError, ShapeError, TypeInferError
from ..context import current_context
from ..opctx import OpContext, OpReqType, call_compute
from ..engine import Var
from ..engine._types import var_lists
from .ndarray import _CHEAP_BYTES, NDArray, _alloc, _as_ctx, _Chunk, _dev

__all__ = ["invoke", "invoke_params", "invoke_name"]

_plans: dict = {}
_opdefs: dict = {}
_PLANS_MAX = 8192
_WRITE, _NULL = OpReqType.WRITE_TO, OpReqType.NULL
_TIMED_RUNS = 3            # kernel runs timed per plan before ``cheap`` is settled
_INLINE_SECONDS = 1e-3     # kernels faster than this run inline on the pushing thread
_new = object.__new__
_sig_of = attrgetter("_sig")


class _Plan:
    __slots__ = ("op", "name", "params", "ctx", "out_specs", "n_vis", "fcompute", "req",
                 "mutate", "requested", "res_vars", "xp", "cheap", "n_in", "inplace", "alloc",
                 "view", "octx", "timed", "fastest", "out_sigs", "alias", "saves")

    def observe(self, seconds):
        """Time of one kernel run. After the first few, ``cheap`` (run inline when ready,
        never handed to a worker) follows the fastest: under the GIL a hand-off only pays
        for kernels long enough to hide a thread switch."""
        self.fastest = min(self.fastest, seconds)
        self.timed += 1
        if self.timed == _TIMED_RUNS:
            self.cheap = self.fastest < _INLINE_SECONDS and not self.requested


def invoke(opdef, inputs, kwargs, out=None, ctx=None):
    """Run ``opdef`` on NDArray ``inputs`` with MXNet-style ``kwargs``; returns the visible
    output(s). ``out`` (an NDArray or list) receives the results; ``ctx`` places ops
    without inputs."""
    if not inputs and ctx is None:
        ctx = current_context()
    try:
        key = (opdef, tuple(kwargs.items()), ctx, tuple(map(_sig_of, inputs)))
        plan = _plans.get(key)
    except (TypeError, AttributeError):
        key = plan = None
    if plan is None:
        plan = _make_plan(opdef, opdef.parse_params(kwargs), inputs, ctx, key)
    return _run(plan, inputs, out)


def invoke_name(name, inputs, kwargs, out=None):
    """``invoke`` of the registered op ``name`` (used by operators and methods)."""
    opdef = _opdefs.get(name)
    if opdef is None:
        opdef = _opdefs[name] = _registry.get(name)
    return invoke(opdef, inputs, kwargs, out)


def invoke_params(opdef, params, inputs, out=None, ctx=None, all_outputs=False, req=None):
    """``invoke`` with already parsed params (graph nodes built by gradient rules)."""
    if not inputs and ctx is None:
        ctx = current_context()
    try:   # by the params' identity: the plan keeps them alive, and hashing a model is slow
        key = (opdef, id(params), ctx, tuple(map(_sig_of, inputs)))
        plan = _plans.get(key)
    except AttributeError:
        key = plan = None
    if plan is None:
        plan = _make_plan(opdef, params, inputs, ctx, key)
    return _run(plan, inputs, out, all_outputs, req)


def _run(plan, inputs, out, all_outputs=False, req=None):
    ctx = plan.ctx
    if out is None:
        outs = []
        out_views = []
        mutate = []
        view = plan.view
        for spec in plan.alloc:
            if type(spec) is int:            # FInplaceIdentity: input ``spec``'s data itself
                o = inputs[spec]._alias()
                outs.append(o)
                out_views.append(o._data())
                continue
            shape, dtype, pool, cap, sig = spec
            raw = pool.take(cap)
            var = Var()
            o = _new(NDArray)                # NDArray._wrap, inlined: the hot path
            o._chunk = _Chunk(raw, var, ctx, pool, cap)
            o._offset, o._shape, o._dtype, o._ctx, o._sig, o._ag = 0, shape, dtype, ctx, sig, None
            o._v = v = view(raw, dtype, shape, 0)
            outs.append(o)
            out_views.append(v)
            mutate.append(var)
        if plan.alias and req is not None:
            req = list(req)
            for o, _ in plan.alias:
                req[o] = _NULL
    else:
        outs = _check_out(plan, out)
        if _state.recording:
            _check_assignable(outs)
        if plan.alias and req is None:           # given outputs are written, never aliased
            req = [_WRITE] * len(outs)
        if plan.inplace and req is None:
            req = _inplace_req(plan, inputs, outs)
        out_views = [o._data() for o in outs]
        mutate = [o._chunk.var for o in outs]
    in_views, const = [], []              # a plain loop: no comprehension frame per call
    for a in inputs:
        v = a._v
        in_views.append(a._data() if v is None else v)
        const.append(a._chunk.var)
    if plan.mutate:
        mutate += [inputs[i]._chunk.var for i in plan.mutate]
    if plan.res_vars:
        mutate += plan.res_vars
    if out is not None or plan.mutate:
        const, mutate = var_lists(const, mutate)
    elif len(const) == 2:            # fresh outputs: only a repeated input to fold
        if const[0] is const[1]:
            del const[1]
    elif len(const) > 2:
        const = list(dict.fromkeys(const))
    if req is None:
        req = plan.req
    if any(req) or plan.mutate or plan.res_vars:     # else every output is aliased or unused
        job = _new(_Job)                     # _Job(...), inlined: the hot path
        job.plan, job.ins, job.req, job.outs, job.is_train = (plan, in_views, req, out_views,
                                                              _state.training)
        _engine.get()._push_lists(job.run, ctx, const, mutate, plan.name, plan.cheap,
                                  fresh=out is None and not plan.mutate and not plan.res_vars,
                                  leaf=True)
    if _state.recording:
        saves = plan.saves
        if saves is None:
            saves = plan.saves = (*_saves(plan.op, plan.params, plan.n_in),
                                  [(s, t, plan.ctx) for s, t in plan.out_specs])
        _record(plan.op, plan.params, inputs, outs, saves)
    if all_outputs:
        return outs
    if plan.n_vis == 1:
        return outs[0] if out is None or isinstance(out, NDArray) else outs[:1]
    return outs[:plan.n_vis]


class _Job:
    """One pushed op application: runs the plan's kernel on the arrays bound at push time."""

    __slots__ = ("plan", "ins", "req", "outs", "is_train")

    def run(self, rctx):
        plan = self.plan
        octx = plan.octx[self.is_train]
        if octx is None or octx.run_ctx is not rctx:
            octx = plan.octx[self.is_train] = OpContext(self.is_train, rctx, plan.requested,
                                                        plan.xp)
        if plan.timed >= _TIMED_RUNS:
            call_compute(plan.fcompute, octx, self.ins, self.req, self.outs, plan.params)
            return
        t = perf_counter()
        call_compute(plan.fcompute, octx, self.ins, self.req, self.outs, plan.params)
        plan.observe(perf_counter() - t)


def _inplace_req(plan, inputs, outs):
    """WRITE_INPLACE for outputs that are the very array of an input the op may overwrite
    (``FInplaceOption``), e.g. ``a += 1``."""
    req = plan.req
    for i, o in plan.inplace:
        a, b = inputs[i], outs[o]
        if a._chunk is b._chunk and a._offset == b._offset and a._shape == b._shape:
            if req is plan.req:
                req = list(req)
            req[o] = OpReqType.WRITE_INPLACE
    return req


def _check_out(plan, out):
    if type(out) is NDArray and out._sig == plan.out_sigs[0] and len(plan.out_sigs) == 1:
        return [out]                         # the usual case: ``a += b``, ``op(..., out=a)``
    outs = [out] if isinstance(out, NDArray) else list(out)
    if len(outs) != len(plan.out_specs):
        if len(outs) == plan.n_vis:
            outs += [_alloc(s, t, plan.ctx) for s, t in plan.out_specs[plan.n_vis:]]
        else:
            raise MXNetError(f"Operator {plan.name!r}: out= expects {plan.n_vis} array(s), "
                             f"got {len(outs)}")
    for i, (o, sig) in enumerate(zip(outs, plan.out_sigs)):
        if not isinstance(o, NDArray):
            raise MXNetError(f"Operator {plan.name!r}: out[{i}] must be an NDArray, got "
                             f"{type(o).__name__}")
        if o._sig != sig:
            s, t = plan.out_specs[i]
            raise ShapeError(f"Operator {plan.name!r}: out[{i}] is {o._shape} {o._dtype} on "
                             f"{o._ctx}, but the op produces {s} {t} on {plan.ctx}")
    return outs


def _make_plan(opdef, params, inputs, ctx, key):
    name = opdef.name
    for i, a in enumerate(inputs):
        if not isinstance(a, NDArray):
            raise MXNetError(f"Operator {name!r}: input {i} must be an NDArray, got "
                             f"{type(a).__name__} {a!r:.60}")
    n_in = opdef.num_inputs(params)
    if n_in != len(inputs):
        names = opdef.list_input_names(params)
        raise MXNetError(f"Operator {name!r}: expected {n_in} input(s) ({', '.join(names)}), "
                         f"got {len(inputs)}")
    if inputs:
        ctx = inputs[0]._ctx
        for i, a in enumerate(inputs):
            if a._ctx != ctx:
                raise MXNetError(f"Operator {name!r}: all inputs must be on one context; input 0 "
                                 f"is on {ctx} but input {i} is on {a._ctx} (copy it with "
                                 f"as_in_context)")
    else:
        ctx = _as_ctx(getattr(params, "ctx", None)) or _as_ctx(ctx) or current_context()
    n_out = opdef.num_outputs(params)
    shapes = _infer(opdef, "FInferShape", params, [a._shape for a in inputs], n_out, ShapeError)
    types = _infer(opdef, "FInferType", params, [a._dtype for a in inputs], n_out,
                   TypeInferError)
    fcompute = opdef.get_attr(f"FCompute<{ctx.device_type}>")
    if fcompute is None:
        have = sorted(k[9:-1] for k in opdef.attrs if k.startswith("FCompute<"))
        raise MXNetError(f"Operator {name!r} has no FCompute<{ctx.device_type}> kernel for "
                         f"{ctx}; kernels exist for: {', '.join(have) or 'no device'}")
    plan = _Plan()
    plan.op, plan.name, plan.params, plan.ctx, plan.n_in = opdef, name, params, ctx, n_in
    plan.out_specs = list(zip(shapes, types))
    plan.out_sigs = [(s, t, ctx.device_type, ctx.device_id) for s, t in plan.out_specs]
    plan.n_vis = opdef.num_visible_outputs(params)
    plan.fcompute = fcompute
    plan.alias = _identity_pairs(opdef, params, inputs, plan.out_specs)
    plan.req = [_WRITE] * n_out
    for o, _ in plan.alias:
        plan.req[o] = _NULL
    plan.mutate = opdef.mutate_inputs(params)
    ipo = opdef.get_attr("FInplaceOption")
    plan.inplace = [tuple(p) for p in ipo(params)] if ipo is not None else []
    rr = opdef.get_attr("FResourceRequest")
    plan.requested = [_resource.request(ctx, r) for r in rr(params)] if rr is not None else []
    plan.res_vars = [r.var for r in plan.requested]
    dev = _dev(ctx)
    plan.xp, plan.view = dev.xp, dev.view
    plan.octx = [None, None]          # OpContext by is_train, made on first run
    pool = _storage.pool(ctx)
    plan.alloc = [(s, t, pool, pool.size_class(t.itemsize * _prod(s)), sig)
                  for (s, t), sig in zip(plan.out_specs, plan.out_sigs)]
    for o, i in plan.alias:
        plan.alloc[o] = i
    nbytes = sum(t.itemsize * _prod(s) for s, t in plan.out_specs)
    plan.cheap = nbytes <= _CHEAP_BYTES and not plan.requested   # until timed
    plan.timed, plan.fastest = 0, float("inf")
    plan.saves = None                 # what recording keeps (autograd), found on first use
    if key is not None:
        if len(_plans) >= _PLANS_MAX:
            _plans.clear()
        _plans[key] = plan
    return plan


def _identity_pairs(opdef, params, inputs, out_specs):
    """(output, input) pairs that ``FInplaceIdentity`` declares equal, where shape and dtype
    match; the first claim for an output wins."""
    ident = opdef.get_attr("FInplaceIdentity")
    if ident is None:
        return []
    pairs, seen = [], set()
    for (i, o), same in zip(opdef.get_attr("FInplaceOption")(params), ident(params)):
        if same and o not in seen and (inputs[i]._shape, inputs[i]._dtype) == out_specs[o]:
            pairs.append((o, i))
            seen.add(o)
    return pairs


def _infer(opdef, attr, params, known, n_out, err):
    import numpy as np
    fn = opdef.get_attr(attr)
    if fn is None:
        if attr == "FInferType" and known:
            return [known[0]] * n_out
        raise err(f"Operator {opdef.name!r} has no {attr}")
    ins, outs = fn(params, list(known), [None] * n_out)
    what = "shape" if attr == "FInferShape" else "dtype"
    for i, (a, b) in enumerate(zip(known, ins)):
        if b is None:
            continue
        if (tuple(b) != tuple(a)) if what == "shape" else (np.dtype(b) != a):
            raise err(f"Operator {opdef.name!r}: input {i} has {what} {a} but the op needs {b}")
    if len(outs) != n_out or any(o is None for o in outs):
        raise err(f"Operator {opdef.name!r}: could not infer the output {what}s from inputs "
                  f"{known} (got {outs})")
    if what == "shape":
        return [tuple(int(s) for s in o) for o in outs]
    return [np.dtype(o) for o in outs]


def _prod(shape):
    n = 1
    for s in shape:
        n *= s
    return n
