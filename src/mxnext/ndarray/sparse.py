"""``mx.nd.sparse``: MXNet 1.9's sparse NDArrays (``CSRNDArray``, ``RowSparseNDArray``), their
creation functions (``csr_matrix``, ``row_sparse_array``, ``zeros``, ``empty``, ``array``)
and the op functions MXNet puts here. The op functions are the registered ops: given sparse
arrays they run a sparse kernel where the op has one, else the dense kernel on densified
inputs (MXNet's storage fallback); see ``_sparse_dispatch``."""

from __future__ import annotations

import operator

import numpy as np

from .._runtime.base import integer_types
from .._runtime.context import as_context, current_context
from ._array import NDArray
from ._imperative import invoke_name
from ._sparse_array import BaseSparseNDArray, CSRNDArray, RowSparseNDArray, make_sparse
from .sparse_storage import CSRStorage, RowSparseStorage, from_dense

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "csr_matrix",
           "row_sparse_array", "zeros", "empty", "array", "cast_storage",
           "add", "subtract", "multiply", "divide"]

_STYPES = ("csr", "row_sparse")


def _ctx(ctx):
    return as_context(ctx) or current_context()


def _default_dtype(src, dtype):
    """MXNet's: ``dtype``, else the source's if it has one (NDArray, numpy, scipy), else
    float32."""
    if dtype is not None:
        return np.dtype(dtype)
    if isinstance(src, (NDArray, np.ndarray)) or _is_scipy_csr(src):
        return np.dtype(src.dtype)
    return np.dtype(np.float32)


def _host(a, dtype):
    return (a.asnumpy() if isinstance(a, NDArray) else np.asarray(a)).astype(dtype, copy=False)


def _check_shape(have, want):
    if have and want and tuple(have) != tuple(want):
        raise ValueError(f"Shape mismatch detected. {tuple(have)} v.s. {tuple(want)}")


def _is_scipy_csr(x) -> bool:
    return type(x).__module__.startswith("scipy.sparse") and getattr(x, "format", "") == "csr"


def zeros(stype, shape, ctx=None, dtype=None, **kwargs) -> BaseSparseNDArray:
    """An all-zero array of storage ``stype`` ('csr' or 'row_sparse'), float32 by default."""
    if stype not in _STYPES:
        raise ValueError(f"unknown storage type {stype!r}; expected 'csr' or 'row_sparse'")
    shape = (shape,) if isinstance(shape, integer_types) else tuple(int(d) for d in shape)
    dtype = np.dtype(dtype or np.float32)
    if stype == "csr":
        if len(shape) != 2:
            raise ValueError(f"csr storage needs a 2-D shape, got {shape}")
        storage = CSRStorage(np.zeros(0, dtype), np.zeros(0, np.int64),
                             np.zeros(shape[0] + 1, np.int64), shape)
    else:
        storage = RowSparseStorage(np.zeros((0, *shape[1:]), dtype), np.zeros(0, np.int64),
                                   shape)
    return make_sparse(storage, _ctx(ctx))


def empty(stype, shape, ctx=None, dtype=None) -> BaseSparseNDArray:
    """``zeros``: a sparse array with nothing stored."""
    return zeros(stype, shape, ctx, dtype)


def _from_dense_source(src, stype, shape, ctx, dtype):
    dtype = _default_dtype(src, dtype)
    dense = _host(src, dtype)
    _check_shape(dense.shape, shape)
    if stype == "csr" and dense.ndim != 2:
        raise ValueError(f"csr_matrix: a dense source must be 2-D, got shape {dense.shape}")
    return make_sparse(from_dense(dense, stype), _ctx(ctx))


def csr_matrix(arg1, shape=None, ctx=None, dtype=None) -> CSRNDArray:
    """A CSRNDArray from ``(data, indices, indptr)``, ``(data, (row, col))``, a shape
    ``(M, N)``, a scipy CSR matrix, a CSRNDArray, or a dense array (NDArray, numpy, list)."""
    if isinstance(arg1, tuple):
        if len(arg1) == 3:
            return _csr_from_parts(*arg1, shape=shape, ctx=ctx, dtype=dtype)
        if len(arg1) != 2:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        if isinstance(arg1[1], tuple) and len(arg1[1]) == 2:
            return _csr_from_coo(arg1[0], *arg1[1], shape, ctx, dtype)
        _check_shape(arg1, shape)
        return empty("csr", arg1, ctx, dtype)
    if isinstance(arg1, RowSparseNDArray):
        raise ValueError("Unexpected input type: RowSparseNDArray")
    if isinstance(arg1, CSRNDArray) or _is_scipy_csr(arg1):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx, dtype)
    return _from_dense_source(arg1, "csr", shape, ctx, dtype)


def _csr_from_parts(data, indices, indptr, shape=None, ctx=None, dtype=None):
    """As given: the components are not checked (``check_format`` does that)."""
    dtype = _default_dtype(data, dtype)
    data, indices, indptr = (_host(data, dtype), _host(indices, np.int64),
                             _host(indptr, np.int64))
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError("invalid shape: cannot infer the number of columns without indices")
        shape = (len(indptr) - 1, int(indices.max()) + 1)
    if data.ndim != 1 or indptr.ndim != 1 or indices.ndim != 1 or indptr.shape[0] == 0 \
            or len(shape) != 2:
        raise ValueError(f"invalid shape: csr needs 1-D data, indices and indptr and a 2-D "
                         f"shape, got {data.shape}, {indices.shape}, {indptr.shape}, {shape}")
    return make_sparse(CSRStorage(data, indices, indptr, tuple(int(d) for d in shape)),
                       _ctx(ctx))


