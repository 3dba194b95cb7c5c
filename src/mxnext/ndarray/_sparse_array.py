"""``CSRNDArray`` and ``RowSparseNDArray``: NDArrays in compressed storage.

A sparse array holds its components as dense NDArrays on its context (``data``,
``indices`` and for CSR ``indptr``; indices int64), never a dense copy of itself. It has no
plan signature (``_sig``) and no chunk: an op given one misses the dense plan cache and
takes the sparse dispatch (``_sparse_dispatch``), so dense calls pay nothing for it.
An op writing into a sparse ``out=`` from a dense kernel leaves its dense result
``_pending``: it is compressed when the array is next read.
"""

from __future__ import annotations

import numpy as np

from .._runtime import tape as _tape
from .._runtime.base import MXNetError, NotSupportedForSparseNDArray
from .._runtime.context import Context
from . import serialization
from ._array import NDArray, use_sparse_cast
from ._imperative import from_host, invoke_name
from .sparse_storage import (CSRStorage, RowSparseStorage, check_csr, check_rsp, from_dense)

__all__ = ["BaseSparseNDArray", "CSRNDArray", "RowSparseNDArray", "make_sparse"]


class BaseSparseNDArray(NDArray):
    """What CSRNDArray and RowSparseNDArray share."""

    __module__ = "mxnext.ndarray.sparse"
    __slots__ = ("_aux", "_pending")
    _storage = None        # the host storage class

    @classmethod
    def _make(cls, storage, ctx) -> "BaseSparseNDArray":
        self = object.__new__(cls)
        self._ctx, self._ag, self._pending = ctx, None, None
        self._put(storage)
        return self

    def _put(self, storage) -> None:
        """Hold ``storage`` (host components, uploaded to the context)."""
        self._shape = tuple(int(d) for d in storage.shape)
        self._dtype = np.dtype(storage.data.dtype)
        self._aux = tuple(from_host(np.ascontiguousarray(c), self._ctx) for c in storage[:-1])
        self._pending = None

    def _parts(self):
        """The component NDArrays, compressing a pending dense result first."""
        if self._pending is not None:
            dense = self._pending.asnumpy().astype(self._dtype, copy=False)
            self._put(from_dense(dense, self.stype))
        return self._aux

    def _alias(self) -> "BaseSparseNDArray":
        """Another array over the same components, without history (what autograd saves
        of a recorded input: a later ``_put`` into this array leaves it as it was)."""
        other = object.__new__(type(self))
        other._ctx, other._ag, other._pending = self._ctx, None, None
        other._shape, other._dtype, other._aux = self._shape, self._dtype, self._parts()
        return other

    def _host(self):
        """The host storage (numpy components; waits for them)."""
        return self._storage(*(p.asnumpy() for p in self._parts()), self._shape)

    def _take(self, src) -> None:
        """Become ``src``'s values (any storage type; shape must match), keeping dtype."""
        if tuple(src.shape) != self._shape:
            raise MXNetError(f"{type(self).__name__}: cannot assign an array of shape "
                             f"{tuple(src.shape)} to one of shape {self._shape}")
        if isinstance(src, BaseSparseNDArray) and src.stype == self.stype:
            host = src._host()
            self._put(self._storage(host.data.astype(self._dtype), *host[1:]))
        elif isinstance(src, BaseSparseNDArray):
            self._put(from_dense(src.asnumpy().astype(self._dtype), self.stype))
        else:
            self._pending = src if src.dtype == self._dtype else src.astype(self._dtype)

    # -- what NDArray has and a sparse array answers differently ----------------------
    stype = None
    _num_aux = property(lambda self: len(self._storage._fields) - 2)
    data = property(lambda self: self._parts()[0].copy(),
                    doc="A copy of the stored values (an NDArray).")

    @property
    def size(self):
        raise NotImplementedError(f"size is ambiguous for a {type(self).__name__}")

    def wait_to_read(self) -> None:
        for p in self._parts():
            p.wait_to_read()

    wait_to_write = wait_to_read

    def asnumpy(self) -> np.ndarray:
        return self._host().todense()

    def todense(self) -> NDArray:
        return self.tostype("default")

    def tostype(self, stype):
        if stype == "default":
            return from_host(self.asnumpy(), self._ctx)
        if stype == self.stype:
            return self.copy()
        raise ValueError(f"cast_storage from {self.stype} to {stype} is not supported")

    def copy(self):
        return self.copyto(self._ctx)

    def copyto(self, other):
        """Copy into ``other`` (an NDArray of any storage type, returned) or onto a new
        array of this storage type on a Context."""
        if isinstance(other, Context):
            return type(self)._make(self._host(), other)
        if not isinstance(other, NDArray):
            raise TypeError(f"copyto does not support type {type(other).__name__}")
        if other is self:
            return other
        if isinstance(other, BaseSparseNDArray):
            if other.stype != self.stype and self.stype == "csr":
                raise TypeError(f"copyto does not support destination NDArray stype "
                                f"{other.stype}")
            other._take(self)
            return other
        return from_host(self.asnumpy().astype(other._dtype), other._ctx).copyto(other)

    def as_in_context(self, context):
        return self if context == self._ctx else self.copyto(context)

    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        host = self._host()
        return type(self)._make(self._storage(host.data.astype(dtype), *host[1:]), self._ctx)

    def check_format(self, full_check=True) -> None:
        """Raise MXNetError when the components do not form a valid array of this type."""
        (check_csr if self.stype == "csr" else check_rsp)(self._host(), full_check)

    def __repr__(self):
        dims = "x".join(str(d) for d in self._shape)
        return f"\n<{type(self).__name__} {dims} @{self._ctx}>"

    def __reduce__(self):
        return type(self)._unpickle, (self.__getstate__(),)

    def __getstate__(self):
        ctx = self._ctx
        return {"handle": bytearray(serialization.dumps_record(
            self._host(), (ctx.device_typeid or 1, ctx.device_id)))}

    @classmethod
    def _unpickle(cls, state):
        host = serialization.loads_record(state["handle"], "pickled sparse NDArray state",
                                          dense=False)
        return cls._make(host, Context("cpu", 0))

    # -- arithmetic: MXNet's sparse add/subtract/multiply/divide -------------------------
    def _elemwise(self, other, name, fallback):
        if isinstance(other, NDArray) and tuple(other.shape) == self._shape:
            return invoke_name(name, [self, other], {})
        return fallback(self, other)

    def __add__(self, other):
        return self._elemwise(other, "elemwise_add", NDArray.__add__)

    def __sub__(self, other):
        return self._elemwise(other, "elemwise_sub", NDArray.__sub__)

    def __mul__(self, other):
        return self._elemwise(other, "elemwise_mul", NDArray.__mul__)

    def __truediv__(self, other):
        return self._elemwise(other, "elemwise_div", NDArray.__truediv__)

    def __iadd__(self, other):
        return self._take_result(self + other)

    def __isub__(self, other):
        return self._take_result(self - other)

    def __imul__(self, other):
        return self._take_result(self * other)

    def __itruediv__(self, other):
        return self._take_result(self / other)

    def _take_result(self, result):
        self._take(result)
        return self

    # -- what MXNet refuses on a sparse array -----------------------------------------------
    def _refuse(self, what):
        raise NotSupportedForSparseNDArray(what, None, self)

    def reshape(self, *shape, **kwargs):
        self._refuse("reshape")

    def _slice(self, start, stop):
        self._refuse("_slice")

    def _at(self, idx):
        self._refuse("_at")

    def _view(self, shape, offset=None):
        self._refuse("views")

    def _data(self):
        self._refuse("_data (a dense device view)")

    def detach(self):
        return self

    def attach_grad(self, grad_req="write", stype=None):
        """A variable whose gradient buffer is stored as ``stype`` (default: this array's
        storage type), as MXNet's ``zeros_like`` then ``tostype``."""
        stype = stype or self.stype
        zeros = np.zeros(self._shape, self._dtype)
        grad = from_host(zeros, self._ctx) if stype == "default" else \
            make_sparse(from_dense(zeros, stype), self._ctx)
        _tape.mark_variables([self], [grad], grad_req)

    def _check_key(self, key, what):
        if not isinstance(key, slice) or (key.start, key.stop, key.step) != (None,) * 3:
            raise ValueError(f"{type(self).__name__} only supports [:] for {what}, got {key!r}")

    def __setitem__(self, key, value):
        self._check_key(key, "assignment")
        if isinstance(value, NDArray):
            if value is not self:
                self._take(value)
        elif isinstance(value, (int, float, np.number)) and not isinstance(value, bool):
            if self.stype == "csr":
                raise ValueError("Assigning numeric types to CSRNDArray is not implemented yet.")
            self._take(from_host(np.full(self._shape, value, self._dtype), self._ctx))
        elif isinstance(value, (np.ndarray, np.generic)):
            self._take(from_host(np.asarray(value, self._dtype), self._ctx))
        else:
            raise TypeError(f"type {type(value)} not supported")


