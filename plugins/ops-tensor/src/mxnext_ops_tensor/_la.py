"""Shared pieces of the ``_linalg_*`` ops: the dtype rule, shape checks on batches of
matrices (the trailing two axes; every leading axis is a batch axis) and the triangular
kernels LAPACK/BLAS would give (only one triangle of a triangular operand is read)."""

from __future__ import annotations

import numpy as np
from opsdk import MXNetError, TypeInferError, register_op
from opsdk.shape import dim_known, merge_shape

from ._layout import fail

_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def la_type(op, int_ins=(), int_outs=()):
    """FInferType: inputs and outputs share one dtype, float32 or float64 (MXNet compiles its
    linear-algebra kernels for those two only); ``int_ins``/``int_outs`` are int32 (the pivot
    indices of det/slogdet)."""
    def infer(params, ins, outs):
        ins, outs = list(ins), list(outs)
        tied = [t for k, t in enumerate(ins) if k not in int_ins] + \
               [t for k, t in enumerate(outs) if k not in int_outs]
        known = [np.dtype(t) for t in tied if t is not None]
        if not known:
            return ins, outs
        t = known[0]
        if t not in _FLOATS:
            raise TypeInferError(f"Operator {op!r}: this operation only supports 32-bit and "
                                 f"64-bit floating point, got {t.name}")
        for u in known:
            if u != t:
                raise TypeInferError(f"Operator {op!r}: dtypes disagree, {t.name} vs {u.name}")
        i32 = np.dtype(np.int32)
        for kind, types, ints in (("input", ins, int_ins), ("output", outs, int_outs)):
            for k in range(len(types)):
                want = i32 if k in ints else t
                if types[k] is not None and np.dtype(types[k]) != want:
                    raise TypeInferError(f"Operator {op!r}: {kind} {k} has dtype "
                                         f"{np.dtype(types[k]).name}, expected {want.name}")
                types[k] = want
        return ins, outs
    return infer


def check_dim(op, a, b, msg):
    """``a == b`` when both dimensions are known; ShapeError ``msg`` otherwise."""
    if dim_known(a) and dim_known(b) and a != b:
        fail(op, f"{msg} ({a} vs {b})")


def matrices(op, shape, what="A", square=False):
    """Check ``shape`` is a batch of (square) matrices: at least 2 dims."""
    if len(shape) < 2:
        fail(op, f"input {what} must be a tensor of matrices (at least 2 dims), got {shape}")
    if square:
        check_dim(op, shape[-2], shape[-1], f"input {what} must be a tensor of square matrices, "
                                            f"got shape {shape}")


def same_batch(op, a, b, names=("A", "B"), skip=()):
    """Inputs ``a`` and ``b`` agree on their leading (batch) axes, axes in ``skip`` aside."""
    if len(a) != len(b):
        fail(op, f"inputs {names[0]} and {names[1]} must have the same number of dims, "
                 f"got {a} and {b}")
    for i in range(len(a) - 2):
        if i not in skip:
            check_dim(op, a[i], b[i], f"shapes of {names[0]} {a} and {names[1]} {b} must agree "
                                      f"on axis {i}")


def merge_outs(op, outs, new, what="output"):
    """Shapes ``new`` merged into the known ``outs`` (``what`` names them in errors)."""
    return [merge_shape(op, o, s, f"{what} {k}") for k, (o, s) in enumerate(zip(outs, new))]


def like_inputs(op, first=1):
    """FInferShape of a ``_backward_*`` op whose outputs have the shapes of its inputs
    ``first, first+1, ...`` (the forward inputs it reads)."""
    def infer(p, ins, outs):
        return list(ins), merge_outs(op, outs, [ins[first + k] for k in range(len(outs))])
    return infer


def mT(xp, x):
    return xp.swapaxes(x, -1, -2)


def tri(xp, x, lower):
    """The lower (or upper) triangle of each matrix, the rest zero."""
    return xp.tril(x) if lower else xp.triu(x)


def symmetric_from(xp, x, lower):
    """Symmetric matrices built from the lower (upper) triangle of ``x``."""
    t = tri(xp, x, lower)
    strict = xp.tril(x, -1) if lower else xp.triu(x, 1)
    return t + mT(xp, strict)


def tri_solve(xp, a, b, lower, unit=False):
    """``X`` with ``a @ X = b`` for triangular ``a`` (only its ``lower``/upper triangle read,
    its diagonal taken as ones when ``unit``), by substitution as BLAS trsm does: a zero on
    the diagonal gives inf/nan, not an error."""
    n = a.shape[-1]
    x = xp.empty(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]) + b.shape[-2:],
                 np.result_type(a, b))
    for i in (range(n) if lower else range(n - 1, -1, -1)):
        done = slice(0, i) if lower else slice(i + 1, n)
        s = b[..., i, :] - xp.matmul(a[..., i:i + 1, done], x[..., done, :])[..., 0, :]
        x[..., i, :] = s if unit else s / a[..., i, i, None]
    return x


def linalg_error(op, what):
    return MXNetError(f"Operator {op!r}: {what}")


def la_op(name, doc, *, args, shape, compute, examples, params=None, n_out=1, grad=None,
          types=None, inplace=None, aliases=None, out_names=None, visible=None):
    """Register forward op ``name`` (alias ``linalg_<x>`` unless ``aliases`` says otherwise);
    ``args`` are (input name, description) pairs."""
    b = register_op(name).describe(doc)
    for alias in (("linalg" + name[len("_linalg"):],) if aliases is None else aliases):
        b.add_alias(alias)
    if params is not None:
        b.set_attr_parser(params)
    (b.set_num_inputs(len(args)).set_num_outputs(n_out)
        .set_attr("FListInputNames", lambda p: [a for a, _ in args])
        .set_attr("FInferShape", shape)
        .set_attr("FInferType", types or la_type(name))
        .set_attr("FCompute<cpu>", compute)
        .set_attr("TExamples", examples))
    if grad is not None:
        b.set_attr("FGradient", grad)
    if inplace is not None:
        b.set_attr("FInplaceOption", lambda p: inplace)
    if out_names is not None:
        b.set_attr("FListOutputNames", lambda p: out_names)
    if visible is not None:
        b.set_attr("FNumVisibleOutputs", visible)
    for a, text in args:
        b.add_argument(a, "NDArray-or-Symbol", text)


def la_backward(name, *, n_in, n_out, shape, compute, examples, params=None, types=None,
                inplace=None):
    """Register ``_backward_<op>``: ``n_in`` inputs (output gradients, then what the forward
    op's gradient rule passes), one gradient output per forward input."""
    b = (register_op(name).describe(f"Gradient of {name[len('_backward_'):]}.")
         .set_attr("TIsBackward", True).set_num_inputs(n_in).set_num_outputs(n_out)
         .set_attr("FInferShape", shape)
         .set_attr("FInferType", types or la_type(name))
         .set_attr("FCompute<cpu>", compute)
         .set_attr("TExamples", examples))
    if params is not None:
        b.set_attr_parser(params)
    if inplace is not None:
        b.set_attr("FInplaceOption", lambda p: inplace)
