"""Run one op straight from its ``OpDef`` on numpy arrays (no NDArray frontend).

Parses params, runs ``FInferShape``/``FInferType``, allocates outputs, requests
the op's resources and calls ``FCompute<cpu>`` with any ``OpReqType``.
"""

from __future__ import annotations

import numpy as np

from mxnext.base import MXNetError, ShapeError, TypeInferError
from mxnext.opctx import call_compute

__all__ = ["op_def", "parse", "infer", "make_context", "run_op"]


def op_def(op):
    """An ``OpDef`` from itself or a registered name/alias."""
    if isinstance(op, str):
        from mxnext import ops as registry
        return registry.get(op)
    return op


def parse(opdef, params=None):
    """Parsed params from a kwargs dict, None (defaults) or an already parsed model."""
    if params is None or isinstance(params, dict):
        return opdef.parse_params(params or {})
    return params


def _need(opdef, key):
    fn = opdef.get_attr(key)
    if fn is None:
        raise MXNetError(f"Operator {opdef.name!r} has no {key} attribute")
    return fn


def infer(opdef, params, in_shapes, in_types, out_shapes=None, out_types=None):
    """``(in_shapes, out_shapes, in_types, out_types)`` completed by the op's rules.

    Raises ``ShapeError``/``TypeInferError`` if anything is left unknown.
    """
    n_out = opdef.num_outputs(params)
    out_shapes = list(out_shapes) if out_shapes is not None else [None] * n_out
    out_types = list(out_types) if out_types is not None else [None] * n_out
    ins, outs = _need(opdef, "FInferShape")(params, list(in_shapes), out_shapes)
    if any(s is None for s in list(ins) + list(outs)) or len(outs) != n_out:
        raise ShapeError(f"Operator {opdef.name!r}: shape inference left unknowns: "
                         f"inputs {ins}, outputs {outs} (expected {n_out} outputs)")
    tins, touts = _need(opdef, "FInferType")(params, list(in_types), out_types)
    if any(t is None for t in list(tins) + list(touts)) or len(touts) != n_out:
        raise TypeInferError(f"Operator {opdef.name!r}: type inference left unknowns: "
                             f"inputs {tins}, outputs {touts}")
    return ([tuple(s) for s in ins], [tuple(s) for s in outs],
            [np.dtype(t) for t in tins], [np.dtype(t) for t in touts])


def make_context(opdef, params, is_train=True, ctx=None):
    """An ``OpContext`` on ``ctx`` (default cpu(0)) with the op's requested resources."""
    from mxnext.context import cpu
    from mxnext.engine import RunContext
    from mxnext.opctx import OpContext
    ctx = ctx or cpu(0)
    reqs = opdef.get_attr("FResourceRequest")
    requested = []
    if reqs is not None:
        try:
            from mxnext import resource
        except ImportError as err:
            raise MXNetError(f"Operator {opdef.name!r} requests resources but mxnext.resource "
                             f"is unavailable ({err})") from err
        requested = [resource.request(ctx, r) for r in reqs(params)]
    from mxnext import device
    return OpContext(is_train=is_train, run_ctx=RunContext(ctx, None), requested=requested,
                     xp=device.get(ctx.device_type).xp)


def _reqs(req, n):
    from mxnext.opctx import as_req
    if isinstance(req, (list, tuple)):
        if len(req) != n:
            raise ValueError(f"run_op: {n} req entries needed, got {len(req)}")
        return [as_req(r) for r in req]
    return [as_req(req)] * n


def run_op(op, inputs, params=None, req="write", outputs=None, is_train=True, seed=None):
    """Run ``op`` on numpy ``inputs``; returns every output (visible and hidden).

    ``outputs`` (arrays to write into, e.g. for ADD_TO or in-place runs) are
    allocated as zeros from the inferred shapes/dtypes when not given. ``seed``
    reseeds the random resources first so sampling ops repeat.
    """
    opdef = op_def(op)
    p = parse(opdef, params)
    inputs = list(inputs)
    n_in = opdef.num_inputs(p)
    if len(inputs) != n_in:
        raise MXNetError(f"Operator {opdef.name!r}: expected {n_in} inputs, got {len(inputs)}")
    if outputs is None:
        _, out_shapes, _, out_types = infer(opdef, p, [a.shape for a in inputs],
                                            [a.dtype for a in inputs])
        outputs = [np.zeros(s, t) for s, t in zip(out_shapes, out_types)]
    outputs = list(outputs)
    if seed is not None:
        from mxnext import random as _random
        _random.seed(seed)
        from mxnext import engine
        engine.get().wait_for_all()
    octx = make_context(opdef, p, is_train)
    call_compute(_need(opdef, "FCompute<cpu>"), octx, inputs, _reqs(req, len(outputs)), outputs,
                 p)
    return outputs
