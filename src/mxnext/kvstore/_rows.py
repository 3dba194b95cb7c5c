"""Sparse values in the local KVStore (MXNet's ``init``/``push``/``pull`` of row_sparse
arrays and ``row_sparse_pull``): sums and copies run as sparse NDArray ops, so a
row_sparse value stays compressed in the store."""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError
from .. import ndarray as nd

__all__ = ["any_sparse", "sparse_sum", "retained_rows"]


def any_sparse(arrays) -> bool:
    for a in arrays:
        if a.stype != "default":
            return True
    return False


def sparse_sum(values, ctx):
    """The sum of ``values`` (any storage types) on ``ctx``: row_sparse when all are."""
    total = values[0].copyto(ctx)
    for v in values[1:]:
        total = total + v.copyto(ctx)
    return total


def retained_rows(what, key, stored, row_ids, ctx):
    """The rows ``row_ids`` (any order, repeats allowed) of the row_sparse ``stored`` value,
    as a RowSparseNDArray on ``ctx``."""
    if stored.stype != "row_sparse":
        raise MXNetError(f"KVStore.{what}: key {key!r} holds a {stored.stype} value; "
                         f"row_sparse_pull needs a row_sparse one")
    rows = np.unique(row_ids.asnumpy().astype(np.int64))
    kept = nd.sparse.retain(stored, nd.array(rows, ctx=stored.context, dtype=np.int64))
    return kept.copyto(ctx)
