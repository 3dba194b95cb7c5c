"""``invoke``: the one path every imperative op call takes (MXNet's ``Imperative::Invoke``).

Per (op, kwargs, context, input signature) a ``Plan`` is made once (``_plan``). A call
then takes four steps: make or check the outputs, list the engine vars (inputs const;
outputs, mutated inputs and resources mutate), push the kernel, record the op for
autograd while recording. Also here: the generated ``mx.nd.<op>`` functions
(``op_function``) and the NDArray layer's other engine pushes (``push``).

This module sits below the NDArray class, whose operators call ``invoke``; ``ndarray.py``
tells it the class of the arrays it makes (``use_array_class``), as MXNet's frontend does.
"""

from __future__ import annotations

from operator import attrgetter
from time import perf_counter

from .._runtime import recipe as _recipe, tape as _tape
from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime import registry as _registry
from .._runtime import storage as _storage
from .._runtime.tape import state as _state
from .._runtime.base import MXNetError, ShapeError
from .._runtime.context import current_context
from .._runtime.engine import FnProperty, Var
from .._runtime.opctx import BoundState, OpContext, OpReqType, call_compute
from .._runtime.opfunc import make_op_function
from ._plan import HOST_TYPES, make_plan

__all__ = ["invoke", "invoke_params", "invoke_name", "op_function", "new_array", "from_host",
           "push", "array_class", "use_array_class", "use_sparse_dispatch", "SparseOut"]

_plans: dict = {}
_PLANS_MAX = 8192
_opdefs: dict = {}
_data_params: dict = {}    # (opdef, kwargs) -> params, for ops sized by their data
_functions: dict = {}
_WRITE, _NULL, _INPLACE = OpReqType.WRITE_TO, OpReqType.NULL, OpReqType.WRITE_INPLACE
_sig_of = attrgetter("_sig")
_NDArray = None            # the NDArray class (use_array_class)
_new_array = None          # its constructor, NDArray._new
_sparse_dispatch = None    # runs an op given a sparse array (use_sparse_dispatch)


class SparseOut(Exception):
    """Raised before anything is pushed when an ``out=`` array is sparse: the call goes to
    the sparse dispatch instead (a try costs nothing on the dense path)."""


def use_sparse_dispatch(fn) -> None:
    """``fn(opdef, inputs, kwargs, out, ctx)`` runs every op call involving a sparse array
    (``_sparse_dispatch``); sparse arrays have no plan signature, so only calls that miss
    the plan cache look for them."""
    global _sparse_dispatch
    _sparse_dispatch = fn


def _any_sparse(arrays) -> bool:
    return any(getattr(a, "stype", "default") != "default" for a in arrays)


def array_class():
    """The NDArray class."""
    return _NDArray


def use_array_class(cls) -> None:
    """Make ``cls`` (NDArray) the class of every array this module makes."""
    global _NDArray, _new_array
    _NDArray, _new_array = cls, cls._new


# -- entry points --------------------------------------------------------------------------
def invoke(opdef, inputs, kwargs, out=None, ctx=None):
    """Run ``opdef`` on NDArray ``inputs`` with MXNet-style ``kwargs``; returns the visible
    output(s). ``out`` (an NDArray or list) receives the results; ``ctx`` places ops
    without inputs."""
    if not inputs and ctx is None:
        ctx = current_context()
    try:
        key = (opdef, tuple(kwargs.items()), ctx, tuple(map(_sig_of, inputs)))
        plan = _plans.get(key)
    except (TypeError, AttributeError):      # unhashable kwargs, or an input not an NDArray
        key = plan = None
    if plan is None:
        if _any_sparse(inputs):
            return _sparse_dispatch(opdef, inputs, kwargs, out, ctx)
        if opdef.get_attr("FInferShapeFromData") is not None:   # never cached: off the hot path
            return _invoke_from_data(opdef, kwargs, inputs, out, ctx)
        plan = _new_plan(opdef, opdef.parse_params(kwargs), inputs, ctx, key)
    try:
        return _run(plan, inputs, out)
    except SparseOut:
        return _sparse_dispatch(opdef, inputs, kwargs, out, ctx)


def _invoke_from_data(opdef, kwargs, inputs, out, ctx):
    """An op whose output shapes depend on its inputs' values (``FInferShapeFromData``, as
    MXNet's boolean_mask): wait for the inputs, size the outputs from their values, run."""
    for i, a in enumerate(inputs):
        if not isinstance(a, _NDArray):
            raise MXNetError(f"Operator {opdef.name!r}: input {i} must be an NDArray, got "
                             f"{type(a).__name__}")
    try:     # one params object per kwargs, so that the plans below are keyed stably
        pkey = (opdef, tuple(kwargs.items()))
        params = _data_params.get(pkey)
    except TypeError:
        pkey = params = None
    if params is None:
        params = opdef.parse_params(kwargs)
        if pkey is not None:
            _data_params[pkey] = params
    return invoke_from_data(opdef, params, inputs, out, ctx)


