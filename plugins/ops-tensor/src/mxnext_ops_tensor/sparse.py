"""Sparse kernels (``FComputeSparse``, see ``opsdk.sparse``) of ops the other modules define,
with MXNet 1.9's output storage types (its ``FInferStorageType`` rules in
``src/operator/tensor``). Elementwise math reuses each op's dense kernel (``dense``) on
the stored values, so a sparse result equals the dense one exactly. Input combinations
MXNet has no sparse kernel for return None: the core's storage fallback runs them."""

from __future__ import annotations

import numpy as np
from opsdk import extend_op
from opsdk.sparse import CSRStorage, RowSparseStorage, stype_of, to_dense

# MXNet's MXNET_OPERATOR_REGISTER_UNARY_WITH_RSP_CSR ops (f(0) == 0), and _copy
_ZERO_PRESERVING = """abs arcsin arcsinh arctan arctanh cbrt ceil degrees expm1 fix floor log1p
negative radians relu rint round sign sin sinh sqrt square tan tanh trunc _copy""".split()
_LOGIC_SCALAR = ("_equal_scalar", "_not_equal_scalar", "_greater_scalar",
                 "_greater_equal_scalar", "_lesser_scalar", "_lesser_equal_scalar")


def _apply(dense, *arrays):
    """The op's dense kernel on stored values (on one zero row when none are stored, for
    the output dtype)."""
    if arrays[0].shape[0]:
        return dense(*arrays)[0]
    return dense(*(np.zeros((1, *a.shape[1:]), a.dtype) for a in arrays))[0][:0]


def _with_data(x, dense, *arrays):
    return x._replace(data=_apply(dense, *arrays))


def map_values(params, inputs, dense):
    """One sparse input whose zeros stay zeros: the op on its stored values."""
    (x,) = inputs
    if stype_of(x) == "default":
        return None
    return [_with_data(x, dense, x.data)]


def _plus_minus_scalar(params, inputs, dense):
    """MXNet: sparse output only for a zero scalar, else a dense result."""
    (x,) = inputs
    if stype_of(x) == "default":
        return None
    if params.scalar == 0:
        return [_with_data(x, dense, x.data)]
    return [dense(to_dense(x))[0]]


def _logic_scalar(params, inputs, dense):
    """MXNet's BinaryScalarLogicStorageType: sparse output when comparing 0 gives 0."""
    (x,) = inputs
    if stype_of(x) == "default" or dense(np.zeros(1, x.dtype))[0][0] != 0:
        return None
    return [_with_data(x, dense, x.data)]


def _clip(params, inputs, dense):
    (x,) = inputs
    if stype_of(x) == "default" or not params.a_min <= 0 <= params.a_max:
        return None
    return [_with_data(x, dense, x.data)]


def _quadratic(params, inputs, dense):
    """MXNet's contrib quadratic: a CSR input stays CSR when ``c`` is 0."""
    (x,) = inputs
    if stype_of(x) != "csr" or params.c != 0:
        return None
    return [_with_data(x, dense, x.data)]


def _csr_sum(params, inputs, dense):
    """``sum``/``mean`` of a CSR array along axis 0 or 1 (MXNet's SumCsrImpl): a dense
    result from the stored values."""
    (x,) = inputs
    if stype_of(x) != "csr" or params.axis is None or len(params.axis) != 1 or params.exclude:
        return None
    axis = params.axis[0] % 2
    if axis == 0:
        sums = np.bincount(x.indices, weights=x.data, minlength=x.shape[1])
    else:
        starts = np.concatenate([[0], np.cumsum(x.data, dtype=np.float64)])
        sums = starts[x.indptr[1:]] - starts[x.indptr[:-1]]
    return sums


def _reduce(scale_by_count):
    def kernel(params, inputs, dense):
        sums = _csr_sum(params, inputs, dense)
        if sums is None:
            return None
        x = inputs[0]
        if scale_by_count:
            sums = sums / x.shape[params.axis[0] % 2]
        out = sums.astype(x.dtype)
        return [out.reshape((1, -1) if params.axis[0] % 2 == 0 else (-1, 1))
                if params.keepdims else out]
    return kernel


def _norm(params, inputs, dense):
    """The norm of a whole sparse array is the norm of its stored values (MXNet's L2
    ``norm`` FComputeEx); a dense result."""
    (x,) = inputs
    if stype_of(x) == "default" or params.axis not in (None, ()) or params.keepdims:
        return None
    return [dense(x.data.reshape(-1) if x.data.size else np.zeros(1, x.dtype))[0]]


def _zeros_like(params, inputs, dense):
    (x,) = inputs
    if stype_of(x) == "csr":
        return [CSRStorage(x.data[:0], x.indices[:0], np.zeros_like(x.indptr), x.shape)]
    if stype_of(x) == "row_sparse":
        return [RowSparseStorage(x.data[:0], x.indices[:0], x.shape)]
    return None


