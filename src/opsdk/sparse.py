"""Sparse kernels for plugin authors: the host storages an op's ``FComputeSparse`` kernel
receives and returns, and their conversions.

``FComputeSparse``: ``kernel(params, inputs, dense) -> list of outputs, or None``. Each input
is a ``CSRStorage``, a ``RowSparseStorage`` or a numpy array (dense); ``dense(*arrays)``
runs the op's own dense kernel on numpy arrays and returns its outputs (numpy). Return the
visible outputs in the storage types MXNet's ``FInferStorageType`` gives, or None where
MXNet has no sparse kernel for these inputs: the core then runs the storage fallback
(inputs densified, dense kernel, dense outputs). An op with ``FMutateInputs`` (an
optimizer's states) returns after its outputs the new value of each mutated input, in the
order ``FMutateInputs`` lists them; the core writes them back in each input's storage type.

The kernel is also the op's storage-type rule in bound graphs: executors call it at bind on
inputs that store nothing (empty storages, zero dense arrays), so the storage types it
returns must follow from the inputs' storage types, shapes, dtypes and the parameters
alone. Raising (an ``MXNetError``) refuses the inputs' storage types, as MXNet's
``FInferStorageType`` can.

A stateful op's kernel (one with ``FCreateOpState``, as the core's ``Custom``) returns
``(outputs, (state, input shapes, input dtypes))``, or None: autograd hands that state to
the op's backward, as on the dense path; executors do not call it at bind (a stateful op's
outputs in a bound graph are dense).
"""

import numpy as np

from mxnext import engine, resource
from mxnext.context import cpu
from mxnext.ndarray.sparse_storage import (CSRStorage, RowSparseStorage, csr_from_dense,
                                           from_dense, rsp_from_dense, stype_of, to_dense)

__all__ = ["CSRStorage", "RowSparseStorage", "stype_of", "to_dense", "from_dense",
           "csr_from_dense", "rsp_from_dense", "csr_dot", "csr_t_dot", "csr_pattern_product",
           "host_random"]


def host_random():
    """The CPU's random generator (a ``numpy.random.Generator``; ``mx.random.seed`` seeds
    it) for a sparse kernel that draws, as MXNet's ``FComputeEx`` ops with a
    ``ResourceRequest.RANDOM`` do. Sparse kernels run on the host in the caller's thread,
    so this first waits for what the engine has queued on the resource (a reseed, a draw)."""
    res = resource.request(cpu(), resource.ResourceRequest.RANDOM)
    engine.get().wait_for_var(res.var)
    return res.get_random()


def _row_of_each_value(a):
    return np.repeat(np.arange(a.shape[0]), np.diff(a.indptr))


def csr_dot(a, rhs):
    """``a @ rhs`` for a ``CSRStorage`` ``a`` and a dense 2-d ``rhs``: a dense array."""
    contrib = (a.data[:, None] * rhs[a.indices]).astype(np.result_type(a.data, rhs))
    out = np.zeros((a.shape[0], rhs.shape[1]), contrib.dtype)
    nonempty = np.flatnonzero(np.diff(a.indptr) > 0)     # rows storing values, in order
    if nonempty.size:
        out[nonempty] = np.add.reduceat(contrib, a.indptr[nonempty], axis=0)
    return out


def csr_t_dot(a, rhs):
    """``a.T @ rhs`` for a ``CSRStorage`` ``a``: a ``RowSparseStorage`` over the columns
    ``a`` stores (an explicit zero included), MXNet's rows for ``dot(csr.T, dense)``."""
    order = np.argsort(a.indices, kind="stable")
    rows = _row_of_each_value(a)[order]
    keys, starts = np.unique(a.indices[order], return_index=True)
    contrib = (a.data[order][:, None] * rhs[rows]).astype(np.result_type(a.data, rhs))
    sums = np.add.reduceat(contrib, starts, axis=0) if len(keys) else contrib[:0]
    return RowSparseStorage(sums, keys.astype(np.int64), (a.shape[1], rhs.shape[1]))


def csr_pattern_product(a, left, right):
    """``left @ right.T`` where the ``CSRStorage`` ``a`` stores a value, as a CSR of ``a``'s
    pattern: the gradient of a product with respect to ``a`` (``left`` has a row per row of
    ``a``, ``right`` one per column), never the dense product."""
    vals = np.einsum("ij,ij->i", left[_row_of_each_value(a)], right[a.indices])
    return CSRStorage(vals.astype(np.result_type(a.data, left, right)), a.indices, a.indptr,
                      a.shape)
