"""BLAS3-style ``_linalg_*`` ops (MXNet's la_op.cc): gemm, gemm2, trmm, trsm and syrk, on
batches of matrices. gemm and gemm2 take the matrix rows on ``axis`` (the columns are always
the last axis); the others work on the trailing two axes. The triangular operand of trmm and
trsm is read on its ``lower`` (or upper) triangle only, as BLAS does."""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseGradUseIn, ElemwiseGradUseInOut, Field, Param, assign
from opsdk.shape import dim_known, merge_shape

from ._la import (check_dim, la_backward, la_op, like_inputs, mT, merge_outs, same_batch,
                  symmetric_from, tri, tri_solve)
from ._layout import fail


class LaMatrixMultParam(Param):
    transpose_a: bool = Field(False, description="Multiply with transposed of first input (A).")
    transpose_b: bool = Field(False, description="Multiply with transposed of second input (B).")
    alpha: float = Field(1.0, description="Scalar factor multiplied with A*B.")
    axis: int = Field(-2, description="Axis corresponding to the matrix row indices.")


class LaMatrixMacParam(LaMatrixMultParam):
    beta: float = Field(1.0, description="Scalar factor multiplied with C.")


class LaTriangMatrixMultParam(Param):
    transpose: bool = Field(False, description="Use transposed of the triangular matrix")
    rightside: bool = Field(False, description="Multiply triangular matrix from the right to "
                                               "non-triangular one.")
    lower: bool = Field(True, description="True if the triangular matrix is lower triangular, "
                                          "false if it is upper triangular.")
    alpha: float = Field(1.0, description="Scalar factor to be applied to the result.")


class LaSyrkParam(Param):
    transpose: bool = Field(False, description="Use transpose of input matrix.")
    alpha: float = Field(1.0, description="Scalar factor to be applied to the result.")


# -- gemm, gemm2 -------------------------------------------------------------------------
def _gemm_out(op, p, a, b):
    """Output shape of ``op(A) @ op(B)`` with rows on ``p.axis``."""
    if len(a) < 2 or len(a) != len(b):
        fail(op, f"inputs A and B must have the same number of dims (at least 2), got {a} and {b}")
    nd = len(a)
    axis = p.axis + nd if p.axis < 0 else p.axis
    if not 0 <= axis < nd - 1:
        fail(op, f"invalid row axis {p.axis} for inputs of {nd} dims")
    for i in range(nd - 1):
        if i != axis:
            check_dim(op, a[i], b[i], f"shapes of A {a} and B {b} must agree except on the "
                                      f"row axis {p.axis} and the last axis")
    ka, kb = (a[axis] if p.transpose_a else a[-1]), (b[-1] if p.transpose_b else b[axis])
    check_dim(op, ka, kb, f"incompatible matrix dimensions for multiplication: A {a} "
                          f"(transpose_a={p.transpose_a}), B {b} (transpose_b={p.transpose_b})")
    out = [x if dim_known(x) else y for x, y in zip(a, b)]
    out[axis] = a[-1] if p.transpose_a else a[axis]
    out[-1] = b[axis] if p.transpose_b else b[-1]
    return tuple(out)


def _gemm_shape(op):
    """FInferShape of gemm (C and the output share the product's shape) and gemm2."""
    def infer(p, ins, outs):
        ins = list(ins)
        if ins[0] is None or ins[1] is None:
            return ins, list(outs)
        out = _gemm_out(op, p, tuple(ins[0]), tuple(ins[1]))
        if len(ins) == 3:
            ins[2] = merge_shape(op, ins[2], out, "input C")
        return ins, merge_outs(op, outs, [out])
    return infer


def _axis_in(p, xp, arrays):
    """The arrays with their row axis moved to -2 (a batch of matrices)."""
    if p.axis in (-2, arrays[0].ndim - 2):
        return arrays
    return [xp.moveaxis(x, p.axis, -2) for x in arrays]


def _axis_out(p, xp, x, ndim):
    return x if p.axis in (-2, ndim - 2) else xp.moveaxis(x, -2, p.axis)


def _op(xp, x, t):
    return mT(xp, x) if t else x


