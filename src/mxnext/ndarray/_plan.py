"""What the invoke path settles once per (op, params, context, input signature): a ``Plan``.

Parsed params, inferred output shapes and dtypes, the device kernel, resources, in-place and
identity claims, and the allocation of each output; plans are cached by the invoke path
so a call only allocates, pushes and records.
"""

from __future__ import annotations

import numpy as np

from .._runtime import device as _device
from .._runtime import resource as _resource
from .._runtime import storage as _storage
from .._runtime.base import MXNetError, ShapeError, TypeInferError
from .._runtime.context import as_context, current_context
from .._runtime.opctx import OpReqType, is_async, kernel_of

__all__ = ["Plan", "make_plan"]

_WRITE, _NULL = OpReqType.WRITE_TO, OpReqType.NULL
# host memory kinds MXNet lets one op mix (one device mask): the op then runs on plain cpu
HOST_TYPES = frozenset(("cpu", "cpu_pinned", "cpu_shared"))


class Plan:
    """One op application's settled facts (see the module docstring)."""

    __slots__ = ("op", "name", "params", "ctx", "n_in", "n_vis", "out_specs", "out_sigs",
                 "fcompute", "req", "mutate", "inplace", "alias", "requested", "res_vars",
                 "xp", "view", "alloc", "octx", "cheap", "timing", "timed", "fastest", "saves",
                 "stateful", "create_state", "is_async", "in_specs", "policy")


def make_plan(opdef, params, inputs, ctx, out_specs=None) -> Plan:
    """Check ``inputs`` against ``opdef`` and settle everything a call needs; ``out_specs``:
    the outputs' (shape, dtype) when the caller knows them (a stateful backward op)."""
    name = opdef.name
    n_in = opdef.num_inputs(params)
    if n_in != len(inputs):
        names = opdef.list_input_names(params)
        raise MXNetError(f"Operator {name!r}: expected {n_in} input(s) ({', '.join(names)}), "
                         f"got {len(inputs)}")
    ctx = _context(name, params, inputs, ctx)
    p = Plan()
    p.op, p.name, p.params, p.ctx, p.n_in = opdef, name, params, ctx, n_in
    p.in_specs = ([a._shape for a in inputs], [a._dtype for a in inputs])
    _settle_outputs(p, inputs, out_specs)
    _settle_kernel(p)
    _settle_writes(p, inputs)
    _settle_memory(p)
    return p


def _context(name, params, inputs, ctx):
    if not inputs:
        return as_context(getattr(params, "ctx", None)) or as_context(ctx) or current_context()
    ctx = inputs[0]._ctx
    for i, a in enumerate(inputs):
        if a._ctx == ctx:
            continue
        if {a._ctx.device_type, ctx.device_type} <= HOST_TYPES \
                and a._ctx.device_id == ctx.device_id:
            ctx = type(ctx)("cpu", ctx.device_id)
        else:
            raise MXNetError(f"Operator {name!r}: all inputs must be on one context; input 0 "
                             f"is on {ctx} but input {i} is on {a._ctx} (copy it with "
                             f"as_in_context)")
    return ctx


def _settle_outputs(p, inputs, out_specs):
    """Output shapes, dtypes and signatures, from the op's inference rules (or given)."""
    op, params = p.op, p.params
    n_out = op.num_outputs(params)
    if out_specs is not None:
        p.out_specs = [(tuple(s), np.dtype(t)) for s, t in out_specs]
    else:
        shapes = _infer(op, "FInferShape", params, [a._shape for a in inputs], n_out,
                        ShapeError)
        types = _infer(op, "FInferType", params, [a._dtype for a in inputs], n_out,
                       TypeInferError)
        p.out_specs = list(zip(shapes, types))
    p.out_sigs = [(s, t, p.ctx.device_type, p.ctx.device_id) for s, t in p.out_specs]
    p.n_vis = op.num_visible_outputs(params)


def _settle_kernel(p):
    """The device kernel, its resources and the OpContext slots."""
    op, ctx = p.op, p.ctx
    dev = _device.get(ctx.device_type)
    kernels = getattr(dev, "kernels", ctx.device_type)     # host memory devices: "cpu"
    p.fcompute, p.stateful, p.create_state = kernel_of(op, kernels, f" (on {ctx})")
    p.is_async = is_async(op, p.params)
    rr = op.get_attr("FResourceRequest")
    p.requested = [_resource.request(ctx, r) for r in rr(p.params)] if rr is not None else []
    p.res_vars = [r.var for r in p.requested]
    p.xp, p.view = dev.xp, dev.view
    p.policy = dev.inline_policy     # settles ``cheap`` from the kernel's first timed runs
    p.octx = [None, None]            # OpContext by is_train, made on first run
    p.saves = None                   # what recording keeps (autograd), found on first use


def _settle_writes(p, inputs):
    """How outputs are written: mutated inputs, in-place options and identity outputs
    (``FInplaceIdentity``: the output is the input's data itself, never written)."""
    op, params = p.op, p.params
    p.mutate = op.mutate_inputs(params)
    ipo = op.get_attr("FInplaceOption")
    p.inplace = [tuple(x) for x in ipo(params)] if ipo is not None else []
    p.alias = _identity_pairs(op, params, inputs, p.out_specs)
    p.req = [_WRITE] * len(p.out_specs)
    for o, _ in p.alias:
        p.req[o] = _NULL


def _settle_memory(p):
    """Each output's allocation: (shape, dtype, pool, nbytes, sig), or the index of the input
    it aliases; whether the op starts out as cheap, until its kernel is timed (the device's
    inline policy)."""
    pool = _storage.pool(p.ctx)
    p.alloc = [(s, t, pool, t.itemsize * _prod(s), sig)
               for (s, t), sig in zip(p.out_specs, p.out_sigs)]
    for o, i in p.alias:
        p.alloc[o] = i
    nbytes = sum(t.itemsize * _prod(s) for s, t in p.out_specs)
    p.policy.start(p, nbytes, p.requested, p.is_async)


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
