"""The registered op ``Custom`` (and ``_backward_Custom``): Python operators written with
``mx.operator.CustomOp``/``CustomOpProp`` run as a stateful, async op, as in MXNet.

Parameters are ``op_type`` plus the operator's own keyword arguments, kept as strings and
handed to its ``CustomOpProp`` constructor. The state of an application is the
``CustomOp`` that ``create_operator`` made for it; the backward uses the same one.

Running: the engine starts the op, which hands the Python ``forward``/``backward`` to a
custom-op thread and returns; that code sees NDArrays over the op's memory with vars of
their own, so the ``mx.nd`` calls it makes are ordinary engine work that never waits on
the op itself. When it returns, a last engine function waits for that work and completes
the op, passing on the first error (raised in the Python code or in the work it pushed):
it surfaces once, at the wait on the op's outputs.
"""

from __future__ import annotations

import threading
from collections import deque

import numpy as np
from pydantic import ConfigDict

from ._runtime import tape as _tape
from ._runtime import engine as _engine
from ._runtime import registry
from ._runtime import storage as _storage
from ._runtime.base import MXNetError, ParamError, did_you_mean, is_np_shape
from ._runtime.engine import FnProperty, OprHandle, Var, _events
from ._runtime.fork import in_child
from ._runtime.graph import Node, NodeEntry
from ._runtime.params import Param, format_value

__all__ = ["CustomParam", "define"]

_REQ = ("null", "write", "inplace", "add")
props: dict = {}                  # op_type -> CustomOpProp subclass (mx.operator.register)


class CustomParam(Param):
    """``op_type`` and the operator's keyword arguments (strings, as MXNet passes them)."""

    model_config = ConfigDict(frozen=True, extra="allow")
    op_type: str

    @classmethod
    def parse(cls, kwargs, op="Custom"):
        op_type = kwargs.get("op_type")
        if op_type is None:
            raise ParamError(f"Operator {op!r}: required parameter 'op_type' is missing (the "
                             f"name given to mx.operator.register)")
        op_type = str(op_type)
        if op_type not in props:
            raise MXNetError(f"Custom: op_type {op_type!r} is not registered"
                             f"{did_you_mean(op_type, props)}; registered: "
                             f"{', '.join(sorted(props)) or 'none'}")
        extra = {str(k): v if isinstance(v, str) else format_value(v)
                 for k, v in kwargs.items() if k != "op_type"}
        return cls(op_type=op_type, **extra)

    def to_mxnet_dict(self, include_defaults=False) -> dict[str, str]:
        return {"op_type": self.op_type, **(self.__pydantic_extra__ or {})}


class _Layout:
    """One parameter set's ``CustomOpProp`` and what MXNet's attribute parser reads from it:
    counts, names, and the backward dependencies (ids: output gradients, then inputs, then
    outputs)."""

    def __init__(self, params):
        self.prop = prop = props[params.op_type](**(params.__pydantic_extra__ or {}))
        self.args = list(prop.list_arguments())
        self.outs = list(prop.list_outputs())
        self.auxs = list(prop.list_auxiliary_states())
        n_in, n_out = len(self.args), len(self.outs)
        ids = list(range(2 * n_out + n_in))
        self.deps = [int(d) for d in prop.declare_backward_dependency(
            ids[:n_out], ids[n_out:n_out + n_in], ids[n_out + n_in:])]


_layouts: dict = {}


def layout(params) -> _Layout:
    lay = _layouts.get(params)
    if lay is None or lay.prop.__class__ is not props[params.op_type]:   # re-registered
        lay = _layouts[params] = _Layout(params)
    return lay


# -- attributes ------------------------------------------------------------------------
def _infer_shape(params, ins, outs):
    lay = layout(params)
    n_in = len(lay.args)
    # as MXNet, an unknown input shape is handed over as [] (a custom loss infers its
    # label's shape from the data's); a rule that cannot do without it waits for it
    try:
        res = lay.prop.infer_shape([[] if s is None else list(s) for s in ins[:n_in]])
    except Exception:
        if all(s is not None for s in ins[:n_in]):
            raise
        return ins, outs
    res = _three(res, "infer_shape", lay)
    scalar_ok = is_np_shape()            # legacy shapes: () is unknown too
    i, o, a = ([tuple(int(d) for d in s) if s is not None and (len(s) or scalar_ok) else None
                for s in part] for part in res)
    return i + a, o


