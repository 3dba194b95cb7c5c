"""``mx.nd.sparse``: the compressed sparse row (CSR) array, as far as reading sparse data
goes. A ``CSRNDArray`` holds ``data``, ``indices`` (int64 column of each value) and
``indptr`` (int64 row starts) and converts to and from dense arrays; operators do not take
it (convert with ``tostype('default')``), and row-sparse arrays are not provided.

The operator functions MXNet puts in this namespace (its ops with a sparse kernel:
``elemwise_mul``, ``dot``, ``sgd_update`` ...) are here too, as the dense ops of the same
name: they take dense arrays, as MXNet's do when given them."""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.context import current_context
from .ndarray import NDArray, array

__all__ = ["BaseSparseNDArray", "CSRNDArray", "csr_matrix", "zeros", "empty"]


class BaseSparseNDArray:
    """What MXNet's sparse arrays share: a shape, a dtype, a context and a storage type."""

    stype = None

    def __init__(self, shape, dtype, ctx):
        self._shape, self._dtype, self._ctx = tuple(int(d) for d in shape), np.dtype(dtype), ctx

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype.type)
    context = property(lambda self: self._ctx)
    ctx = context
    ndim = property(lambda self: len(self._shape))

    def __repr__(self):
        dims = "x".join(str(d) for d in self._shape)
        return f"\n<{type(self).__name__} {dims} @{self._ctx}>"

    def wait_to_read(self):
        """Nothing to wait for: sparse arrays are built eagerly."""

    def asnumpy(self):
        raise NotImplementedError


class CSRNDArray(BaseSparseNDArray):
    """A 2-D compressed sparse row array: row ``i``'s values are
    ``data[indptr[i]:indptr[i + 1]]`` in columns ``indices[indptr[i]:indptr[i + 1]]``."""

    stype = "csr"

    def __init__(self, data, indices, indptr, shape, ctx=None):
        data = np.asarray(data)
        indices, indptr = np.asarray(indices, np.int64), np.asarray(indptr, np.int64)
        super().__init__(shape, data.dtype, ctx if ctx is not None else current_context())
        _check_csr(data, indices, indptr, self._shape)
        self._data, self._indices, self._indptr = data, indices, indptr

    data = property(lambda self: array(self._data, ctx=self._ctx, dtype=self._dtype))
    indices = property(lambda self: array(self._indices, ctx=self._ctx, dtype=np.int64))
    indptr = property(lambda self: array(self._indptr, ctx=self._ctx, dtype=np.int64))

    def asnumpy(self):
        """The dense numpy array."""
        out = np.zeros(self._shape, self._dtype)
        rows = np.repeat(np.arange(self._shape[0]), np.diff(self._indptr))
        out[rows, self._indices] = self._data
        return out

    def tostype(self, stype):
        """``'default'``: the dense NDArray; ``'csr'``: a copy."""
        if stype == "default":
            return array(self.asnumpy(), ctx=self._ctx, dtype=self._dtype)
        if stype == "csr":
            return self.copy()
        raise MXNetError(f"CSRNDArray.tostype: stype: expected 'default' or 'csr', got {stype!r}")

    def todense(self):
        """``tostype('default')``."""
        return self.tostype("default")

    def asscipy(self):
        """The ``scipy.sparse.csr_matrix`` (needs scipy)."""
        import scipy.sparse
        return scipy.sparse.csr_matrix((self._data, self._indices, self._indptr),
                                       shape=self._shape)

    def copy(self):
        return CSRNDArray(self._data.copy(), self._indices.copy(), self._indptr.copy(),
                          self._shape, self._ctx)

    def astype(self, dtype, copy=True):
        """The same array with values of ``dtype``."""
        if not copy and np.dtype(dtype) == self._dtype:
            return self
        return CSRNDArray(self._data.astype(dtype), self._indices, self._indptr, self._shape,
                          self._ctx)

    def __getitem__(self, key):
        """Rows ``key`` (an int or a step-1 slice) as a CSRNDArray."""
        if isinstance(key, (int, np.integer)):
            row = int(key) + self._shape[0] if key < 0 else int(key)
            key = slice(row, row + 1)
        if not isinstance(key, slice) or key.step not in (None, 1):
            raise MXNetError(f"CSRNDArray: only row slices with step 1 index a CSRNDArray, "
                             f"got {key!r}")
        start, stop, _ = key.indices(self._shape[0])
        stop = max(start, stop)
        lo, hi = self._indptr[start], self._indptr[stop]
        return CSRNDArray(self._data[lo:hi], self._indices[lo:hi],
                          self._indptr[start:stop + 1] - lo, (stop - start, self._shape[1]),
                          self._ctx)

