"""Shared inference and gradient helpers for the shape, indexing, linalg, init and random ops."""

from __future__ import annotations

import numpy as np
from opsdk import NodeEntry, ShapeError, TypeInferError, make_node
from opsdk.shape import merge_shape, shape_known


def fail(op, msg):
    raise ShapeError(f"Operator {op!r}: {msg}")


def norm_axis(op, axis, ndim, what="axis"):
    """``axis`` in ``[-ndim, ndim)`` -> a non-negative axis; ShapeError otherwise."""
    if not -ndim <= axis < ndim:
        fail(op, f"{what}={axis} out of range for an input of {ndim} dims")
    return axis % ndim


def merge(op, outs, new):
    """The computed output shapes ``new`` merged with the known ``outs`` dimension by
    dimension (both may be partial)."""
    return [merge_shape(op, old, s, f"output {k}") for k, (old, s) in enumerate(zip(outs, new))]


def forward_shape(op, fn, back=None):
    """FInferShape from ``fn(params, in_shapes) -> out_shapes`` (every input's number of
    dims known; dims may be unknown, see ``opsdk.shape``); ``back(params, out_shapes) ->
    in_shapes`` fills or completes inputs when it can."""
    def infer(params, ins, outs):
        ins = list(ins)
        if back is not None and all(s is not None for s in outs) and \
                not all(shape_known(s) for s in ins):
            for k, s in enumerate(back(params, [tuple(o) for o in outs])):
                if s is not None:
                    ins[k] = merge_shape(op, ins[k], s, f"input {k}")
        if any(s is None for s in ins):
            return ins, list(outs)
        return ins, merge(op, outs, fn(params, [tuple(s) for s in ins]))
    return infer


def same_shape_back(params, outs):
    return [outs[0]]


def backward_shape(op, like=1):
    """FInferShape of a ``_backward_*`` op whose one output has the shape of input ``like``
    (the forward data it reads)."""
    return lambda p, i, o: (i, merge(op, o, [i[like]]) if i[like] is not None else list(o))


def data_grad(name):
    """FGradient of a one-input op: ``name(head gradient, data)`` with the forward params."""
    return lambda node, og: [NodeEntry(make_node(name, [og[0], node.inputs[0]], node.params), 0)]


def zeros_entry(entry):
    """A ``zeros_like(entry)`` gradient (for inputs such as indices that get none)."""
    return NodeEntry(make_node("zeros_like", [entry]), 0)


def same_type(op):
    """FInferType: every input and output shares one dtype."""
    def infer(params, ins, outs):
        known = [t for t in list(ins) + list(outs) if t is not None]
        if not known:
            return list(ins), list(outs)
        t = np.dtype(known[0])
        for u in known:
            if np.dtype(u) != t:
                raise TypeInferError(f"Operator {op!r}: dtypes disagree, {t} vs {np.dtype(u)}")
        return [t] * len(ins), [t] * len(outs)
    return infer


def first_type(op):
    """FInferType: outputs take input 0's dtype; inputs ``1..`` keep their own
    (index arrays of take, pick, ...)."""
    def infer(params, ins, outs):
        ins, outs = list(ins), list(outs)
        t = ins[0] if ins[0] is not None else next((o for o in outs if o is not None), None)
        if t is None:
            return ins, outs
        t = np.dtype(t)
        for o in outs:
            if o is not None and np.dtype(o) != t:
                raise TypeInferError(f"Operator {op!r}: output dtype {np.dtype(o)} != input {t}")
        ins[0] = t
        return ins, [t] * len(outs)
    return infer


def fixed_type(op, dtype_of):
    """FInferType for ops whose outputs have ``dtype_of(params)`` whatever the inputs."""
    def infer(params, ins, outs):
        t = np.dtype(dtype_of(params))
        for o in outs:
            if o is not None and np.dtype(o) != t:
                raise TypeInferError(f"Operator {op!r}: output dtype {np.dtype(o)} != {t}")
        return list(ins), [t] * len(outs)
    return infer
