"""Inference and gradient-node helpers shared by the loss, sequence, RNN and optimizer modules.

Shape and type rules take and return complete lists (``None`` = unknown, a shape
may be partial: see ``opsdk.shape``) and raise ``ShapeError`` / ``TypeInferError``
naming the op, the argument and both values, as MXNet's ``SHAPE_ASSIGN_CHECK`` /
``TYPE_ASSIGN_CHECK`` do.
"""

from __future__ import annotations

import numpy as np
from opsdk import NodeEntry, ShapeError, TypeInferError, make_node
from opsdk.shape import assign_shape


def fail(op, msg):
    raise ShapeError(f"Operator {op!r}: {msg}")


def out_shapes(op, outs, new, names=None):
    """Inferred output shapes ``new`` checked against the known ``outs``."""
    outs = list(outs) + [None] * (len(new) - len(outs))
    for k, s in enumerate(new):
        assign_shape(op, outs, k, s, f"output {names[k] if names else k!r}")
    return outs


def assign_type(op, types, i, want, name):
    want = np.dtype(want)
    if types[i] is None:
        types[i] = want
    elif np.dtype(types[i]) != want:
        raise TypeInferError(f"Operator {op!r}: {name} has dtype {np.dtype(types[i]).name}, "
                             f"expected {want.name}")


def uniform_type(op, in_names, free=()):
    """FInferType: every input (but those in ``free``) and every output share one dtype,
    taken from the first known of them (MXNet's ``UNIFORM_TYPE_CHECK`` pattern)."""
    def infer(params, ins, outs):
        ins, outs = list(ins), list(outs)
        names = in_names(params) if callable(in_names) else in_names
        tied = [i for i in range(len(ins)) if i not in free]
        known = next((ins[i] for i in tied if ins[i] is not None),
                     next((o for o in outs if o is not None), None))
        if known is None:
            return ins, outs
        for i in tied:
            assign_type(op, ins, i, known, f"input {names[i]!r}")
        for k in range(len(outs)):
            assign_type(op, outs, k, known, f"output {k}")
        return ins, outs
    return infer


def integer_type(op, types, i, name):
    """Index-like inputs (lengths) must have an integer dtype when known."""
    if types[i] is not None and np.dtype(types[i]).kind not in "iu":
        raise TypeInferError(f"Operator {op!r}: {name} must have an integer dtype, got "
                             f"{np.dtype(types[i]).name}")


def backward_node(op, node, inputs):
    """A ``op`` node computing ``node``'s input gradients from ``inputs`` (entries), with the
    forward params, named ``<name>_backward`` and ordered after the forward node."""
    n = make_node(op, list(inputs), node.params, name=f"{node.name}_backward")
    n.control_deps.append(node)
    return n


def grads_of(bwd, n):
    """Entries ``0..n-1`` of the backward node ``bwd``: one gradient per forward input."""
    return [NodeEntry(bwd, i, 0) for i in range(n)]


def output_entry(node, i):
    return NodeEntry(node, i, 0)