def _check_csr(data, indices, indptr, shape):
    if len(shape) != 2:
        raise MXNetError(f"CSRNDArray: shape: expected 2 dimensions, got {shape}")
    if data.ndim != 1 or indices.shape != data.shape:
        raise MXNetError(f"CSRNDArray: data and indices must be 1-D of one length, got "
                         f"{data.shape} and {indices.shape}")
    if indptr.shape != (shape[0] + 1,) or indptr[0] != 0 or indptr[-1] != data.size \
            or np.any(np.diff(indptr) < 0):
        raise MXNetError(f"CSRNDArray: indptr: expected {shape[0] + 1} non-decreasing row "
                         f"starts from 0 to {data.size}, got {indptr.tolist()}")
    if indices.size and (indices.min() < 0 or indices.max() >= shape[1]):
        raise MXNetError(f"CSRNDArray: indices: expected columns in [0, {shape[1]}), got "
                         f"{indices.min()}..{indices.max()}")


def _from_dense(dense, dtype):
    dense = np.asarray(dense.asnumpy() if isinstance(dense, NDArray) else dense, dtype)
    if dense.ndim != 2:
        raise MXNetError(f"csr_matrix: a dense source must be 2-D, got shape {dense.shape}")
    rows, cols = np.nonzero(dense)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=dense.shape[0]))])
    return dense[rows, cols], cols, indptr, dense.shape


def csr_matrix(arg1, shape=None, ctx=None, dtype=None):
    """A CSRNDArray from ``(data, indices, indptr)`` with ``shape``, a dense 2-D array
    (numpy or NDArray), a scipy CSR matrix, or another CSRNDArray."""
    if isinstance(arg1, CSRNDArray):
        return arg1.astype(dtype or arg1.dtype)
    if hasattr(arg1, "tocsr") and hasattr(arg1, "indptr"):          # scipy.sparse
        arg1, shape = (arg1.data, arg1.indices, arg1.indptr), shape or arg1.shape
    if isinstance(arg1, tuple) and len(arg1) == 3:
        if shape is None:
            raise MXNetError("csr_matrix: (data, indices, indptr) needs shape")
        data, indices, indptr = (a.asnumpy() if isinstance(a, NDArray) else np.asarray(a)
                                 for a in arg1)
        data = data.astype(dtype or (data.dtype if data.dtype != np.float64 else np.float32))
        return CSRNDArray(data, indices, indptr, shape, ctx)
    data, indices, indptr, dense_shape = _from_dense(arg1, dtype or np.float32)
    return CSRNDArray(data, indices, indptr, dense_shape, ctx)


def zeros(stype, shape, ctx=None, dtype=None):
    """An all-zero CSRNDArray (``stype`` 'csr') of ``shape``."""
    if stype != "csr":
        raise MXNetError(f"sparse.zeros: stype: only 'csr' is provided, got {stype!r}")
    return CSRNDArray(np.zeros(0, dtype or np.float32), np.zeros(0, np.int64),
                      np.zeros(shape[0] + 1, np.int64), shape, ctx)


def empty(stype, shape, ctx=None, dtype=None):
    """``zeros(stype, shape)``."""
    return zeros(stype, shape, ctx, dtype)


# MXNet's ``mx.nd.sparse`` operator functions (its ops registered with a ``_sparse_`` alias)
_OPS = """ElementWiseSum Embedding FullyConnected LinearRegressionOutput LogisticRegressionOutput
MAERegressionOutput abs adagrad_update adam_update add_n arccos arccosh arcsin arcsinh arctan
arctanh broadcast_add broadcast_div broadcast_minus broadcast_mul broadcast_plus broadcast_sub
cast_storage cbrt ceil clip concat cos cosh degrees dot elemwise_add elemwise_div elemwise_mul
elemwise_sub exp expm1 fix floor ftrl_update gamma gammaln log log10 log1p log2 make_loss mean
negative norm radians relu retain rint round rsqrt sgd_mom_update sgd_update sigmoid sign sin
sinh slice sqrt square stop_gradient sum tan tanh trunc where zeros_like""".split()


def __getattr__(name):
    if name in _OPS:
        from . import op
        fn = getattr(op, name, None)
        if fn is not None:
            return fn
    raise AttributeError(f"module 'mxnext.ndarray.sparse' has no attribute {name!r}")