def _gemm(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    mats = _axis_in(p, xp, inputs)
    d = p.alpha * xp.matmul(_op(xp, mats[0], p.transpose_a), _op(xp, mats[1], p.transpose_b))
    if len(mats) == 3:
        d = d + p.beta * mats[2]
    assign(outputs[0], req[0], _axis_out(p, xp, d, inputs[0].ndim))


def _gemm_backward(ctx, inputs, req, outputs, p):
    """d op(A) = alpha dD op(B)^T, d op(B) = alpha op(A)^T dD, dC = beta dD."""
    xp = ctx.xp
    nd = inputs[1].ndim
    dd, a, b = _axis_in(p, xp, inputs[:3])
    ta, tb = _op(xp, a, p.transpose_a), _op(xp, b, p.transpose_b)
    grads = [_op(xp, p.alpha * xp.matmul(dd, mT(xp, tb)), p.transpose_a),
             _op(xp, p.alpha * xp.matmul(mT(xp, ta), dd), p.transpose_b)]
    if len(outputs) == 3:
        grads.append(p.beta * dd)
    grads = [_axis_out(p, xp, g, nd) for g in grads]
    for k, g in enumerate(grads):
        assign(outputs[k], req[k], g)


la_op("_linalg_gemm",
      "General matrix multiplication-accumulation ``alpha * op(A) * op(B) + beta * C`` "
      "(``op`` the identity or the transpose), per matrix of a batch; rows on ``axis``, "
      "columns on the last axis.",
      args=[("A", "Tensor of input matrices"), ("B", "Tensor of input matrices"),
            ("C", "Tensor of input matrices")],
      params=LaMatrixMacParam, shape=_gemm_shape("_linalg_gemm"), compute=_gemm,
      grad=ElemwiseGradUseIn("_backward_linalg_gemm"), inplace=[(2, 0)],
      examples=[
          {"inputs": [(2, 3), (3, 4), (2, 4)], "params": {"alpha": 2.0, "beta": 0.5},
           "ref": lambda a, b, c, alpha, beta: (alpha * a @ b + beta * c).astype(a.dtype)},
          {"inputs": [(2, 3, 2), (2, 4, 3), (2, 2, 4)],
           "params": {"transpose_a": True, "transpose_b": True, "alpha": -1.5, "beta": 3.0}},
          {"inputs": [(2, 4, 3), (3, 4, 5), (2, 4, 5)], "params": {"axis": 0}}])
la_backward("_backward_linalg_gemm", n_in=4, n_out=3, params=LaMatrixMacParam,
            shape=like_inputs("_backward_linalg_gemm"), compute=_gemm_backward,
            inplace=[(2, 1), (3, 2)],
            examples=[{"inputs": [(2, 3, 4), (2, 3, 5), (2, 5, 4), (2, 3, 4)],
                       "params": {"alpha": 2.0, "beta": -1.0}}])

la_op("_linalg_gemm2",
      "General matrix multiplication ``alpha * op(A) * op(B)`` (``op`` the identity or the "
      "transpose), per matrix of a batch; rows on ``axis``, columns on the last axis.",
      args=[("A", "Tensor of input matrices"), ("B", "Tensor of input matrices")],
      params=LaMatrixMultParam, shape=_gemm_shape("_linalg_gemm2"), compute=_gemm,
      grad=ElemwiseGradUseIn("_backward_linalg_gemm2"),
      examples=[
          {"inputs": [(2, 3), (3, 4)], "params": {"alpha": 4.0},
           "ref": lambda a, b, alpha: (alpha * a @ b).astype(a.dtype)},
          {"inputs": [(3, 3, 2), (3, 4, 3)], "params": {"transpose_a": True, "transpose_b": True}},
          {"inputs": [(2, 1, 3, 4), (4, 1, 3, 5)], "params": {"axis": -4, "alpha": 0.5}}])
la_backward("_backward_linalg_gemm2", n_in=3, n_out=2, params=LaMatrixMultParam,
            shape=like_inputs("_backward_linalg_gemm2"), compute=_gemm_backward,
            inplace=[(2, 1)],
            examples=[{"inputs": [(2, 3, 5), (2, 3, 4), (2, 4, 5)]},
                      {"inputs": [(3, 3), (4, 3), (3, 4)],
                       "params": {"transpose_a": True, "transpose_b": True}}])


# -- trmm, trsm --------------------------------------------------------------------------
def _tri_shape(op):
    """MXNet's LaTriangMatrixMultOpShape: A square, B (m, n) on the side given by
    ``rightside``; forward from both inputs, or backward from the output."""
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        a, b = ins
        if a is not None and b is not None:
            a, b = tuple(a), tuple(b)
            if len(a) < 2:
                fail(op, f"input A must be a tensor of square matrices, got {a}")
            same_batch(op, a, b)
            check_dim(op, a[-2], a[-1], f"input A must be a tensor of square matrices, got {a}")
            k = -1 if p.rightside else -2
            check_dim(op, a[-1], b[k], f"incompatible matrix dimensions for multiplication: "
                                       f"A {a}, B {b} (rightside={p.rightside})")
            return ins, merge_outs(op, outs, [b])
        if outs[0] is not None and len(outs[0]) >= 2:
            o = tuple(outs[0])
            n = o[-1] if p.rightside else o[-2]
            ins = merge_outs(op, ins, [o[:-2] + (n, n), o], "input")
        return ins, outs
    return infer


def _tri_op(xp, p, a):
    """op(A) with A's other triangle read as zeros."""
    return _op(xp, tri(xp, a, p.lower), p.transpose)


def _trmm(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    a, b = inputs
    ta = _tri_op(xp, p, a)
    c = xp.matmul(b, ta) if p.rightside else xp.matmul(ta, b)
    assign(outputs[0], req[0], p.alpha * c)


def _trmm_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    dc, a, b = inputs
    ta = _tri_op(xp, p, a)
    if p.rightside:
        d_ta, db = xp.matmul(mT(xp, b), dc), xp.matmul(dc, mT(xp, ta))
    else:
        d_ta, db = xp.matmul(dc, mT(xp, b)), xp.matmul(mT(xp, ta), dc)
    da = tri(xp, _op(xp, p.alpha * d_ta, p.transpose), p.lower)
    assign(outputs[0], req[0], da)
    assign(outputs[1], req[1], p.alpha * db)


def _solve(xp, p, a, b, transposed):
    """``op(A)^{-1} B`` (or ``B op(A)^{-1}`` when ``rightside``), op also transposing when
    ``transposed`` (the gradient solves with op(A)^T)."""
    t = p.transpose != transposed
    if p.rightside:    # X op(A) = B  <=>  op(A)^T X^T = B^T
        return mT(xp, tri_solve(xp, a if t else mT(xp, a), mT(xp, b), p.lower == t))
    return tri_solve(xp, mT(xp, a) if t else a, b, p.lower != t)


def _trsm(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    a, b = inputs
    assign(outputs[0], req[0], _solve(xp, p, a, p.alpha * b, False))


def _trsm_backward(ctx, inputs, req, outputs, p):
    """With M = op(A)^{-T} dC (or dC op(A)^{-T}): dB = alpha M, d op(A) = -M C^T (or -C^T M)."""
    xp = ctx.xp
    dc, a, _, c = inputs
    m = _solve(xp, p, a, dc, True)
    d_ta = -(xp.matmul(mT(xp, c), m) if p.rightside else xp.matmul(m, mT(xp, c)))
    da = tri(xp, _op(xp, d_ta, p.transpose), p.lower)
    assign(outputs[0], req[0], da)
    assign(outputs[1], req[1], p.alpha * m)


def _triangular(n, batch=(), lower=True, seed=0):
    """Well conditioned triangular test matrices (random values in the other triangle, which
    the ops must ignore)."""
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, batch + (n, n)) + 3 * np.eye(n)
    return a.astype(np.float32)


la_op("_linalg_trmm",
      "Triangular matrix multiplication ``alpha * op(A) * B`` (``alpha * B * op(A)`` when "
      "``rightside``), A triangular (only its lower/upper triangle is read), per matrix of a "
      "batch.",
      args=[("A", "Tensor of lower triangular matrices"), ("B", "Tensor of matrices")],
      params=LaTriangMatrixMultParam, shape=_tri_shape("_linalg_trmm"), compute=_trmm,
      grad=ElemwiseGradUseIn("_backward_linalg_trmm"), inplace=[(1, 0)],
      examples=[
          {"inputs": [_triangular(3), (3, 4)], "params": {"alpha": 2.0},
           "ref": lambda a, b, alpha: (alpha * np.tril(a) @ b).astype(a.dtype)},
          {"inputs": [_triangular(3, (2,)), (2, 4, 3)],
           "params": {"rightside": True, "transpose": True, "lower": False}},
          {"inputs": [_triangular(2, (2,)), (2, 2, 3)], "params": {"transpose": True}},
          {"inputs": [_triangular(3), (2, 3)], "params": {"rightside": True, "alpha": -1.0}}])
la_backward("_backward_linalg_trmm", n_in=3, n_out=2, params=LaTriangMatrixMultParam,
            shape=like_inputs("_backward_linalg_trmm"), compute=_trmm_backward,
            inplace=[(0, 1)],
            examples=[{"inputs": [(2, 3, 4), _triangular(3, (2,)), (2, 3, 4)],
                       "params": {"lower": False}}])

la_op("_linalg_trsm",
      "Solves ``op(A) * X = alpha * B`` (``X * op(A) = alpha * B`` when ``rightside``) for X, "
      "A triangular (only its lower/upper triangle is read), per matrix of a batch.",
      args=[("A", "Tensor of lower triangular matrices"), ("B", "Tensor of matrices")],
      params=LaTriangMatrixMultParam, shape=_tri_shape("_linalg_trsm"), compute=_trsm,
      grad=ElemwiseGradUseInOut("_backward_linalg_trsm"), inplace=[(1, 0)],
      examples=[
          {"inputs": [_triangular(3), (3, 4)], "params": {"alpha": 2.0},
           "ref": lambda a, b, alpha: np.linalg.solve(np.tril(a), alpha * b).astype(a.dtype)},
          {"inputs": [_triangular(3, (2,)), (2, 4, 3)],
           "params": {"rightside": True, "transpose": True, "lower": False, "alpha": -0.5}},
          {"inputs": [_triangular(2, (2,)), (2, 2, 3)], "params": {"transpose": True}},
          {"inputs": [_triangular(3), (2, 3)], "params": {"rightside": True, "lower": False}}])
la_backward("_backward_linalg_trsm", n_in=4, n_out=2, params=LaTriangMatrixMultParam,
            shape=like_inputs("_backward_linalg_trsm"), compute=_trsm_backward,
            inplace=[(0, 1), (1, 0)],
            examples=[{"inputs": [(2, 3, 3), _triangular(3, (2,)), (2, 3, 3), (2, 3, 3)],
                       "params": {"rightside": True}}])


# -- syrk --------------------------------------------------------------------------------
def _syrk_shape(p, ins, outs):
    if ins[0] is None:
        return list(ins), list(outs)
    a = tuple(ins[0])
    if len(a) < 2:
        fail("_linalg_syrk", f"input A must be a tensor of matrices (at least 2 dims), got {a}")
    m = a[-1] if p.transpose else a[-2]
    return list(ins), merge_outs("_linalg_syrk", outs, [a[:-2] + (m, m)])


def _syrk(ctx, inputs, req, outputs, p):
    xp, a = ctx.xp, inputs[0]
    b = xp.matmul(mT(xp, a), a) if p.transpose else xp.matmul(a, mT(xp, a))
    assign(outputs[0], req[0], symmetric_from(xp, p.alpha * b, True))


def _syrk_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    db, a = inputs
    s = db + mT(xp, db)
    assign(outputs[0], req[0], p.alpha * (xp.matmul(a, s) if p.transpose else xp.matmul(s, a)))


la_op("_linalg_syrk",
      "Symmetric rank-k update ``alpha * A * A^T`` (``alpha * A^T * A`` when ``transpose``), "
      "per matrix of a batch.",
      args=[("A", "Tensor of input matrices")],
      params=LaSyrkParam, shape=_syrk_shape, compute=_syrk,
      grad=ElemwiseGradUseIn("_backward_linalg_syrk"),
      examples=[
          {"inputs": [(2, 3)], "params": {"alpha": 1.5},
           "ref": lambda a, alpha, **_: (alpha * a @ a.T).astype(a.dtype)},
          {"inputs": [(2, 4, 3)], "params": {"transpose": True, "alpha": -2.0}}])
la_backward("_backward_linalg_syrk", n_in=2, n_out=1, params=LaSyrkParam,
            shape=like_inputs("_backward_linalg_syrk"), compute=_syrk_backward,
            examples=[{"inputs": [(2, 3, 3), (2, 3, 4)]},
                      {"inputs": [(4, 4), (3, 4)], "params": {"transpose": True}}])