def _csr_from_coo(data, row, col, shape, ctx, dtype):
    dtype = _default_dtype(data, dtype)
    data, row, col = _host(data, dtype), _host(row, np.int64), _host(col, np.int64)
    if shape is None:
        shape = (int(row.max()) + 1 if row.size else 0, int(col.max()) + 1 if col.size else 0)
    dense = np.zeros(shape, dtype)
    np.add.at(dense, (row, col), data)        # duplicates add up, as scipy's tocsr
    return make_sparse(_canonical_csr(dense, row, col), _ctx(ctx))


def _canonical_csr(dense, row, col):
    """The CSR of ``dense`` keeping every listed (row, col) position, sorted, duplicates
    merged (an explicit zero stays stored, as scipy keeps it)."""
    keys = np.unique(row * dense.shape[1] + col)
    rows, cols = keys // dense.shape[1], keys % dense.shape[1]
    indptr = np.zeros(dense.shape[0] + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=dense.shape[0]), out=indptr[1:])
    return CSRStorage(dense[rows, cols], cols.astype(np.int64), indptr, dense.shape)


def row_sparse_array(arg1, shape=None, ctx=None, dtype=None) -> RowSparseNDArray:
    """A RowSparseNDArray from ``(data, indices)``, a shape, a RowSparseNDArray or a dense
    array (NDArray, numpy, list)."""
    if isinstance(arg1, tuple):
        if len(arg1) < 2:
            raise ValueError(f"Unexpected length of input tuple: {len(arg1)}")
        if len(arg1) > 2 or all(isinstance(d, integer_types) for d in arg1):
            _check_shape(arg1, shape)
            return empty("row_sparse", arg1, ctx, dtype)
        return _rsp_from_parts(*arg1, shape=shape, ctx=ctx, dtype=dtype)
    if isinstance(arg1, CSRNDArray):
        raise ValueError("Unexpected input type: CSRNDArray")
    if isinstance(arg1, RowSparseNDArray):
        _check_shape(arg1.shape, shape)
        return array(arg1, ctx, dtype)
    return _from_dense_source(arg1, "row_sparse", shape, ctx, dtype)


def _rsp_from_parts(data, indices, shape=None, ctx=None, dtype=None):
    dtype = _default_dtype(data, dtype)
    data, indices = _host(data, dtype), _host(indices, np.int64)
    if shape is None:
        if indices.shape[0] == 0:
            raise ValueError("invalid shape: cannot infer the number of rows without indices")
        shape = (int(indices[-1]) + 1, *data.shape[1:])
    shape = tuple(int(d) for d in shape)
    if data.ndim != len(shape) or indices.ndim != 1 or np.prod(shape[1:]) == 0:
        raise ValueError(f"invalid shape: row_sparse data {data.shape} and indices "
                         f"{indices.shape} do not fit shape {shape}")
    return make_sparse(RowSparseStorage(data, indices, shape), _ctx(ctx))


def array(source_array, ctx=None, dtype=None) -> BaseSparseNDArray:
    """A sparse array copied from a sparse NDArray or a scipy CSR matrix (whose indices are
    sorted and duplicates summed)."""
    ctx = _ctx(ctx)
    if isinstance(source_array, BaseSparseNDArray):
        dtype = np.dtype(dtype or source_array.dtype)
        host = source_array._host()
        return make_sparse(type(host)(host.data.astype(dtype), *host[1:]), ctx)
    if _is_scipy_csr(source_array):
        csr = source_array.sorted_indices()
        csr.sum_duplicates()
        dtype = np.dtype(dtype or csr.dtype)
        return make_sparse(CSRStorage(csr.data.astype(dtype), csr.indices.astype(np.int64),
                                      csr.indptr.astype(np.int64), csr.shape), ctx)
    if isinstance(source_array, (NDArray, np.ndarray)):
        raise ValueError("Please use mx.nd.array to create an NDArray with source_array of "
                         f"type {type(source_array).__name__}")
    raise ValueError(f"Unexpected source_array type: {type(source_array).__name__}")


def cast_storage(data, stype, out=None, **kwargs):
    """``data`` in storage ``stype`` ('default', 'csr', 'row_sparse'); a copy."""
    if kwargs:
        invoke_name("cast_storage", [data], {"stype": stype, **kwargs})   # MXNet's errors
    if stype not in ("default", *_STYPES):
        raise ValueError(f"cast_storage: stype: expected 'default', 'csr' or 'row_sparse', got "
                         f"{stype!r}")
    result = data.tostype(stype)
    return result if out is None else result.copyto(out)


def _arith(name, fallback):
    def fn(lhs, rhs):
        if isinstance(lhs, NDArray) and isinstance(rhs, NDArray) and lhs.shape == rhs.shape:
            return invoke_name(name, [lhs, rhs], {})
        return fallback(lhs, rhs)
    fn.__name__ = fn.__qualname__ = name.replace("elemwise_", "")
    fn.__doc__ = f"``{name}`` for arrays of one shape, else the broadcasting op (MXNet's)."
    return fn


add = _arith("elemwise_add", operator.add)
subtract = _arith("elemwise_sub", operator.sub)
multiply = _arith("elemwise_mul", operator.mul)
divide = _arith("elemwise_div", operator.truediv)


def __getattr__(name):
    """The registered op ``name`` (or ``_sparse_<name>``, MXNet's sparse-only ops)."""
    from ._imperative import op_function
    if not name.startswith("__"):
        for candidate in (name, f"_sparse_{name}"):
            try:
                fn = op_function(candidate)
            except KeyError:
                continue
            globals()[name] = fn
            return fn
    raise AttributeError(f"module 'mxnext.ndarray.sparse' has no attribute {name!r}")