class CSRNDArray(BaseSparseNDArray):
    """A 2-D array in compressed sparse row format: row ``i``'s values are
    ``data[indptr[i]:indptr[i+1]]`` at columns ``indices[indptr[i]:indptr[i+1]]``."""

    __slots__ = ()
    stype = "csr"
    _storage = CSRStorage
    indices = property(lambda self: self._parts()[1].copy(), doc="A copy of the column indices.")
    indptr = property(lambda self: self._parts()[2].copy(), doc="A copy of the row pointers.")

    def __getitem__(self, key):
        """Rows: ``a[i]`` (one row, kept 2-D) or ``a[start:stop]``, as ``slice``."""
        if isinstance(key, (int, np.integer)):
            begin = int(key) + self._shape[0] if key < 0 else int(key)
            return invoke_name("slice", [self], {"begin": (begin,), "end": (begin + 1,)})
        if isinstance(key, slice):
            if key.step is not None:
                raise ValueError("CSRNDArray only supports continuous slicing on axis 0")
            if key.start is None and key.stop is None:
                return self
            start, stop, _ = key.indices(self._shape[0])
            return invoke_name("slice", [self], {"begin": (start,), "end": (stop,)})
        if isinstance(key, tuple):
            raise ValueError("Multi-dimension indexing is not supported")
        raise ValueError(f"Undefined behaviour for {key}")

    def asscipy(self):
        """The ``scipy.sparse.csr_matrix`` of the same values (needs scipy)."""
        import scipy.sparse
        host = self._host()
        return scipy.sparse.csr_matrix((host.data, host.indices, host.indptr),
                                       shape=self._shape, dtype=self._dtype)


class RowSparseNDArray(BaseSparseNDArray):
    """An array whose listed rows are stored: ``dense[indices[k]] = data[k]``; other rows
    are zero."""

    __slots__ = ()
    stype = "row_sparse"
    _storage = RowSparseStorage
    indices = property(lambda self: self._parts()[1].copy(), doc="A copy of the row indices.")

    def __getitem__(self, key):
        self._check_key(key, "__getitem__")
        return self


_CLASSES = {"csr": CSRNDArray, "row_sparse": RowSparseNDArray}


def make_sparse(storage, ctx) -> BaseSparseNDArray:
    """The sparse NDArray of host ``storage`` (CSRStorage or RowSparseStorage) on ``ctx``."""
    return _CLASSES[storage.stype]._make(storage, ctx)


def _dense_to_sparse(arr, stype) -> BaseSparseNDArray:
    if stype == "csr" and arr.ndim != 2:
        raise ValueError(f"cast_storage: csr storage needs a 2-D array, got shape {arr.shape}")
    return make_sparse(from_dense(arr.asnumpy(), stype), arr.context)


use_sparse_cast(_dense_to_sparse)
