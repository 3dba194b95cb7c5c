"""Factorizations and inverses among the ``_linalg_*`` ops (MXNet's la_op.cc): potrf, potri,
gelqf, syevd, inverse, det and slogdet, per matrix of a batch (the trailing two axes).

Symmetric inputs are read on one triangle only, as LAPACK does (potrf: the ``lower`` one,
syevd: the lower one). det and slogdet also output, hidden, the LU factorization with partial
pivoting that MXNet's gradient reads: that of the transposed matrix (MXNet hands its row-major
data to column-major LAPACK) stored transposed, and LAPACK's 1-based int32 pivots.

The gradients follow MXNet (see arXiv:1710.08717): symmetric for potrf and syevd, so a
numeric check must perturb a symmetric input symmetrically.
"""

from __future__ import annotations

import numpy as np
from opsdk import (ElemwiseGradUseInOut, ElemwiseGradUseOut, Field, NodeEntry, Param, assign,
                   make_node)
from opsdk.shape import unknown_dim

from ._la import (la_backward, la_op, la_type, like_inputs, linalg_error, matrices,
                  merge_outs, mT, symmetric_from, tri, tri_solve)
from ._layout import fail


class LaCholeskyParam(Param):
    lower: bool = Field(True, description="True if the triangular matrix is lower triangular, "
                                          "false if it is upper triangular.")


def _square_same(op):
    """FInferShape: output shape = input shape, a batch of square matrices (both ways)."""
    def infer(p, ins, outs):
        s = ins[0] if ins[0] is not None else outs[0]
        if s is None:
            return list(ins), list(outs)
        matrices(op, tuple(s), square=True)
        return merge_outs(op, ins, [s], "input"), merge_outs(op, outs, [s])
    return infer


def _spd(n, batch=(), seed=0):
    """Symmetric positive definite test matrices."""
    a = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return (np.matmul(a, mT(np, a)) + n * np.eye(n)).astype(np.float32)


def _lower(n, batch=(), seed=0):
    """Lower triangular test matrices with a safe diagonal."""
    a = np.random.default_rng(seed).uniform(-1, 1, batch + (n, n))
    return np.tril(a + 3 * np.eye(n)).astype(np.float32)


