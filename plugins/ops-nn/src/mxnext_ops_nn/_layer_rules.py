"""Inference rules, parameter checks and gradient-node helpers shared by the layer ops
(FullyConnected, Convolution, Deconvolution, Pooling, UpSampling, activations, Dropout,
the normalisations and Embedding).

Shape and type rules take and return complete lists (``None`` = unknown, a shape may be
partial: see ``opsdk.shape``) and raise ``ShapeError`` / ``TypeInferError`` naming the op,
the argument and both values, as MXNet's ``SHAPE_ASSIGN_CHECK`` / ``TYPE_ASSIGN_CHECK`` do.
"""

from __future__ import annotations

import importlib

import ml_dtypes
import numpy as np
from opsdk import NodeEntry, assign, make_node
from opsdk.shape import assign_shape as set_shape

from ._infer import assign_type as set_type
from ._infer import fail


def namespace(a):
    """The array namespace of ``a``, so the kernels run on the device its arrays live on:
    numpy for host arrays, a numpy subclass's own (testdev's), else the package of its type
    (cupy for a gpu array)."""
    if isinstance(a, np.ndarray):
        return np if type(a) is np.ndarray else a.__array_namespace__()
    return importlib.import_module(type(a).__module__.partition(".")[0])


def result_shapes(op, outs, new, names=None):
    """The computed output shapes ``new``, checked against the known ``outs``."""
    outs = list(outs) + [None] * (len(new) - len(outs))
    for k, s in enumerate(new):
        set_shape(op, outs, k, s, f"output {names[k]!r}" if names else f"output {k}")
    return outs


def same_type(op, in_names=None):
    """FInferType: every input and output shares one dtype, the first known one.
    ``in_names(params)`` (or a list) names the inputs in errors."""
    def infer(params, ins, outs):
        ins, outs = list(ins), list(outs)
        known = next((t for t in ins + outs if t is not None), None)
        if known is None:
            return ins, outs
        names = in_names(params) if callable(in_names) else in_names
        for i in range(len(ins)):
            set_type(op, ins, i, known, f"input {names[i]!r}" if names else f"input {i}")
        for k in range(len(outs)):
            set_type(op, outs, k, known, f"output {k}")
        return ins, outs
    return infer


def norm_axis(op, axis, ndim, what="axis"):
    if not -ndim <= axis < ndim:
        fail(op, f"{what}={axis} out of range for data of {ndim} dims")
    return axis % ndim


def spatial(values, n, default):
    """A per-spatial-dim tuple: ``values`` when given, else ``default`` repeated ``n`` times."""
    return tuple(values) if values else (default,) * n


def check_spatial(kernel, others, positive=()):
    """Model-validator helper: ``kernel`` has 1-3 entries, each of ``others`` (name -> tuple)
    is empty or as long as ``kernel``, and fields named in ``positive`` have entries > 0."""
    if not 1 <= len(kernel) <= 3:
        raise ValueError(f"kernel must have 1, 2 or 3 entries, got {kernel}")
    for name, value in others.items():
        if value and len(value) != len(kernel):
            raise ValueError(f"{name} must have the same number of dimensions as kernel "
                             f"{kernel}, got {value}")
    for name, value in {"kernel": kernel, **others}.items():
        if name in positive and any(v <= 0 for v in value):
            raise ValueError(f"{name} entries must be positive, got {value}")
        if any(v < 0 for v in value):
            raise ValueError(f"{name} entries must not be negative, got {value}")


def put(out, req, value):
    """``assign`` casting ``value`` to the output dtype first (float16 ops compute wider)."""
    if req:
        if getattr(value, "dtype", out.dtype) != out.dtype:
            value = value.astype(out.dtype)
        assign(out, req, value)


def writes_into(out, req, dtype):
    """Whether a kernel may write its result straight into ``out`` (overwrite requested, a
    C-contiguous buffer of the compute dtype)."""
    return (req == 1 or req == 2) and out.dtype == dtype and out.flags.c_contiguous


_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def compute_dtype(dtype):
    """float16 and bfloat16 arithmetic runs in float32 (numpy has no BLAS for them), others
    in place."""
    return np.dtype(np.float32) if np.dtype(dtype) in _HALF else np.dtype(dtype)


def backward_node(op, node, inputs):
    """A ``op`` node computing ``node``'s input gradients from ``inputs`` (entries), with the
    forward params, named ``<name>_backward`` and ordered after the forward node."""
    n = make_node(op, list(inputs), node.params, name=f"{node.name}_backward")
    n.control_deps.append(node)
    return n


def grad_entries(bwd, n, first=0):
    """Entries ``first .. first+n-1`` of the backward node ``bwd``."""
    return [NodeEntry(bwd, first + i, 0) for i in range(n)]


def out_entry(node, i):
    return NodeEntry(node, i, 0)


def init_attrs(by_index):
    """FSetInputVarAttrOnCompose: the ``__init__`` initializer of the auto-created or given
    variables at these input indices (``{index: init JSON}``), unless one is set already,
    as MXNet's layer ops mark their gamma / moving statistics / upsampling weight."""
    def rule(params, var, index):
        init = by_index.get(index)
        if init is not None and "__init__" not in var.attrs:
            var.attrs["__init__"] = init
    return rule