def invoke_from_data(opdef, params, inputs, out=None, ctx=None, all_outputs=False):
    """``invoke_params`` of an op with ``FInferShapeFromData``: its outputs sized from the
    inputs' values (waited for)."""
    shapes = opdef.get_attr("FInferShapeFromData")(params, [a.asnumpy() for a in inputs])
    _, types = opdef.get_attr("FInferType")(params, [a.dtype for a in inputs],
                                            [None] * len(shapes))
    return invoke_params(opdef, params, inputs, out, ctx, all_outputs,
                         out_specs=[(tuple(s), t) for s, t in zip(shapes, types)])


def invoke_params(opdef, params, inputs, out=None, ctx=None, all_outputs=False, req=None,
                  state=None, out_specs=None):
    """``invoke`` with already parsed params (graph nodes built by gradient rules);
    ``state``: for a stateful backward op, the state its forward application made, and
    ``out_specs`` its outputs' (shape, dtype), known from the forward's inputs."""
    if not inputs and ctx is None:
        ctx = current_context()
    try:   # by the params' identity: the plan keeps them alive, and hashing a model is slow
        key = (opdef, id(params), ctx, tuple(map(_sig_of, inputs)))
        if out_specs is not None:
            key += (tuple(out_specs),)
        plan = _plans.get(key)
    except AttributeError:
        key = plan = None
    if plan is None:
        if _any_sparse(inputs):
            if state is None:
                outs = _sparse_dispatch(opdef, inputs, None, out, ctx, params)
                return outs if all_outputs else outs[0] if len(outs) == 1 else outs
            # a stateful backward (a custom op's) given sparse gradients: storage fallback
            inputs = [a.tostype("default") if a.stype != "default" else a for a in inputs]
            key = None
        plan = _new_plan(opdef, params, inputs, ctx, key, out_specs)
    return _run(plan, inputs, out, all_outputs, req, state)


def invoke_name(name, inputs, kwargs, out=None):
    """``invoke`` of the registered op ``name`` (used by operators and methods)."""
    opdef = _opdefs.get(name)
    if opdef is None:
        opdef = _opdefs[name] = _registry.get(name)
    return invoke(opdef, inputs, kwargs, out)


def _new_plan(opdef, params, inputs, ctx, key, out_specs=None):
    for i, a in enumerate(inputs):
        if not isinstance(a, _NDArray):
            raise MXNetError(f"Operator {opdef.name!r}: input {i} must be an NDArray, got "
                             f"{type(a).__name__} {a!r:.60}")
    plan = make_plan(opdef, params, inputs, ctx, out_specs)
    if key is not None:
        if len(_plans) >= _PLANS_MAX:
            _plans.clear()
        _plans[key] = plan
    return plan


# -- a call --------------------------------------------------------------------------------
# One piece on purpose: each helper call would add ~0.1 µs, ~1.5% of a 1-element op (~7 µs).
def _run(plan, inputs, out, all_outputs=False, req=None, state=None):
    if out is None:
        outs, out_views, mutate = _new_outputs(plan, inputs)
        if plan.alias and req is not None:      # an aliased output is never written
            req = list(req)
            for o, _ in plan.alias:
                req[o] = _NULL
    else:
        outs, out_views, mutate, req = _given_outputs(plan, inputs, out, req)
    in_views, const = [], []                 # plain loops: no comprehension frame per call
    for a in inputs:
        v = a._v
        in_views.append(a._data() if v is None else v)
        const.append(a._chunk.var)
    const, mutate = _op_vars(plan, inputs, const, mutate, out is not None)
    if req is None:
        req = plan.req
    fn = plan.fcompute
    if fn is None:                        # a stateful op: the kernel bound to its state
        fn, state = _stateful_kernel(plan, state)
    if plan.is_async:
        _engine.get().push_async(_Job((plan, fn, in_views, req, out_views, _state.training))
                                 .run_async, plan.ctx, const, mutate, name=plan.name)
    elif any(req) or plan.mutate or plan.res_vars:   # else every output is aliased or unused
        _engine.get().push_kernel(
            _Job((plan, fn, in_views, req, out_views, _state.training)).run, plan.ctx, const,
            mutate, plan.name, plan.cheap,
            fresh=out is None and not plan.mutate and not plan.res_vars, leaf=True)
    if _state.recording:
        saves = plan.saves
        if saves is None:
            saves = plan.saves = (*_recipe.saves(plan.op, plan.params, plan.n_in),
                                  [(s, t, plan.ctx) for s, t in plan.out_specs])
        _tape.record(plan.op, plan.params, inputs, outs, saves, state)
    if all_outputs:
        return outs
    if plan.n_vis == 1:
        return outs[0] if out is None or isinstance(out, _NDArray) else outs[:1]
    return outs[:plan.n_vis]