# -- potrf, potri ------------------------------------------------------------------------
def _potrf(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    try:
        chol = xp.linalg.cholesky(symmetric_from(xp, inputs[0], p.lower))
    except np.linalg.LinAlgError:
        raise linalg_error("_linalg_potrf", "potrf failed: the input matrix is either not "
                                            "symmetric or not positive definite") from None
    assign(outputs[0], req[0], chol if p.lower else mT(xp, chol))


def _potrf_backward(ctx, inputs, req, outputs, p):
    """dA = 0.5 L^-T copyLTU(L^T dL) L^-1 with L the lower factor (B or B^T)."""
    xp = ctx.xp
    db, b = inputs
    low, dlow = (b, db) if p.lower else (mT(xp, b), mT(xp, db))
    s = symmetric_from(xp, xp.matmul(mT(xp, low), dlow), True)
    x = tri_solve(xp, mT(xp, low), s, False)
    assign(outputs[0], req[0], 0.5 * mT(xp, tri_solve(xp, mT(xp, low), mT(xp, x), False)))


la_op("_linalg_potrf",
      "Cholesky factor B of each symmetric positive definite matrix A of a batch: A = B B^T "
      "with B lower triangular (``lower``), or A = B^T B with B upper triangular. Only that "
      "triangle of A is read.",
      args=[("A", "Tensor of input matrices to be decomposed")], params=LaCholeskyParam,
      shape=_square_same("_linalg_potrf"), compute=_potrf, inplace=[(0, 0)],
      grad=ElemwiseGradUseOut("_backward_linalg_potrf"),
      examples=[  # gradient checked in test_la.py on symmetric perturbations
          {"inputs": [_spd(3)], "grad": False,
           "ref": lambda a, **_: np.linalg.cholesky(a)},
          {"inputs": [_spd(4, (2,))], "params": {"lower": False}, "grad": False}])
la_backward("_backward_linalg_potrf", n_in=2, n_out=1, params=LaCholeskyParam,
            shape=like_inputs("_backward_linalg_potrf"), compute=_potrf_backward,
            inplace=[(0, 0)],
            examples=[{"inputs": [(2, 3, 3), _lower(3, (2,))]},
                      {"inputs": [(3, 3), mT(np, _lower(3))], "params": {"lower": False}}])


def _potri(ctx, inputs, req, outputs, p):
    """(B B^T)^-1 (``lower``) or (B^T B)^-1, from the triangle of B."""
    xp, b = ctx.xp, inputs[0]
    eye = xp.broadcast_to(xp.eye(b.shape[-1], dtype=b.dtype), b.shape)
    inv = tri_solve(xp, b, eye, p.lower)
    out = xp.matmul(mT(xp, inv), inv) if p.lower else xp.matmul(inv, mT(xp, inv))
    assign(outputs[0], req[0], symmetric_from(xp, out, True))


def _potri_backward(ctx, inputs, req, outputs, p):
    """dB = -tril(A (dA + dA^T) B^-T) (lower), -triu(B^-T (dA + dA^T) A) (upper)."""
    xp = ctx.xp
    da, b, a = inputs
    s = da + mT(xp, da)
    if p.lower:
        x = mT(xp, tri_solve(xp, b, mT(xp, xp.matmul(a, s)), True))
    else:
        x = tri_solve(xp, mT(xp, b), xp.matmul(s, a), True)
    assign(outputs[0], req[0], -tri(xp, x, p.lower))


la_op("_linalg_potri",
      "Inverse of B B^T (``lower``) or B^T B from each triangular matrix B of a batch (only "
      "its triangle is read): with B the Cholesky factor of A (potrf), the inverse of A.",
      args=[("A", "Tensor of lower triangular matrices")], params=LaCholeskyParam,
      shape=_square_same("_linalg_potri"), compute=_potri, inplace=[(0, 0)],
      grad=ElemwiseGradUseInOut("_backward_linalg_potri"),
      examples=[
          {"inputs": [_lower(3)], "ref": lambda b, **_: np.linalg.inv(b @ b.T)},
          {"inputs": [mT(np, _lower(4, (2,))) + np.tril(np.ones((4, 4), np.float32), -1)],
           "params": {"lower": False}}])
la_backward("_backward_linalg_potri", n_in=3, n_out=1, params=LaCholeskyParam,
            shape=like_inputs("_backward_linalg_potri"), compute=_potri_backward,
            examples=[{"inputs": [(2, 3, 3), _lower(3, (2,)), _spd(3, (2,))]},
                      {"inputs": [(3, 3), mT(np, _lower(3)), _spd(3)],
                       "params": {"lower": False}}])


# -- gelqf, syevd ------------------------------------------------------------------------
def _gelqf_shape(p, ins, outs):
    """Q like A (m <= n), L (..., m, m); or A from Q."""
    op = "_linalg_gelqf"
    a = ins[0]
    if a is None:
        if outs[0] is not None and len(outs[0]) >= 2:
            return merge_outs(op, ins, [outs[0]], "input"), list(outs)
        return list(ins), list(outs)
    a = tuple(a)
    matrices(op, a)
    if min(a[-2:]) > 0 and a[-2] > a[-1]:
        fail(op, f"input A must have at most as many rows as columns, got shape {a}")
    return list(ins), merge_outs(op, outs, [a, a[:-1] + (a[-2],)])


def _gelqf(ctx, inputs, req, outputs, p):
    """A = L Q from the QR factorization of A^T (Householder, as LAPACK gelqf)."""
    xp = ctx.xp
    q, r = xp.linalg.qr(mT(xp, inputs[0]))
    res = [mT(xp, q), mT(xp, r)]
    for k in range(2):
        assign(outputs[k], req[k], res[k])


def _gelqf_backward(ctx, inputs, req, outputs, p):
    """dA = L^-T (dQ + copyLTU(M) Q), M = L^T dL - dQ Q^T."""
    xp = ctx.xp
    dq, dl, q, low = inputs
    m = xp.matmul(mT(xp, low), dl) - xp.matmul(dq, mT(xp, q))
    rhs = dq + xp.matmul(symmetric_from(xp, m, True), q)
    assign(outputs[0], req[0], tri_solve(xp, mT(xp, low), rhs, False))


la_op("_linalg_gelqf",
      "LQ factorization A = L Q of each (m, n) matrix of a batch (m <= n, full rank): L lower "
      "triangular (m, m), Q (m, n) with orthonormal rows. Returns (Q, L).",
      args=[("A", "Tensor of input matrices to be factorized")], n_out=2,
      shape=_gelqf_shape, compute=_gelqf, inplace=[(0, 0)],
      grad=ElemwiseGradUseOut("_backward_linalg_gelqf"),
      examples=[{"inputs": [(2, 3)]}, {"inputs": [(2, 3, 5)]}, {"inputs": [(3, 3)]}])
la_backward("_backward_linalg_gelqf", n_in=4, n_out=1,
            shape=like_inputs("_backward_linalg_gelqf", first=2), compute=_gelqf_backward,
            inplace=[(0, 0)],
            examples=[{"inputs": [(2, 3), (2, 2),
                                  np.linalg.qr(np.random.default_rng(0).normal(size=(3, 2)))[0].T
                                  .astype(np.float32), _lower(2)]}])


def _syevd_shape(p, ins, outs):
    op = "_linalg_syevd"
    a = ins[0]
    if a is None:
        u = outs[0]
        if u is not None and len(u) >= 2:
            matrices(op, tuple(u), "U", square=True)
            return merge_outs(op, ins, [u], "input"), list(outs)
        return list(ins), list(outs)
    a = tuple(a)
    matrices(op, a, square=True)
    return list(ins), merge_outs(op, outs, [a, a[:-1]])


def _syevd(ctx, inputs, req, outputs, p):
    """Eigenvectors as the rows of U, each signed so that its largest entry (in absolute
    value, the first one on a tie) is positive; eigenvalues ascending."""
    xp = ctx.xp
    lam, vecs = xp.linalg.eigh(inputs[0], UPLO="L")
    u = mT(xp, vecs)
    lead = xp.take_along_axis(u, xp.argmax(xp.abs(u), axis=-1)[..., None], axis=-1)
    u = xp.where(lead < 0, -u, u)
    assign(outputs[0], req[0], u)
    assign(outputs[1], req[1], lam)


def _syevd_backward(ctx, inputs, req, outputs, p):
    """dA = U^T Y U: Y_ij = Y_ji = (X_ij - X_ji) / (2 max(l_i - l_j, eps)) for i > j and
    Y_ii = dl_i, where X = dU U^T."""
    xp = ctx.xp
    du, dl, u, lam = inputs
    eps = 1e-30 if u.dtype == np.float32 else 1e-100
    x = xp.matmul(du, mT(xp, u))
    gap = xp.maximum(lam[..., :, None] - lam[..., None, :], eps)
    y = xp.tril((x - mT(xp, x)) / (2 * gap), -1)
    n = lam.shape[-1]
    y = y + mT(xp, y) + dl[..., :, None] * xp.eye(n, dtype=u.dtype)
    assign(outputs[0], req[0], xp.matmul(xp.matmul(mT(xp, u), y), u))


la_op("_linalg_syevd",
      "Eigendecomposition of each symmetric matrix A of a batch (its lower triangle is read): "
      "U A = diag(L) U with U orthonormal (eigenvectors as rows, each with its largest entry "
      "positive) and the eigenvalues L ascending. Returns (U, L).",
      args=[("A", "Tensor of input matrices to be factorized")], n_out=2, aliases=(),
      shape=_syevd_shape, compute=_syevd, inplace=[(0, 0)],
      grad=ElemwiseGradUseOut("_backward_linalg_syevd"),
      examples=[  # gradient checked in test_la.py on symmetric perturbations
          {"inputs": [_spd(3)], "grad": False},
          {"inputs": [_spd(4, (2,)) - 4 * np.eye(4, dtype=np.float32)], "grad": False}])
la_backward("_backward_linalg_syevd", n_in=4, n_out=1,
            shape=like_inputs("_backward_linalg_syevd", first=2), compute=_syevd_backward,
            inplace=[(0, 0)],
            examples=[{"inputs": [(2, 3, 3), (2, 3),
                                  np.linalg.eigh(_spd(3, (2,)))[1].astype(np.float32),
                                  np.array([[-1, 0.5, 2], [0, 1, 3]], np.float32)]}])


# -- inverse, det, slogdet ---------------------------------------------------------------
def _inverse(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    try:
        inv = xp.linalg.inv(inputs[0])
    except np.linalg.LinAlgError:
        raise linalg_error("_linalg_inverse", "the input matrix is singular (not "
                                              "invertible)") from None
    assign(outputs[0], req[0], inv)


def _inverse_backward(ctx, inputs, req, outputs, p):
    """dA = -B^T dB B^T with B = A^-1."""
    xp = ctx.xp
    db, b = inputs
    assign(outputs[0], req[0], -xp.matmul(xp.matmul(mT(xp, b), db), mT(xp, b)))


la_op("_linalg_inverse", "Inverse of each square matrix of a batch.",
      args=[("A", "Tensor of square matrix")], aliases=("linalg_inverse", "_npi_inv"),
      shape=_square_same("_linalg_inverse"), compute=_inverse, inplace=[(0, 0)],
      grad=ElemwiseGradUseOut("_backward_linalg_inverse"),
      examples=[{"inputs": [_spd(3)], "ref": np.linalg.inv},
                {"inputs": [_lower(3, (2, 2))]}])
la_backward("_backward_linalg_inverse", n_in=2, n_out=1,
            shape=like_inputs("_backward_linalg_inverse"), compute=_inverse_backward,
            inplace=[(0, 0)], examples=[{"inputs": [(2, 3, 3), (2, 3, 3)]}])


def _getrf(xp, x):
    """LAPACK getrf on each matrix: P X = L U by partial pivoting, packed (L below the unit
    diagonal, U on and above it), with 1-based int32 pivots."""
    n = x.shape[-1]
    lu = x.reshape((-1, n, n)).copy()
    piv = xp.empty(lu.shape[:2], np.int32)
    rows = xp.arange(lu.shape[0])
    for k in range(n):
        r = k + xp.argmax(xp.abs(lu[:, k:, k]), axis=1)
        piv[:, k] = r + 1
        row_k = lu[rows, k].copy()
        lu[rows, k] = lu[rows, r]
        lu[rows, r] = row_k
        d = lu[:, k, k]
        lu[:, k + 1:, k] /= xp.where(d == 0, 1, d)[:, None]  # a zero pivot: the column is 0
        lu[:, k + 1:, k + 1:] -= lu[:, k + 1:, k, None] * lu[:, None, k, k + 1:]
    return lu.reshape(x.shape), piv.reshape(x.shape[:-1])


def _sign_logdet(xp, lu, piv):
    diag = xp.diagonal(lu, axis1=-2, axis2=-1)
    swaps = (piv != xp.arange(1, piv.shape[-1] + 1, dtype=np.int32)).sum(axis=-1)
    sign = xp.where(swaps % 2 == 1, -1, 1) * xp.sign(diag).prod(axis=-1)
    return sign.astype(lu.dtype), xp.log(xp.abs(diag)).sum(axis=-1)


def _inverse_t(xp, lu, piv):
    """A^-T from getrf(A^T) = (lu, piv): U^-1 L^-1 P^T."""
    n = lu.shape[-1]
    perm = xp.broadcast_to(xp.arange(n), piv.shape).reshape((-1, n)).copy()
    rows = xp.arange(perm.shape[0])
    for i, j in enumerate(mT(xp, piv.reshape((-1, n)) - 1)):
        perm_i = perm[rows, i].copy()
        perm[rows, i] = perm[rows, j]
        perm[rows, j] = perm_i
    pt = (perm.reshape(piv.shape)[..., :, None] == xp.arange(n)).astype(lu.dtype)
    return tri_solve(xp, lu, tri_solve(xp, lu, pt, True, unit=True), False)


def _det_shape(n_val):
    """(..., n, n) -> values (...) ((1,) for one matrix, () under np_shape), the LU factors
    and the pivots (..., n)."""
    op = "_linalg_det" if n_val == 1 else "_linalg_slogdet"

    def infer(p, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        a = tuple(ins[0])
        matrices(op, a, square=True)
        val = a[:-2] if len(a) > 2 else (() if unknown_dim() < 0 else (1,))
        return list(ins), merge_outs(op, outs, [val] * n_val + [a, a[:-1]])
    return infer


def _factor(xp, a, outputs, req, n_val):
    """LU-factor A^T into the hidden outputs; returns (sign, log|det|) shaped as the values."""
    lu, piv = _getrf(xp, mT(xp, a))
    sign, logdet = _sign_logdet(xp, lu, piv)
    assign(outputs[n_val], req[n_val], mT(xp, lu))
    assign(outputs[n_val + 1], req[n_val + 1], piv)
    shape = outputs[0].shape
    return sign.reshape(shape), logdet.reshape(shape)


def _det(ctx, inputs, req, outputs, p):
    sign, logdet = _factor(ctx.xp, inputs[0], outputs, req, 1)
    assign(outputs[0], req[0], sign * ctx.xp.exp(logdet))


def _slogdet(ctx, inputs, req, outputs, p):
    sign, logdet = _factor(ctx.xp, inputs[0], outputs, req, 2)
    assign(outputs[0], req[0], sign)
    assign(outputs[1], req[1], logdet)


def _det_backward(zero):
    """dA = head * scale * A^-T (scale det for det, 1 for log|det|), 0 where the value is
    ``zero`` (a singular A)."""
    def compute(ctx, inputs, req, outputs, p):
        xp = ctx.xp
        head, value, lu, piv = inputs[0], inputs[-3], inputs[-2], inputs[-1]
        scale = head * value if zero == 0 else head
        inv_t = _inverse_t(xp, mT(xp, lu), piv)
        batch = lu.shape[:-2] + (1, 1)
        g = scale.reshape(batch) * inv_t
        assign(outputs[0], req[0], xp.where(value.reshape(batch) == zero, 0, g))
    return compute


class _DetGrad:
    """MXNet's ReduceDetGrad: the backward node reads the gradient of the value output
    ``head`` (det or log|det|) and every forward output."""

    __slots__ = ("bwd", "head")

    def __init__(self, bwd, head):
        self.bwd, self.head = bwd, head

    def __call__(self, node, out_grads):
        outs = [NodeEntry(node, i, 0) for i in range(node.num_outputs())]
        n = make_node(self.bwd, [out_grads[self.head]] + outs, node.params,
                      name=f"{node.name}_backward")
        n.control_deps.append(node)
        return [NodeEntry(n, 0, 0)]


_DET_EXAMPLES = [{"inputs": [_spd(3)]},
                 {"inputs": [_lower(3, (2,)) - 2 * np.eye(3, dtype=np.float32)]},
                 {"inputs": [(2, 2, 4, 4)]}]

la_op("_linalg_det", "Determinant of each square matrix of a batch (by LU factorization; "
      "its gradient is 0 where the determinant is 0).",
      args=[("A", "Tensor of square matrix")], aliases=("linalg_det", "_npi_det"),
      n_out=3, visible=1, shape=_det_shape(1), types=la_type("_linalg_det", int_outs=(2,)),
      compute=_det, grad=_DetGrad("_backward_linalg_det", 0),
      examples=[{**e, "ref": lambda a: np.linalg.det(a.astype(np.float64)).reshape(
          a.shape[:-2] or (1,)).astype(a.dtype)} for e in _DET_EXAMPLES])
la_backward("_backward_linalg_det", n_in=4, n_out=1,
            shape=like_inputs("_backward_linalg_det", first=2), compute=_det_backward(0),
            types=la_type("_backward_linalg_det", int_ins=(3,)),
            examples=[{"inputs": [(2,), (2,), _lower(3, (2,)),
                                  np.array([[1, 3, 3], [3, 2, 3]], np.int32)]}])

la_op("_linalg_slogdet", "Sign and natural logarithm of the absolute value of the determinant "
      "of each square matrix of a batch (the sign gets no gradient; log|det| gets 0 where the "
      "determinant is 0).",
      args=[("A", "Tensor of square matrix")], aliases=("linalg_slogdet", "_npi_slogdet"),
      n_out=4, visible=2, shape=_det_shape(2), types=la_type("_linalg_slogdet", int_outs=(3,)),
      compute=_slogdet, grad=_DetGrad("_backward_linalg_slogdet", 1),
      examples=_DET_EXAMPLES)
la_backward("_backward_linalg_slogdet", n_in=5, n_out=1,
            shape=like_inputs("_backward_linalg_slogdet", first=3), compute=_det_backward(-np.inf),
            types=la_type("_backward_linalg_slogdet", int_ins=(4,)),
            examples=[{"inputs": [(2,), np.ones(2, np.float32), (2,), _lower(3, (2,)),
                                  np.array([[1, 3, 3], [3, 2, 3]], np.int32)]}])