def _infer_type(params, ins, outs):
    lay = layout(params)
    n_in = len(lay.args)
    given = [None if t is None else np.dtype(t).type for t in ins[:n_in]]
    if n_in and given[0] is None:
        return ins, outs
    res = _three(lay.prop.infer_type(given), "infer_type", lay)
    i, o, a = ([None if t is None else np.dtype(t) for t in part] for part in res)
    return i + a, o


def _three(ret, what, lay):
    """(inputs, outputs, aux) from an ``infer_*`` result of 2 or 3 lists, checked."""
    if len(ret) not in (2, 3):
        raise MXNetError(f"Custom({lay.prop.__class__.__name__}).{what} must return 2 or 3 "
                         f"lists, got {len(ret)}")
    i, o, a = (list(ret) + [[]])[:3]
    for part, want, kind in ((i, lay.args, "input"), (o, lay.outs, "output"),
                             (a, lay.auxs, "aux state")):
        if len(part) != len(want):
            raise MXNetError(f"Custom({lay.prop.__class__.__name__}).{what}: expected "
                             f"{len(want)} {kind} entries, got {len(part)}")
    return list(i), list(o), list(a)


def _gradient(node, out_grads):
    """``_backward_Custom`` reads what ``declare_backward_dependency`` names, then the aux
    states; it shares the forward node's state (a control dependency)."""
    lay = layout(node.params)
    n_in, n_out = len(lay.args), len(lay.outs)
    reads = []
    for d in lay.deps:
        if d < n_out:
            reads.append(out_grads[d])
        elif d < n_out + n_in:
            reads.append(node.inputs[d - n_out])
        else:
            reads.append(NodeEntry(node, d - n_out - n_in, 0))
    bwd = Node(_backward_op, node.params, reads + node.inputs[n_in:])
    bwd.control_deps.append(node)
    return [NodeEntry(bwd, i, 0) for i in range(n_in)] + [None] * len(lay.auxs)


class _Applied:
    """The state of one application: the ``CustomOp`` its ``create_operator`` made."""

    __slots__ = ("op", "lay", "op_type", "stypes")

    def __init__(self, params, ctx, in_shapes, in_dtypes):
        from .ndarray.serialization import DTYPE_TO_FLAG
        self.op_type = params.op_type
        self.lay = layout(params)
        self.stypes = None      # (inputs, outputs, aux) when the forward ran on sparse ones
        self.op = self.lay.prop.create_operator(   # dtypes as MXNet's type flags
            ctx, [list(s) for s in in_shapes], [DTYPE_TO_FLAG.get(np.dtype(t), -1)
                                                for t in in_dtypes])


# -- running ---------------------------------------------------------------------------
def forward(state, ctx, inputs, req, outputs):
    """``FStatefulCompute`` of ``Custom``: ``forward`` of the state's operator, on a
    custom-op thread."""
    op, lay = state.op, state.lay
    n_in = len(lay.args)
    in_data, aux, out_data = _wrap(inputs[:n_in], ctx), _wrap(inputs[n_in:], ctx), \
        _wrap(outputs, ctx)
    reqs = [_REQ[r] for r in req]
    _submit(lambda: op.forward(is_train=ctx.is_train, req=reqs, in_data=in_data,
                               out_data=out_data, aux=aux),
            ctx, in_data + out_data + aux, "CustomOp.forward", state.op_type)


def backward(state, ctx, inputs, req, outputs):
    """``FStatefulCompute`` of ``_backward_Custom``: ``backward`` of the state's operator,
    on a custom-op thread; values the op did not declare as backward dependencies are
    None."""
    op, lay = state.op, state.lay
    n_in, n_out = len(lay.args), len(lay.outs)
    slots = [None] * (2 * n_out + n_in)
    given = _wrap(inputs[:len(lay.deps)], ctx)
    for d, arr in zip(lay.deps, given):
        slots[d] = arr
    aux, in_grad = _wrap(inputs[len(lay.deps):], ctx), _wrap(outputs, ctx)
    reqs = [_REQ[r] for r in req]
    if state.stypes is None:
        call = lambda: op.backward(req=reqs, out_grad=slots[:n_out],  # noqa: E731
                                   in_data=slots[n_out:n_out + n_in],
                                   out_data=slots[n_out + n_in:], in_grad=in_grad, aux=aux)
    else:
        call = lambda: _sparse_backward(state, reqs, slots, in_grad, aux)  # noqa: E731
    _submit(call, ctx, given + in_grad + aux, "CustomOp.backward", "_backward_" + state.op_type)


