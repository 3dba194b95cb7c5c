"""Random sparse arrays, as MXNet's ``test_utils`` makes them (``rand_sparse_ndarray``,
``create_sparse_array``, ``create_sparse_array_zd``); ``rand_ndarray`` dispatches here for a
sparse ``stype``."""

from __future__ import annotations

import numpy as np

from ._inputs import default_context, random_arrays
from ._tolerance import default_dtype

__all__ = ["rand_ndarray", "rand_sparse_ndarray", "create_sparse_array",
           "create_sparse_array_zd", "shuffle_csr_column_indices"]


def _nd():
    from .. import ndarray
    return ndarray


def shuffle_csr_column_indices(csr):
    """Shuffle the column indices within each row of a scipy CSR matrix, in place."""
    for row in range(csr.shape[0]):
        lo, hi = csr.indptr[row], csr.indptr[row + 1]
        np.random.shuffle(csr.indices[lo:hi])


def _uniform_csr(rows, cols, density, dtype, data_init, shuffle):
    """``density`` of the positions, uniformly chosen, hold values (scipy's ``sparse.rand``
    when scipy is there, else a masked uniform draw)."""
    try:
        from scipy import sparse as spsp
    except ImportError:
        if data_init is not None or shuffle:
            raise ValueError("rand_sparse_ndarray: data_init and shuffle_csr_indices need scipy")
        dense = np.random.uniform(size=(rows, cols)).astype(dtype)
        return _nd().array(dense * (dense < density), dtype=dtype).tostype("csr")
    csr = spsp.rand(rows, cols, density, dtype=dtype, format="csr")
    if data_init is not None:
        csr.data.fill(data_init)
    if shuffle:
        shuffle_csr_column_indices(csr)
    return _nd().sparse.csr_matrix((csr.data, csr.indices, csr.indptr), shape=(rows, cols),
                                   dtype=dtype)


def _powerlaw_csr(rows, cols, density, dtype):
    """Row ``r`` holds up to ``2**(r+1)`` leading columns (each row at least column 0) until
    ``rows * cols * density`` values are placed: MXNet's power-law test data."""
    left = int(rows * cols * density)
    dense = np.zeros((rows, cols), dtype)
    for r in range(rows):                  # column 0 of every row first
        dense[r, 0] = 1 + np.random.uniform(0.001, 2)
        left -= 1
        if left <= 0:
            return _nd().array(dense).tostype("csr")
    width = 2
    for r in range(rows):
        limit = min(cols, width)
        take = min(limit - 1, left)
        dense[r, 1:1 + take] = 1 + np.random.uniform(0.001, 2, size=take)
        left -= take
        if left <= 0:
            return _nd().array(dense).tostype("csr")
        if limit < cols:
            width *= 2
    raise ValueError(f"rand_sparse_ndarray: powerlaw cannot place density {density} in shape "
                     f"({rows}, {cols})")


def _rand_rsp(shape, density, dtype, data_init, rsp_indices, modifier_func, ctx):
    if rsp_indices is not None:
        indices = np.asarray(rsp_indices)
        if len(indices) > shape[0]:
            raise ValueError(f"rand_sparse_ndarray: {len(indices)} row indices for "
                             f"{shape[0]} rows")
    else:
        indices = np.flatnonzero(np.random.rand(shape[0]) < density)
    if indices.shape[0] == 0:
        arr = _nd().zeros(shape, stype="row_sparse", dtype=dtype, ctx=ctx)
        return arr, (np.array([], dtype=dtype), np.array([]))
    val = np.random.rand(indices.shape[0], *shape[1:]).astype(dtype)
    if data_init is not None:
        val.fill(data_init)
    if modifier_func is not None:
        val = np.vectorize(modifier_func, otypes=[np.float64])(val)
    arr = _nd().sparse.row_sparse_array((val, indices), shape=shape, dtype=dtype, ctx=ctx)
    return arr, (val, indices)


