"""The ``NDArray`` class (``mx.nd.NDArray``): a typed, shaped view of a storage chunk guarded
by an engine var.

Several NDArrays may share one chunk (a ``storage.Handle`` carrying the var; views:
first-axis slices, reshapes); its memory goes back to the pool through the engine when
the last of them drops it. The class is its data, properties and copies (this file) plus
three mixins: ``Arithmetic`` (``_arith.py``: operators), ``OpMethods`` (``_methods.py``:
methods that are ops) and ``Indexing`` (``indexing.py``: ``[]``).
"""

from __future__ import annotations

import numpy as np

from .._runtime import tape as _tape, registry
from .._runtime import device as _device
from .._runtime import engine as _engine
from .._runtime.tape import state as _state
from .._runtime.base import MXNetError, as_dtype
from .._runtime.context import Context
from . import _backward, _imperative, serialization
from ._arith import Arithmetic
from ._copies import filled, push_copy
from ._imperative import from_host, invoke_name, new_array
from ._methods import OpMethods
from .indexing import Indexing, slice_is_contiguous

__all__ = ["NDArray", "waitall", "use_sparse_cast"]


class NDArray(Arithmetic, OpMethods, Indexing):
    """An n-dimensional array on a device, computed asynchronously by the engine."""

    __module__ = "mxnext.ndarray.ndarray"   # its public home, as MXNet's (pickles refer to it)
    __slots__ = ("_chunk", "_offset", "_shape", "_dtype", "_ctx", "_sig", "_v", "_ag",
                 "__weakref__")

    @staticmethod
    def _new(chunk, offset, shape, dtype, sig=None, view=None) -> "NDArray":
        """The one constructor: an array over ``chunk`` (``sig``, the plan-cache key, and
        ``view``, the device array, when the caller has them), without autograd history."""
        self = object.__new__(NDArray)
        self._chunk = chunk
        self._offset = offset
        self._shape = shape
        self._dtype = dtype
        ctx = self._ctx = chunk.ctx
        self._sig = sig or (shape, dtype, ctx.device_type, ctx.device_id)
        self._v = view
        self._ag = None
        return self

    def _alias(self) -> "NDArray":
        """Another NDArray for the same data (shares the device view), without history."""
        return NDArray._new(self._chunk, self._offset, self._shape, self._dtype, self._sig,
                            self._v)

    def _view(self, shape, offset=None) -> "NDArray":
        """Another NDArray over the same chunk (no autograd history)."""
        return NDArray._new(self._chunk, self._offset if offset is None else offset, shape,
                            self._dtype)

    def _data(self):
        """The device array (numpy/cupy view of the chunk); read it only inside engine functions
        or after waiting."""
        v = self._v
        if v is None:
            v = self._v = _device.get(self._ctx.device_type).view(
                self._chunk.raw, self._dtype, self._shape, self._offset)
        return v

    # -- properties -----------------------------------------------------------------
    @property
    def shape(self):
        return self._shape

    @property
    def dtype(self):
        """The numpy scalar type (``numpy.float32``), as MXNet returns it."""
        return self._dtype.type

    @property
    def context(self) -> Context:
        return self._ctx

    ctx = context

    @property
    def size(self) -> int:
        n = 1
        for s in self._shape:
            n *= s
        return n

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def stype(self) -> str:
        return "default"

    @property
    def handle(self):
        raise MXNetError("NDArray.handle: mxnext arrays have no C handle")

    @property
    def T(self) -> "NDArray":
        if len(self._shape) < 2:
            return self
        return invoke_name("transpose", [self], {})

    # -- synchronisation and host copies -------------------------------------------
    def wait_to_read(self) -> None:
        _engine.get().wait_for_var(self._chunk.var)

    def wait_to_write(self) -> None:
        _engine.get().wait_for_var(self._chunk.var, write=True)

    def asnumpy(self) -> np.ndarray:
        """A numpy copy of the data (waits for pending writes)."""
        _engine.get().wait_for_var(self._chunk.var)
        v = self._data()
        host = _device.get(self._ctx.device_type).to_host(v)
        return host.copy() if host is v else host

    def asscalar(self):
        if self.size != 1:
            raise ValueError("The current array is not a scalar")
        return self.asnumpy().reshape(())[()]

    def item(self):
        return self.asscalar().item()

    def __array__(self, dtype=None, copy=None):
        a = self.asnumpy()
        return a if dtype is None else a.astype(dtype, copy=False)

    def to_dlpack_for_read(self):
        """A DLPack capsule of this array to read (waits for pending writes)."""
        self.wait_to_read()
        return self._data().__dlpack__(max_version=(1, 0))

    def to_dlpack_for_write(self):
        """A DLPack capsule of this array to write (waits for pending reads and writes); a
        versioned capsule, so its consumer sees the memory as writable."""
        self.wait_to_write()
        return self._data().__dlpack__(max_version=(1, 0))

    @staticmethod
    def _basic_indexing_slice_is_contiguous(slc_key, shape):
        """MXNet's helper: whether the tuple of slices ``slc_key`` selects one contiguous
        block of an array of ``shape`` (``indexing.slice_is_contiguous``)."""
        return slice_is_contiguous(slc_key, shape)

    def __dlpack__(self, stream=None, **kwargs):
        self.wait_to_read()
        return self._data().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data().__dlpack_device__()

    # -- copies ---------------------------------------------------------------------
    def copyto(self, other):
        """Copy into ``other`` (an NDArray, returned) or onto a new array on a Context."""
        if isinstance(other, Context):
            other = new_array(self._shape, self._dtype, other)
        elif not isinstance(other, NDArray):
            raise TypeError(f"copyto: expected an NDArray or Context, got {type(other).__name__}")
        elif other.stype != "default":
            other._take(self)
            return other
        if other._chunk is self._chunk and other._offset == self._offset:
            return other
        push_copy(self, other)
        return other

    def copy(self) -> "NDArray":
        """A deep copy on the same context (recorded as ``_copy`` for autograd)."""
        if self._ag is not None and _state.recording:
            return invoke_name("_copy", [self], {})
        return self.copyto(self._ctx)

    def as_in_context(self, context) -> "NDArray":
        return self if context == self._ctx else self.copyto(context)

    def as_nd_ndarray(self) -> "NDArray":
        return self

    def astype(self, dtype, copy=True) -> "NDArray":
        dtype = as_dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        return invoke_name("Cast", [self], {"dtype": dtype.name})

    def tostype(self, stype) -> "NDArray":
        """A copy in storage ``stype`` ('default', 'csr' or 'row_sparse'), as MXNet's
        ``cast_storage``."""
        if stype == "default":
            return self.copy()
        return _to_sparse(self, stype)

    def detach(self) -> "NDArray":
        """The same data without autograd history."""
        return self._view(self._shape)

    # -- autograd ---------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None) -> None:
        """Make this array a variable with a zero gradient buffer, stored as ``stype``
        ('default', or 'row_sparse'/'csr': the gradient is then compressed to that type)."""
        grad = filled(self._shape, self._dtype, self._ctx, 0)
        if stype is not None and stype != "default":
            grad = _to_sparse(grad, stype)
        _tape.mark_variables([self], [grad], grad_req)

    @property
    def grad(self):
        e = self._ag                  # a variable's node keeps its gradient buffer
        return e.node.info.grad if e is not None and e.node.op is None else None

    @property
    def _fresh_grad(self) -> bool:
        """Whether a backward pass wrote this variable's gradient since the flag was last set
        to False (MXNet's; an optimizer resets it after using the gradient)."""
        e = self._ag
        return e is not None and e.node.op is None and e.node.info.fresh

    @_fresh_grad.setter
    def _fresh_grad(self, state) -> None:
        e = self._ag
        if e is None or e.node.op is not None:
            raise MXNetError("NDArray._fresh_grad: the array is not a marked variable (call "
                             "attach_grad() first)")
        e.node.info.fresh = bool(state)

    def backward(self, out_grad=None, retain_graph=False, train_mode=True) -> None:
        _backward.backward([self], None if out_grad is None else [out_grad], retain_graph,
                           train_mode)

    # -- Python protocol ----------------------------------------------------------------
    def __repr__(self):
        shape = "x".join(str(s) for s in self._shape)
        return f"\n{self.asnumpy()}\n<NDArray {shape} @{self._ctx}>"

    def __len__(self):
        if not self._shape:
            raise TypeError("len() of a 0-d NDArray")
        return self._shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __bool__(self):
        n = self.size
        if n == 0:
            return False
        if n == 1:
            return bool(self.asscalar())
        raise ValueError("The truth value of an NDArray with multiple elements is ambiguous.")

    def __getstate__(self):
        """MXNet's pickled state: ``{'handle': the array as an NDArray-format record}``."""
        ctx = self._ctx
        return {"handle": bytearray(serialization.dumps_record(
            self.asnumpy(), (ctx.device_typeid or 1, ctx.device_id)))}

    def __setstate__(self, state):
        """Become the array of a pickled state (on cpu(0), as ``mx.nd.load`` places them)."""
        host = serialization.loads_record(state["handle"], "pickled NDArray state")
        if host is None:
            raise MXNetError("NDArray.__setstate__: the state holds no array (MXNet's 'none' "
                             "array), which mxnext cannot represent")
        made = from_host(host, Context("cpu", 0))
        self._chunk, self._offset, self._shape, self._dtype = (made._chunk, 0, made._shape,
                                                               made._dtype)
        self._ctx, self._sig, self._v, self._ag = made._ctx, made._sig, made._v, None


_to_sparse = None     # dense -> sparse storage, installed by ``_sparse_array`` (use_sparse_cast)


def use_sparse_cast(fn) -> None:
    """``fn(dense NDArray, stype)``: the sparse array ``tostype`` makes."""
    global _to_sparse
    _to_sparse = fn


_imperative.use_array_class(NDArray)
registry.require("NDArray copies and casts", "transpose", "_copy", "Cast")


def waitall() -> None:
    """Wait for every pushed operation; raise the first stored error (MXNet's ``mx.nd.waitall``)."""
    _engine.get().wait_for_all()
