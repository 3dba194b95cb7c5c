"""Host-side compressed storage, the form sparse kernels, save/load and conversions work on.

``CSRStorage(data, indices, indptr, shape)``: row ``i``'s values are
``data[indptr[i]:indptr[i+1]]`` at columns ``indices[...]`` (2-D only).
``RowSparseStorage(data, indices, shape)``: ``data[k]`` is row ``indices[k]`` of the array;
rows not listed are zero. Components are numpy arrays, indices int64 as in MXNet. A kernel
that receives or returns a dense array uses a plain numpy array. Plugins reach these through
``opsdk.sparse``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._runtime.base import MXNetError

__all__ = ["CSRStorage", "RowSparseStorage", "stype_of", "to_dense", "from_dense",
           "csr_from_dense", "rsp_from_dense", "check_csr", "check_rsp"]


class CSRStorage(NamedTuple):
    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple

    stype = "csr"

    @property
    def dtype(self):
        return self.data.dtype

    def todense(self) -> np.ndarray:
        out = np.zeros(self.shape, self.data.dtype)
        rows = np.repeat(np.arange(self.shape[0]), np.diff(self.indptr))
        out[rows, self.indices] = self.data     # duplicates: the last wins, as MXNet's kernel
        return out


class RowSparseStorage(NamedTuple):
    data: np.ndarray
    indices: np.ndarray
    shape: tuple

    stype = "row_sparse"

    @property
    def dtype(self):
        return self.data.dtype

    def todense(self) -> np.ndarray:
        out = np.zeros(self.shape, self.data.dtype)
        out[self.indices] = self.data
        return out


def stype_of(x) -> str:
    """'csr', 'row_sparse' or 'default' (a numpy array)."""
    return getattr(x, "stype", "default") if not isinstance(x, np.ndarray) else "default"


def to_dense(x) -> np.ndarray:
    return x if isinstance(x, np.ndarray) else x.todense()


def csr_from_dense(dense: np.ndarray) -> CSRStorage:
    if dense.ndim != 2:
        raise ValueError(f"cast_storage: csr storage needs a 2-D array, got shape {dense.shape}")
    rows, cols = np.nonzero(dense)
    indptr = np.zeros(dense.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return CSRStorage(dense[rows, cols], cols.astype(np.int64), indptr, dense.shape)


def rsp_from_dense(dense: np.ndarray) -> RowSparseStorage:
    if dense.ndim < 1:
        raise ValueError("cast_storage: row_sparse storage needs at least 1 dimension")
    flat = dense.reshape(dense.shape[0], -1)
    rows = np.flatnonzero(np.any(flat != 0, axis=1)).astype(np.int64)
    return RowSparseStorage(dense[rows], rows, dense.shape)


def from_dense(dense: np.ndarray, stype: str):
    """``dense`` in storage ``stype`` (zeros dropped)."""
    if stype == "csr":
        return csr_from_dense(dense)
    if stype == "row_sparse":
        return rsp_from_dense(dense)
    if stype == "default":
        return dense
    raise ValueError(f"cast_storage: stype: expected 'default', 'csr' or 'row_sparse', got "
                     f"{stype!r}")


def check_csr(s: CSRStorage, full_check: bool = True) -> None:
    """MXNet's ``check_format`` of a CSR array: shapes always, values with ``full_check``."""
    nrow, ncol = s.shape
    if s.indptr.shape != (nrow + 1,) or s.indices.shape != s.data.shape:
        raise MXNetError(f"check_format: csr: expected indptr of length {nrow + 1} and indices "
                         f"as long as data, got {s.indptr.shape}, {s.indices.shape}, "
                         f"{s.data.shape}")
    if not full_check:
        return
    ptr, idx = s.indptr, s.indices
    if ptr[0] != 0 or ptr[-1] != idx.size or np.any(np.diff(ptr) < 0):
        raise MXNetError(f"check_format: csr: indptr must rise from 0 to {idx.size}, got "
                         f"{ptr.tolist()}")
    if idx.size and (idx.min() < 0 or idx.max() >= ncol):
        raise MXNetError(f"check_format: csr: indices must lie in [0, {ncol}), got "
                         f"{idx.min()}..{idx.max()}")
    rising = np.diff(idx) > 0
    row_starts = np.zeros(idx.size, bool)
    row_starts[ptr[1:-1][ptr[1:-1] < idx.size]] = True
    if idx.size > 1 and not np.all(rising | row_starts[1:]):
        raise MXNetError("check_format: csr: column indices must rise within each row")


def check_rsp(s: RowSparseStorage, full_check: bool = True) -> None:
    """MXNet's ``check_format`` of a row_sparse array."""
    idx = s.indices
    if idx.ndim != 1 or s.data.shape[:1] != idx.shape or s.data.shape[1:] != tuple(s.shape[1:]):
        raise MXNetError(f"check_format: row_sparse: expected data of shape "
                         f"({idx.size}, *{tuple(s.shape[1:])}), got {s.data.shape}")
    if full_check and idx.size and (idx.min() < 0 or idx.max() >= s.shape[0]
                                    or np.any(np.diff(idx) <= 0)):
        raise MXNetError(f"check_format: row_sparse: indices must rise within [0, "
                         f"{s.shape[0]}), got {idx.tolist()}")