def rand_sparse_ndarray(shape, stype, density=None, dtype=None, distribution=None,
                        data_init=None, rsp_indices=None, modifier_func=None,
                        shuffle_csr_indices=False, ctx=None):
    """A random sparse array and its parts: ``(rsp, (values, row indices))`` or
    ``(csr, (indptr, indices, data))``. ``density`` defaults to a random one;
    ``distribution``: 'uniform' (default) or, for csr, 'powerlaw'."""
    ctx = ctx or default_context()
    density = np.random.rand() if density is None else density
    if not 0 <= density <= 1:
        raise ValueError(f"rand_sparse_ndarray: density must lie in [0, 1], got {density}")
    dtype = dtype or default_dtype()
    distribution = distribution or "uniform"
    if stype == "row_sparse":
        if distribution != "uniform":
            raise ValueError(f"rand_sparse_ndarray: distribution {distribution!r} is not "
                             f"supported for row_sparse")
        return _rand_rsp(shape, density, dtype, data_init, rsp_indices, modifier_func, ctx)
    if stype != "csr":
        raise ValueError(f"rand_sparse_ndarray: unknown storage type {stype!r}")
    if len(shape) != 2:
        raise ValueError(f"rand_sparse_ndarray: csr needs a 2-D shape, got {shape}")
    if distribution == "uniform":
        csr = _uniform_csr(*shape, density, dtype, data_init, shuffle_csr_indices)
    elif distribution == "powerlaw":
        csr = _powerlaw_csr(*shape, density, dtype)
    else:
        raise ValueError(f"rand_sparse_ndarray: distribution {distribution!r} is not supported")
    csr = csr.as_in_context(ctx)
    return csr, (csr.indptr, csr.indices, csr.data)


def create_sparse_array(shape, stype, data_init=None, rsp_indices=None, dtype=None,
                        modifier_func=None, density=.5, shuffle_csr_indices=False):
    """A random sparse array (row_sparse indices sorted)."""
    if stype not in ("row_sparse", "csr"):
        raise AssertionError(f"Unknown storage type: {stype}")
    if stype == "row_sparse" and rsp_indices is not None:
        rsp_indices = np.sort(np.asarray(rsp_indices))
    arr, _ = rand_sparse_ndarray(shape, stype, density=density, data_init=data_init,
                                 rsp_indices=rsp_indices if stype == "row_sparse" else None,
                                 dtype=dtype, modifier_func=modifier_func,
                                 shuffle_csr_indices=shuffle_csr_indices)
    return arr


def create_sparse_array_zd(shape, stype, density, data_init=None, rsp_indices=None,
                           dtype=None, modifier_func=None, shuffle_csr_indices=False):
    """``create_sparse_array`` where, for row_sparse, only ``rsp_indices`` decide the rows."""
    if stype == "row_sparse":
        density = 0.0
    return create_sparse_array(shape, stype, data_init=data_init, rsp_indices=rsp_indices,
                               dtype=dtype, modifier_func=modifier_func, density=density,
                               shuffle_csr_indices=shuffle_csr_indices)


def rand_ndarray(shape, stype="default", density=None, dtype=None, modifier_func=None,
                 shuffle_csr_indices=False, distribution=None, ctx=None):
    """A standard-normal NDArray of ``shape`` on ``ctx`` (default context), float32 by default,
    or for ``stype`` 'csr' / 'row_sparse' the array of ``rand_sparse_ndarray``; the
    sparse-only arguments are ignored for dense arrays, as in MXNet.
    """
    if stype != "default":
        return rand_sparse_ndarray(shape, stype, density=density, modifier_func=modifier_func,
                                   dtype=dtype, shuffle_csr_indices=shuffle_csr_indices,
                                   distribution=distribution, ctx=ctx)[0]
    from .. import ndarray as nd
    return nd.array(random_arrays(shape), dtype=dtype, ctx=ctx or default_context())
