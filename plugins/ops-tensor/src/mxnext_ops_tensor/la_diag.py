"""Diagonal and triangle ``_linalg_*`` ops (MXNet's la_op.cc): sumlogdiag, extractdiag,
makediag, extracttrian and maketrian, per matrix (vector) of a batch.

A triangle is stored as a vector: the lower one (``offset < 0``, or ``offset == 0`` with
``lower``) row by row, the upper one column by column, each starting at the main diagonal
shifted by ``offset``; maketrian is the inverse of extracttrian.
"""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseGradUseIn, ElemwiseGradUseNone, Field, Param, assign
from opsdk.shape import dim_known, dim_op, unknown_dim

from ._la import check_dim, la_backward, la_op, like_inputs, merge_outs
from ._layout import fail


class LaDiagParam(Param):
    offset: int = Field(0, description="Offset of the diagonal versus the main diagonal. 0 "
                                       "corresponds to the main diagonal, a negative/positive "
                                       "value to diagonals below/above the main diagonal.")


class LaTrianParam(LaDiagParam):
    lower: bool = Field(True, description="Refer to the lower triangular matrix if lower=true, "
                                          "refer to the upper otherwise. Only relevant when "
                                          "offset=0")


# -- sumlogdiag --------------------------------------------------------------------------
def _sumlogdiag_shape(p, ins, outs):
    if ins[0] is None:
        return list(ins), list(outs)
    a = tuple(ins[0])
    if len(a) < 2:
        fail("_linalg_sumlogdiag", f"input A must be a tensor of matrices, got {a}")
    check_dim("_linalg_sumlogdiag", a[-2], a[-1], f"requires square matrices as input, got {a}")
    return list(ins), merge_outs("_linalg_sumlogdiag", outs, [a[:-2] or (1,)])


def _sumlogdiag(ctx, inputs, req, outputs, p):
    xp, a = ctx.xp, inputs[0]
    s = xp.log(xp.diagonal(a, axis1=-2, axis2=-1)).sum(axis=-1)
    assign(outputs[0], req[0], s.reshape(outputs[0].shape))


def _sumlogdiag_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    db, a = inputs
    d = db.reshape(a.shape[:-2] + (1,)) / xp.diagonal(a, axis1=-2, axis2=-1)
    assign(outputs[0], req[0], _embed(xp, d, 0, a.dtype))


la_op("_linalg_sumlogdiag",
      "Sum of the logarithms of the diagonal elements of each square matrix of a batch.",
      args=[("A", "Tensor of square matrices")], shape=_sumlogdiag_shape, compute=_sumlogdiag,
      grad=ElemwiseGradUseIn("_backward_linalg_sumlogdiag"),
      examples=[
          {"inputs": [(3, 3)], "domain": (0.5, 2.0),
           "ref": lambda a: np.log(np.diag(a)).sum(keepdims=True)},
          {"inputs": [(2, 2, 4, 4)], "domain": (0.5, 2.0)}])
la_backward("_backward_linalg_sumlogdiag", n_in=2, n_out=1,
            shape=like_inputs("_backward_linalg_sumlogdiag"),
            compute=_sumlogdiag_backward, inplace=[(1, 0)],
            examples=[{"inputs": [(2,), (2, 3, 3)], "domain": (0.5, 2.0)}])


# -- diagonal and triangle copies --------------------------------------------------------
def _tri_size(op, n):
    """m with n == m * (m + 1) / 2 (unknown when n is)."""
    if not dim_known(n):
        return unknown_dim()
    m = int(np.floor(0.5 + (np.sqrt(8 * n + 1) - 1.0) * 0.5))
    if m * (m + 1) // 2 != n:
        fail(op, f"the last axis of A must hold a triangle of m * (m + 1) / 2 entries, got {n}")
    return m