def _new_outputs(plan, inputs):
    """Fresh output arrays (an aliased output is its input's data), their device views and
    their vars."""
    outs, views, mutate = [], [], []
    view = plan.view
    for spec in plan.alloc:
        if type(spec) is int:            # FInplaceIdentity: input ``spec``'s data itself
            o = inputs[spec]._alias()
            outs.append(o)
            views.append(o._data())
            continue
        shape, dtype, pool, nbytes, sig = spec
        var = Var()
        h = pool.alloc(nbytes, var)
        v = view(h.raw, dtype, shape, 0)
        outs.append(_new_array(h, 0, shape, dtype, sig, v))
        views.append(v)
        mutate.append(var)
    return outs, views, mutate


def _given_outputs(plan, inputs, out, req):
    """The ``out=`` arrays (checked), their device views and vars, and the write requests."""
    if type(out) is _NDArray and len(plan.out_sigs) == 1 and out._sig == plan.out_sigs[0]:
        outs = [out]                         # the usual case: ``a += b``, ``op(..., out=a)``
    else:
        outs = _check_out(plan, out)
    if _state.recording:
        _tape.check_assignable(outs, inputs)
    if req is None:
        if plan.alias:                       # given outputs are written, never aliased
            req = [_WRITE] * len(outs)
        elif plan.inplace:
            req = _inplace_req(plan, inputs, outs)
    views, mutate = [], []
    for o in outs:
        v = o._v
        views.append(o._data() if v is None else v)
        mutate.append(o._chunk.var)
    return outs, views, mutate, req


def _op_vars(plan, inputs, const, mutate, given):
    """The kernel's engine vars: inputs' ``const``; outputs', mutated inputs' and resources'
    ``mutate``; without repeats, and a var both read and written only in ``mutate`` (the
    engine's ``var_lists`` written out for these short lists: 0.4 us less per ``a += 1``)."""
    if plan.mutate:
        for i in plan.mutate:
            mutate.append(inputs[i]._chunk.var)
    if plan.res_vars:
        mutate += plan.res_vars
    if not given and not plan.mutate:     # fresh outputs are no input's: fold repeated inputs
        if len(const) == 2:
            if const[0] is const[1]:
                del const[1]
        elif len(const) > 2:
            const = list(dict.fromkeys(const))
        return const, mutate
    if len(mutate) > 1:
        mutate = list(dict.fromkeys(mutate))
    kept = []
    for v in const:
        if v not in mutate and v not in kept:
            kept.append(v)
    return kept, mutate


def _stateful_kernel(plan, state):
    """(kernel, what recording keeps) of a stateful op's application: a forward makes its
    state (``FCreateOpState``) and records it with its input shapes and dtypes (its
    backward's output specs); a backward is handed its forward's state."""
    if plan.create_state is not None:
        state = plan.create_state(plan.params, plan.ctx, *plan.in_specs)
        return BoundState(plan.stateful, state), (state, *plan.in_specs)
    if state is None:
        raise MXNetError(f"Operator {plan.name!r} is the backward of a stateful op and runs "
                         f"only with the state of its forward application (through autograd "
                         f"or an executor)")
    return BoundState(plan.stateful, state), None


class _Job(tuple):
    """One pushed op application, ``(plan, kernel, input views, req, output views,
    is_train)``; its ``run`` (``run_async`` for an async op) is the function pushed. A tuple
    is made in C: no ``__init__`` frame per op."""

    __slots__ = ()

    def run(self, rctx):
        plan, fn, ins, req, outs, is_train = self
        octx = plan.octx[is_train]
        if octx is None or octx.run_ctx is not rctx:
            octx = plan.octx[is_train] = OpContext(is_train, rctx, plan.requested, plan.xp)
        if not plan.timing:
            call_compute(fn, octx, ins, req, outs, plan.params)
            return
        t = perf_counter()
        call_compute(fn, octx, ins, req, outs, plan.params)
        plan.policy.observe(plan, perf_counter() - t)

    def run_async(self, rctx, on_complete):
        plan, fn, ins, req, outs, is_train = self
        call_compute(fn, OpContext(is_train, rctx, plan.requested, plan.xp, on_complete),
                     ins, req, outs, plan.params)