def _sparse_backward(state, reqs, slots, in_grad, aux):
    """``backward`` of an application whose forward ran on sparse arrays: each array in the
    storage type the prop's ``infer_storage_type_backward`` names (as MXNet), the gradients
    and aux states it wrote copied back into the op's dense memory."""
    lay = state.lay
    n_in, n_out = len(lay.args), len(lay.outs)
    i_st, o_st, a_st = state.stypes
    got = lay.prop.infer_storage_type_backward(
        [s.stype if s is not None else "default" for s in slots[:n_out]], list(i_st),
        list(o_st), ["default"] * n_in, list(a_st))
    if len(got) not in (4, 5):
        raise MXNetError(f"Custom({lay.prop.__class__.__name__}).infer_storage_type_backward "
                         f"must return 4 or 5 lists, got {len(got)}")
    og, ind, od, ig, ax = (_as_stypes(arrays, stypes) for arrays, stypes in zip(
        (slots[:n_out], slots[n_out:n_out + n_in], slots[n_out + n_in:], in_grad, aux),
        list(got) + [[]] * (5 - len(got))))
    state.op.backward(req=reqs, out_grad=og, in_data=ind, out_data=od, in_grad=ig, aux=ax)
    for dst, src in zip(in_grad + aux, ig + ax):
        if src is not dst:
            src.copyto(dst)


def _as_stypes(arrays, stypes):
    """``arrays`` (None stays None) in the storage types ``stypes`` ('default' when the
    list runs short, as for aux states a 4-list answer leaves out)."""
    stypes = list(stypes) + ["default"] * (len(arrays) - len(stypes))
    return [a if a is None or a.stype == st else a.tostype(st)
            for a, st in zip(arrays, stypes)]


def sparse_forward(params, hosts, dense):
    """``FComputeSparse`` of ``Custom``: the storage types come from the prop's
    ``infer_storage_type`` (arguments cast to what it names); when any is sparse, ``forward``
    runs at once on sparse NDArrays, writing outputs of the named storage types. Returns
    (outputs then aux values, state), or None for the dense fallback."""
    from .context import current_context
    from .ndarray import sparse as _sp
    from .ndarray._imperative import from_host
    from .ndarray._sparse_array import make_sparse
    lay, ctx = layout(params), current_context()
    arrays = [from_host(h, ctx) if isinstance(h, np.ndarray) else make_sparse(h, ctx)
              for h in hosts]
    n_in = len(lay.args)
    i_st, o_st, a_st = _three(lay.prop.infer_storage_type([a.stype for a in arrays[:n_in]]),
                              "infer_storage_type", lay)
    if all(st == "default" for st in i_st + o_st + a_st):
        return None
    arrays = [a if a.stype == st else a.tostype(st) for a, st in zip(arrays, i_st + a_st)]
    shapes, dtypes = [a.shape for a in arrays], [a.dtype for a in arrays]
    _, o_shapes = _infer_shape(params, shapes, [None] * len(o_st))
    _, o_types = _infer_type(params, dtypes, [None] * len(o_st))
    outs = [_sp.zeros(st, s, ctx=ctx, dtype=t) for st, s, t in zip(o_st, o_shapes, o_types)]
    state = _Applied(params, ctx, shapes, dtypes)
    state.stypes = (i_st, o_st, a_st)
    tape = _tape.state
    prev = tape.recording, tape.training
    tape.recording = False
    try:
        with ctx:
            state.op.forward(is_train=prev[1], req=["write"] * len(outs),
                             in_data=arrays[:n_in], out_data=outs, aux=arrays[n_in:])
    finally:
        tape.recording, tape.training = prev
    host = [o._host() if o.stype != "default" else o.asnumpy() for o in outs + arrays[n_in:]]
    return host, (state, shapes, dtypes)


def _wrap(views, ctx):
    """NDArrays over the op's device views, each with a var of its own."""
    from .ndarray._array import NDArray
    out = []
    for v in views:
        chunk = _storage.Handle(v, v.nbytes, v.nbytes, ctx.ctx, None, Var())
        out.append(NDArray._new(chunk, 0, v.shape, v.dtype, view=v))
    return out