def _copy_shape(op, diag, extract):
    """MXNet's LaDiagTrianShape: (..., n, n) <-> (..., n - |offset|) for a diagonal and
    (..., m * (m + 1) / 2) with m = n - |offset| for a triangle; forward only."""
    def infer(p, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        a, k = tuple(ins[0]), abs(p.offset)
        if not a:
            fail(op, "input A must have at least 1 dim, got a scalar")
        if extract:
            if len(a) < 2:
                fail(op, f"input A must be a tensor of matrices, got {a}")
            check_dim(op, a[-2], a[-1], f"input A must be a tensor of square matrices, got {a}")
            if dim_known(a[-1]) and a[-1] - k <= 0:
                fail(op, f"illegal offset {p.offset} for extraction from matrices of shape "
                         f"{a[-2:]}")
            m = dim_op(lambda n: n - k, a[-1])
            new = a[:-2] + (m if diag else dim_op(lambda m: m * (m + 1) // 2, m),)
        else:
            m = a[-1] if diag else _tri_size(op, a[-1])
            n = dim_op(lambda m: m + k, m)
            new = a[:-1] + (n, n)
        return list(ins), merge_outs(op, outs, [new])
    return infer


def _diag_index(xp, m, offset):
    i = xp.arange(m)
    return (i - offset, i) if offset < 0 else (i, i + offset)


def _trian_index(xp, m, offset, lower):
    """(rows, cols) of the stored triangle's entries, in storage order."""
    i, j = np.tril_indices(m)
    i, j = xp.asarray(i) + abs(offset), xp.asarray(j)
    return (i, j) if offset < 0 or (offset == 0 and lower) else (j, i)


def _embed(xp, v, offset, dtype, trian=False, lower=True):
    """Matrices holding the vectors ``v`` on a diagonal (or triangle), zeros elsewhere."""
    m = _tri_size("_linalg_maketrian", v.shape[-1]) if trian else v.shape[-1]
    n = m + abs(offset)
    out = xp.zeros(v.shape[:-1] + (n, n), dtype)
    rows, cols = (_trian_index(xp, m, offset, lower) if trian else
                  _diag_index(xp, m, offset))
    out[..., rows, cols] = v
    return out


def _extract(xp, a, offset, trian=False, lower=True):
    m = a.shape[-1] - abs(offset)
    rows, cols = _trian_index(xp, m, offset, lower) if trian else _diag_index(xp, m, offset)
    return a[..., rows, cols]


def _copy_compute(extract, trian):
    def compute(ctx, inputs, req, outputs, p):
        xp, a = ctx.xp, inputs[0]
        lower = getattr(p, "lower", True)
        v = (_extract(xp, a, p.offset, trian, lower) if extract else
             _embed(xp, a, p.offset, a.dtype, trian, lower))
        assign(outputs[0], req[0], v)
    return compute


def _register_copy(what, trian, extract, doc, arg, examples, bwd_example):
    name = f"_linalg_{'extract' if extract else 'make'}{what}"
    param = LaTrianParam if trian else LaDiagParam
    la_op(name, doc, args=[("A", arg)], params=param,
          shape=_copy_shape(name, not trian, extract), compute=_copy_compute(extract, trian),
          grad=ElemwiseGradUseNone(f"_backward{name}"), examples=examples)
    la_backward(f"_backward{name}", n_in=1, n_out=1, params=param,
                shape=_copy_shape(f"_backward{name}", not trian, not extract),
                compute=_copy_compute(not extract, trian), examples=[bwd_example])


_register_copy(
    "diag", False, True, "Extracts the diagonal at ``offset`` of each square matrix of a batch.",
    "Tensor of square matrices",
    [{"inputs": [(3, 3)], "ref": lambda a, **_: np.diagonal(a).copy()},
     {"inputs": [(2, 4, 4)], "params": {"offset": -2}},
     {"inputs": [(2, 3, 3)], "params": {"offset": 1},
      "ref": lambda a, offset: np.diagonal(a, offset, -2, -1).copy()}],
    {"inputs": [(2, 3)], "params": {"offset": -1}})
_register_copy(
    "diag", False, False, "Builds square matrices holding each vector of a batch on the "
    "diagonal at ``offset``, zeros elsewhere.",
    "Tensor of diagonal entries",
    [{"inputs": [(3,)], "ref": lambda a, **_: np.diagflat(a)},
     {"inputs": [(2, 3)], "params": {"offset": 2}},
     {"inputs": [(4,)], "params": {"offset": -1}, "ref": lambda a, offset: np.diagflat(a, offset)}],
    {"inputs": [(2, 4, 4)], "params": {"offset": 1}})
_register_copy(
    "trian", True, True, "Extracts the triangle at ``offset`` (lower below the main "
    "diagonal, upper above it, ``lower`` choosing at 0) of each square matrix of a batch, as "
    "a vector.",
    "Tensor of square matrices",
    [{"inputs": [(3, 3)], "ref": lambda a, **_: a[np.tril_indices(3)]},
     {"inputs": [(2, 4, 4)], "params": {"offset": 1}},
     {"inputs": [(2, 3, 3)], "params": {"lower": False}},
     {"inputs": [(4, 4)], "params": {"offset": -2}}],
    {"inputs": [(2, 6)], "params": {"offset": -1}})
_register_copy(
    "trian", True, False, "Builds square matrices holding each vector of a batch as the "
    "triangle at ``offset`` (inverse of extracttrian), zeros elsewhere.",
    "Tensor of triangular matrices stored as vectors",
    [{"inputs": [(6,)], "params": {"lower": False}},
     {"inputs": [(2, 3)], "params": {"offset": 1}},
     {"inputs": [(2, 2, 10)], "params": {"offset": -2}}],
    {"inputs": [(2, 4, 4)], "params": {"offset": 1}})