def _inplace_req(plan, inputs, outs):
    """WRITE_INPLACE for outputs that are the very array of an input the op may overwrite
    (``FInplaceOption``), e.g. ``a += 1``."""
    req = plan.req
    for i, o in plan.inplace:
        a, b = inputs[i], outs[o]
        if a._chunk is b._chunk and a._offset == b._offset and a._shape == b._shape:
            if req is plan.req:
                req = list(req)
            req[o] = _INPLACE
    return req


def _host_alike(have, want):
    """Same shape, dtype and device id, both in host memory (cpu, cpu_pinned, cpu_shared):
    MXNet lets an op on one of them write into an ``out=`` on another."""
    return have[:2] == want[:2] and have[3] == want[3] and {have[2], want[2]} <= HOST_TYPES


def _check_out(plan, out):
    outs = [out] if isinstance(out, _NDArray) else list(out)
    if len(outs) != len(plan.out_specs):
        if len(outs) == plan.n_vis:
            outs += [new_array(s, t, plan.ctx) for s, t in plan.out_specs[plan.n_vis:]]
        else:
            raise MXNetError(f"Operator {plan.name!r}: out= expects {plan.n_vis} array(s), "
                             f"got {len(outs)}")
    for i, (o, sig) in enumerate(zip(outs, plan.out_sigs)):
        if not isinstance(o, _NDArray):
            raise MXNetError(f"Operator {plan.name!r}: out[{i}] must be an NDArray, got "
                             f"{type(o).__name__}")
        if o.stype != "default":
            raise SparseOut()
        if o._sig != sig and not _host_alike(o._sig, sig):
            s, t = plan.out_specs[i]
            raise ShapeError(f"Operator {plan.name!r}: out[{i}] is {o._shape} {o._dtype} on "
                             f"{o._ctx}, but the op produces {s} {t} on {plan.ctx}")
    return outs


# -- the generated mx.nd functions, arrays and other pushes of the NDArray layer -----------
def op_function(name):
    """The ``mx.nd`` function of op ``name`` (or an alias), built on first use."""
    fn = _functions.get(name)
    if fn is None:
        fn = _functions[name] = make_op_function(_registry.get(name), _call, name)
    return fn


def op_attribute(module, name, prefix=""):
    """``__getattr__`` of the modules of generated op functions (``mx.nd``, ``mx.nd.op``,
    ``mx.nd._internal``, ``mx.nd.contrib`` with prefix ``_contrib_``): op ``prefix + name``'s
    function, kept in ``module``, or an AttributeError saying why there is none
    (OpNotFound is a KeyError: ``hasattr`` keeps working)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        fn = op_function(prefix + name)
    except KeyError as exc:
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}: "
                             f"{exc.args[0]}") from None
    setattr(module, name, fn)
    return fn


def forget(opdef) -> None:
    """Drop what is cached for ``opdef``'s names (it was just (re)defined)."""
    for n in [opdef.name, *opdef.aliases]:
        _functions.pop(n, None)
        _opdefs.pop(n, None)


def _call(opdef, inputs, kwargs, out, name):
    ctx = None
    if "ctx" in kwargs:
        ctx = kwargs.pop("ctx")
        if opdef.param_model is not None and "ctx" in opdef.param_model.model_fields:
            kwargs["ctx"] = str(ctx) if ctx is not None else None
    return invoke(opdef, inputs, kwargs, out, ctx)


def new_array(shape, dtype, ctx):
    """An uninitialised NDArray of ``shape`` (a tuple) and numpy ``dtype`` on ``ctx``."""
    n = dtype.itemsize
    for s in shape:
        n *= s
    return _new_array(_storage.pool(ctx).alloc(n, Var()), 0, shape, dtype, None, None)


def from_host(host, ctx):
    """A new NDArray on ``ctx`` holding a copy of numpy array ``host``; a fresh block nobody
    else references yet is written at once, as MXNet does."""
    out = new_array(host.shape, host.dtype, ctx)
    dev = _device.get(ctx.device_type)
    dev.copy(out._data(), host if ctx.device_type == "cpu" else dev.from_host(host, ctx.device_id))
    return out


def push(fn, ctx, const, mutate, name, nbytes, prop=FnProperty.NORMAL):
    """Push ``fn(run_ctx)`` for the NDArray layer (copies, fills, index writes); whether it
    may run inline on this thread is the device's inline policy's word for ``nbytes``."""
    _engine.get().push_sync(fn, ctx, const, mutate, prop, name=name,
                            cheap=_device.get(ctx.device_type).inline_policy.cheap(nbytes, prop))