def _submit(call, ctx, arrays, what, label):
    def job():
        state = _tape.state
        prev = state.recording, state.training
        state.recording, state.training = False, ctx.is_train     # as MXNet runs it
        exc = None
        try:
            with ctx.ctx:
                _events.custom_call(label, call, ctx.ctx)   # the profiler's names
        except Exception as e:       # reported when the op completes
            exc = MXNetError(f"Error in {what}: {type(e).__name__}: {e}")
            exc.__cause__ = e
        finally:
            state.recording, state.training = prev
        _push_completion(ctx, [a._chunk.var for a in arrays], exc)
    _workers.submit(job)


def _push_completion(ctx, vars_, exc):
    """Complete the op once the work its Python code pushed is done, with the first error
    (taken off the var that holds it, so it is raised once, by the op's outputs)."""
    def complete(rctx):
        err = exc
        for v in vars_:
            box = v.error
            if box is not None and box.exc is not None:
                if err is None:
                    err = box.exc
                box.exc = None
        ctx.async_on_complete(err)
    _engine.get().push(OprHandle(complete, False, vars_, (), FnProperty.NORMAL,
                                 "CustomOperatorWait", skip_on_error=False), ctx.ctx)


class _Workers:
    """MXNet's custom-op threads: one more whenever queued jobs outnumber idle threads,
    so custom code that waits on another custom op never starves."""

    def __init__(self):
        self._cv = threading.Condition()
        self._jobs: deque = deque()
        self._idle = 0

    def submit(self, job):
        with self._cv:
            self._jobs.append(job)
            if len(self._jobs) > self._idle:
                self._idle += 1
                threading.Thread(target=self._loop, name="mxnext-custom-op", daemon=True).start()
            self._cv.notify()

    def _loop(self):
        while True:
            with self._cv:
                while not self._jobs:
                    self._cv.wait()
                job = self._jobs.popleft()
                self._idle -= 1
            job()
            with self._cv:
                self._idle += 1


_workers = _Workers()


def _new_workers():
    global _workers
    _workers = _Workers()         # in a forked child: the threads counted idle are gone


in_child(_new_workers)


# -- registration ----------------------------------------------------------------------
_backward_op = None


def define(registrar) -> None:
    """Register ``Custom`` and ``_backward_Custom`` through the builtin plugin's op hook's
    ``registrar``."""
    global _backward_op
    fwd = registrar.register("Custom")
    fwd.description = ("Apply a custom operator written in Python (mx.operator.CustomOp, "
                       "registered with mx.operator.register under op_type).")
    fwd.set_param_model(CustomParam)
    fwd.arguments = [registry.Argument("data", "NDArray-or-Symbol[]",
                                       "Inputs of the custom operator: its arguments, then "
                                       "its auxiliary states.")]
    registry.add_alias(fwd, "_npi_Custom")
    for key, value in {
        "FNumInputs": lambda p: len(layout(p).args) + len(layout(p).auxs),
        "FNumOutputs": lambda p: len(layout(p).outs),
        "FListInputNames": lambda p: layout(p).args + layout(p).auxs,
        "FListOutputNames": lambda p: list(layout(p).outs),
        "FMutateInputs": lambda p: list(range(len(layout(p).args),
                                              len(layout(p).args) + len(layout(p).auxs))),
        "FInferShape": _infer_shape,
        "FInferType": _infer_type,
        "FGradient": _gradient,
        "FExecType": lambda p: "async",
        "FCreateOpState": _Applied,
        "FStatefulCompute<cpu>": forward,
        "FComputeSparse": sparse_forward,
    }.items():
        fwd.set_attr(key, value)
    bwd = _backward_op = registrar.register("_backward_Custom")
    bwd.description = "Backward of Custom."
    bwd.set_param_model(CustomParam)
    for key, value in {
        "FNumInputs": lambda p: len(layout(p).deps) + len(layout(p).auxs),
        "FNumOutputs": lambda p: len(layout(p).args),
        "TIsBackward": True,
        "TIsLayerOpBackward": True,
        "FExecType": lambda p: "async",
        "FStatefulCompute<cpu>": backward,
    }.items():
        bwd.set_attr(key, value)