# -- elementwise binary: keys are flat positions (csr) or rows (row_sparse) ------------------
def sparse_keys(x):
    """Where each stored value sits: flat positions (row * columns + column) for a CSR
    array, rows for a row_sparse one."""
    if x.stype == "csr":
        rows = np.repeat(np.arange(x.shape[0]), np.diff(x.indptr))
        return rows * x.shape[1] + x.indices
    return x.indices


def _values_at(x, keys):
    """``x``'s values at ``keys`` (zeros where it stores none)."""
    own = sparse_keys(x)
    order = np.argsort(own, kind="stable")
    own = own[order]
    out = np.zeros((len(keys), *x.data.shape[1:]), x.data.dtype)
    pos = np.searchsorted(own, keys)
    hit = pos < len(own)
    hit[hit] = own[pos[hit]] == keys[hit]
    out[hit] = x.data[order[pos[hit]]]
    return out


def _from_keys(like, keys, data):
    if like.stype == "csr":
        rows, cols = np.divmod(keys, like.shape[1])
        indptr = np.zeros(like.shape[0] + 1, np.int64)
        np.cumsum(np.bincount(rows, minlength=like.shape[0]), out=indptr[1:])
        return CSRStorage(data, cols.astype(np.int64), indptr, like.shape)
    return RowSparseStorage(data, keys.astype(np.int64), like.shape)


def _same_sparse(a, b):
    return stype_of(a) == stype_of(b) != "default" and tuple(a.shape) == tuple(b.shape)


def _union(params, inputs, dense):
    """rsp op rsp -> rsp and csr op csr -> csr over the union of stored positions, for ops
    giving 0 on two zeros (add, sub, maximum, minimum, hypot)."""
    a, b = inputs
    if not _same_sparse(a, b):
        return None
    keys = np.union1d(sparse_keys(a), sparse_keys(b))
    return [_from_keys(a, keys, _apply(dense, _values_at(a, keys), _values_at(b, keys)))]


def _mul(params, inputs, dense):
    """Sparse * sparse (same type): the intersection; sparse * dense keeps the sparse type."""
    a, b = inputs
    if _same_sparse(a, b):
        keys = np.intersect1d(sparse_keys(a), sparse_keys(b))
        return [_from_keys(a, keys, _apply(dense, _values_at(a, keys), _values_at(b, keys)))]
    sparse, other = (a, b) if stype_of(b) == "default" else (b, a)
    if stype_of(sparse) == "default" or stype_of(other) != "default":
        return None
    if sparse.stype == "csr":
        rows = np.repeat(np.arange(sparse.shape[0]), np.diff(sparse.indptr))
        picked = other[rows, sparse.indices]
    else:
        picked = other[sparse.indices]
    pair = (sparse.data, picked) if sparse is a else (picked, sparse.data)
    return [_with_data(sparse, dense, *pair)]


def _add_n(params, inputs, dense):
    """All row_sparse (or all csr) of one shape: the sum over the union of positions."""
    first = inputs[0]
    if not all(_same_sparse(first, x) for x in inputs):
        return None
    keys = sparse_keys(first)
    for x in inputs[1:]:
        keys = np.union1d(keys, sparse_keys(x))
    return [_from_keys(first, keys, _apply(dense, *(_values_at(x, keys) for x in inputs)))]


def _retain(params, inputs, dense):
    """The rows of a row_sparse array listed in a dense index array."""
    x, idx = inputs
    if stype_of(x) != "row_sparse" or stype_of(idx) != "default":
        return None
    keep = np.isin(x.indices, idx.astype(np.int64).reshape(-1))
    return [RowSparseStorage(x.data[keep], x.indices[keep], x.shape)]


for _name in _ZERO_PRESERVING + ["_mul_scalar", "_div_scalar"]:
    extend_op(_name).set_attr("FComputeSparse", map_values)
for _name in _LOGIC_SCALAR:
    extend_op(_name).set_attr("FComputeSparse", _logic_scalar)
for _name, _kernel in (("_plus_scalar", _plus_minus_scalar), ("_minus_scalar", _plus_minus_scalar),
                       ("clip", _clip), ("zeros_like", _zeros_like), ("elemwise_add", _union),
                       ("elemwise_sub", _union), ("_maximum", _union), ("_minimum", _union),
                       ("_hypot", _union), ("elemwise_mul", _mul), ("add_n", _add_n),
                       ("_sparse_retain", _retain), ("_contrib_quadratic", _quadratic),
                       ("sum", _reduce(False)), ("mean", _reduce(True)), ("norm", _norm)):
    extend_op(_name).set_attr("FComputeSparse", _kernel)
