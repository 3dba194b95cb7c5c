"""Sparse kernels (``FComputeSparse``) of the slicing, indexing, joining and ``dot`` ops, with
MXNet 1.9's output storage types: ``slice`` and ``take`` (axis 0) of a CSR array and
``concat`` of CSR arrays along rows give CSR; ``dot``: csr x dense -> dense,
csr.T x dense -> row_sparse, dense x csr -> csr (``forward_stype`` may ask for dense)."""

from __future__ import annotations

import numpy as np
from opsdk import extend_op
from opsdk.sparse import (CSRStorage, csr_dot, csr_from_dense, csr_pattern_product,
                          csr_t_dot, stype_of, to_dense)


def csr_rows(x, rows):
    """The CSR of rows ``rows`` (int64 array) of CSR ``x``."""
    lengths = x.indptr[rows + 1] - x.indptr[rows]
    indptr = np.zeros(len(rows) + 1, np.int64)
    np.cumsum(lengths, out=indptr[1:])
    picks = np.repeat(x.indptr[rows] - indptr[:-1], lengths) + np.arange(indptr[-1])
    return CSRStorage(x.data[picks], x.indices[picks], indptr, (len(rows), x.shape[1]))


def _slice(params, inputs, dense):
    """Rows and optionally a column range of a CSR array, step 1 only (MXNet's
    SliceForwardInferStorageType)."""
    (x,) = inputs
    if stype_of(x) != "csr" or any(s not in (None, 1) for s in params.step):
        return None
    ranges = [slice(b, e).indices(n) for b, e, n in zip(params.begin, params.end, x.shape)]
    r0, r1, _ = ranges[0]
    out = csr_rows(x, np.arange(r0, max(r0, r1), dtype=np.int64))
    if len(ranges) < 2:
        return [out]
    c0, c1, _ = ranges[1]
    c1 = max(c0, c1)
    keep = (out.indices >= c0) & (out.indices < c1)
    kept_before = np.concatenate([[0], np.cumsum(keep)])
    indptr = kept_before[out.indptr].astype(np.int64)
    return [CSRStorage(out.data[keep], out.indices[keep] - c0, indptr, (out.shape[0], c1 - c0))]


def _take(params, inputs, dense):
    """Rows of a CSR array picked by a dense index array (axis 0; clip or wrap)."""
    x, idx = inputs
    if stype_of(x) != "csr" or stype_of(idx) != "default" or params.axis != 0 \
            or params.mode == "raise" or idx.ndim != 1:
        return None
    positions = np.arange(x.shape[0], dtype=np.float64)
    rows = dense(positions, idx)[0].astype(np.int64)     # the op's own index rule
    return [csr_rows(x, rows)]


def _concat(params, inputs, dense):
    """CSR arrays stacked along rows."""
    if params.dim != 0 or not all(stype_of(x) == "csr" for x in inputs):
        return None
    offsets = np.cumsum([0] + [len(x.data) for x in inputs])
    indptr = np.concatenate([[0]] + [x.indptr[1:] + o for x, o in zip(inputs, offsets)])
    shape = (sum(x.shape[0] for x in inputs), inputs[0].shape[1])
    return [CSRStorage(np.concatenate([x.data for x in inputs]),
                       np.concatenate([x.indices for x in inputs]), indptr.astype(np.int64),
                       shape)]


def _dot(params, inputs, dense):
    a, b = inputs
    sa, sb = stype_of(a), stype_of(b)
    want = params.forward_stype
    if params.transpose_b or (sa == "csr" and sb == "csr"):
        return None
    if sa == "csr" and sb in ("default", "row_sparse"):
        rhs = to_dense(b)
        if params.transpose_a:
            out = csr_t_dot(a, rhs)
            return [to_dense(out) if want == "default" else out]
        return [csr_dot(a, rhs)] if want in (None, "default") else None
    if sa == "default" and sb == "csr" and not params.transpose_a:
        out = _dense_dot_csr(a, b)
        return [csr_from_dense(out) if want in (None, "csr") else out]
    return None


def _dot_backward(params, inputs, dense):
    """``_backward_dot`` with a CSR lhs (a sparse model's data) and dense head gradient:
    the rhs gradient by the CSR kernels (``dot(csr.T, og)``: row_sparse over the columns the
    CSR uses, as MXNet's), the lhs gradient on the CSR's own pattern (the product's value
    where the CSR stores one): never the dense product, which can be vastly larger."""
    og, a, b = inputs
    if stype_of(a) != "csr" or stype_of(og) != "default" or params.transpose_b:
        return None
    rhs = to_dense(b)
    if params.transpose_a:          # out = a.T @ b: d a = b @ og.T, d b = a @ og
        return [csr_pattern_product(a, rhs, og), csr_dot(a, og)]
    return [csr_pattern_product(a, og, rhs), csr_t_dot(a, og)]   # out = a @ b


def _dense_dot_csr(a, b):
    """``a @ b`` for dense ``a`` and CSR ``b``: each stored value adds a scaled column of
    ``a`` to one output column."""
    rows = np.repeat(np.arange(b.shape[0]), np.diff(b.indptr))
    order = np.argsort(b.indices, kind="stable")
    cols = b.indices[order]
    keys, starts = np.unique(cols, return_index=True)
    out = np.zeros((a.shape[0], b.shape[1]), np.result_type(a, b.data))
    if len(keys):
        scaled = a[:, rows[order]] * b.data[order]
        out[:, keys] = np.add.reduceat(scaled, starts, axis=1)
    return out


for _name, _kernel in (("slice", _slice), ("take", _take), ("Concat", _concat), ("dot", _dot),
                      ("_backward_dot", _dot_backward)):
    extend_op(_name).set_attr("FComputeSparse", _kernel)
