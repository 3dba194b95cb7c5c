"""What a compute function receives besides its arrays: ``OpContext``, ``OpReqType``, ``assign``;
and ``call_compute``, the one way the core calls a compute function."""

from __future__ import annotations

from enum import IntEnum

import numpy as np

from . import host_fallback
from .base import MXNetError, ParamError

__all__ = ["OpReqType", "OpContext", "assign", "as_req", "call_compute", "BoundState",
           "kernel_of", "is_async"]

try:  # numpy 2 keeps its error state in a context variable: setting it costs 0.2 us, errstate 1 us
    from numpy._core.umath import _extobj_contextvar as _FP_STATE, _make_extobj
    _FP_QUIET = _make_extobj(all="ignore")
except ImportError:  # pragma: no cover - another numpy layout
    _FP_STATE = None


class OpReqType(IntEnum):
    """How a result is written to its output (MXNet's ``kNullOp``..``kAddTo``)."""

    NULL = 0
    WRITE_TO = 1
    WRITE_INPLACE = 2
    ADD_TO = 3


_REQ_NAMES = {"null": OpReqType.NULL, "write": OpReqType.WRITE_TO,
              "inplace": OpReqType.WRITE_INPLACE, "add": OpReqType.ADD_TO}


def as_req(value) -> OpReqType:
    """An ``OpReqType`` from itself, an int, or MXNet's strings ``'null' 'write' 'inplace' 'add'``."""
    if isinstance(value, str):
        try:
            return _REQ_NAMES[value]
        except KeyError:
            raise ParamError(f"grad_req: unknown value {value!r}; expected one of "
                             f"{', '.join(map(repr, _REQ_NAMES))}") from None
    return OpReqType(value)


class OpContext:
    """Runtime information handed to ``FCompute``: train mode, run context, resources, ``xp``;
    for an async op (``FExecType`` "async"), ``async_on_complete(exc=None)``, which it must
    call once when its outputs are written (from any thread)."""

    __slots__ = ("is_train", "run_ctx", "requested", "xp", "async_on_complete")

    def __init__(self, is_train=False, run_ctx=None, requested=(), xp=None,
                 async_on_complete=None):
        if xp is None:
            import numpy as xp
        self.is_train = is_train
        self.run_ctx = run_ctx
        self.requested = list(requested)
        self.xp = xp
        self.async_on_complete = async_on_complete

    @property
    def ctx(self):
        """The ``Context`` the op runs on (from ``run_ctx``)."""
        return self.run_ctx.ctx if self.run_ctx is not None else None

    def __repr__(self):
        return f"OpContext(is_train={self.is_train}, ctx={self.ctx}, requested={self.requested})"


def assign(out, req, value) -> None:
    """Write ``value`` into ``out`` honouring ``req`` (MXNet's ``ASSIGN_DISPATCH``).

    NULL writes nothing, WRITE_TO / WRITE_INPLACE overwrite, ADD_TO accumulates.
    Works for 0-d arrays and when ``value`` is (a view of) ``out`` itself.
    """
    if req == 0:
        return
    if req == 3:
        out[...] += value
    else:
        out[...] = value


def call_compute(fcompute, ctx, inputs, req, outputs, params) -> None:
    """Run an ``FCompute`` with numpy's floating-point warnings off: as in MXNet, inf and nan
    results are silent, so op authors never need ``np.errstate``."""
    if _FP_STATE is None:  # pragma: no cover
        with np.errstate(all="ignore"):
            fcompute(ctx, inputs, req, outputs, params)
        return
    token = _FP_STATE.set(_FP_QUIET)
    try:
        fcompute(ctx, inputs, req, outputs, params)
    finally:
        _FP_STATE.reset(token)


class BoundState:
    """A stateful kernel (``FStatefulCompute<dev>``: ``fn(state, ctx, inputs, req,
    outputs)``) with its state, called like an ``FCompute`` (``params`` unused): the state
    an op's ``FCreateOpState`` made for one application, shared by its backward."""

    __slots__ = ("fn", "state")

    def __init__(self, fn, state):
        self.fn, self.state = fn, state

    def __call__(self, ctx, inputs, req, outputs, params):
        self.fn(self.state, ctx, inputs, req, outputs)


def kernel_of(op, kinds, where=""):
    """``(FCompute, FStatefulCompute, FCreateOpState)`` of ``op`` for a device running kernels
    of ``kinds`` (a device's ``kernels``: its own kind first, then kinds whose ``ctx.xp``
    bodies serve it too; one of the first two is set); a stateful op's forward has
    ``FCreateOpState``, its backward shares the forward's state. ``where`` names the caller
    in the error."""
    kinds = (kinds,) if isinstance(kinds, str) else kinds
    for kind in kinds:
        fcompute = op.get_attr(f"FCompute<{kind}>")
        stateful = op.get_attr(f"FStatefulCompute<{kind}>")
        if fcompute is not None or stateful is not None:
            break
    else:
        have = sorted({k.split("<")[1][:-1] for k in op.attrs if "Compute<" in k})
        raise MXNetError(f"Operator {op.name!r}{where} has no FCompute<{kinds[0]}> kernel; "
                         f"kernels exist for: {', '.join(have) or 'no device'}")
    if kind != kinds[0] and fcompute is not None:
        fcompute = _generic(fcompute, op.name, kinds[0], kind, where)
    return fcompute, stateful, op.get_attr("FCreateOpState") if stateful is not None else None


def _generic(fcompute, name, device, kind, where):
    """``fcompute`` of another kind run on ``device``: a body that calls numpy on the device's
    arrays (cupy refuses implicit host copies with TypeError) fails naming op and device, or,
    opted in, runs on the host (``host_fallback``)."""
    def generic(ctx, inputs, req, outputs, params):
        try:
            fcompute(ctx, inputs, req, outputs, params)
        except TypeError as exc:
            if host_fallback.enabled() and host_fallback.run_on_host(
                    fcompute, name, device, ctx, inputs, req, outputs, params):
                return
            raise MXNetError(f"Operator {name!r}{where} has no FCompute<{device}> kernel and its "
                             f"FCompute<{kind}> body does not run on {device} arrays: {exc} "
                             f"(set {host_fallback.ENV}=1 to run such ops on the host)") from exc
    return generic


def is_async(op, params) -> bool:
    """Whether ``op`` completes through ``OpContext.async_on_complete`` (``FExecType``
    returns "async"), not when its compute function returns."""
    et = op.get_attr("FExecType")
    return et is not None and et(params) == "async"
