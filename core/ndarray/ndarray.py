"""The ``NDArray`` class: a typed, shaped view of a storage chunk guarded by an engine var.

Several NDArrays may share one ``_Chunk`` (views: first-axis slices, reshapes);
the chunk's memory goes back to the pool through the engine when the last
of them dies. Operators, indexing and the op methods live in ``_ops``,
``indexing`` and ``_methods``; this file holds data, properties and copies.
"""

from __future__ import annotations

import atexit

import numpy as np

from .. import device as _device
from .. import engine as _engine
from .. import storage as _storage
from ..base import MXNetError
from ..context import Context, current_context
from ..engine import FnProperty, Var

__all__ = ["NDArray", "empty", "waitall"]

_DEVICES: dict = {}
_exiting = []               # non-empty once the interpreter exits: memory then goes with the process
atexit.register(_exiting.append, True)   # runs before the engine's own exit hook (LIFO)
_CHEAP_BYTES = 1 << 16     # ops writing at most this much may run inline on the pushing thread


def _dev(ctx):
    d = _DEVICES.get(ctx.device_type)
    if d is None:
        d = _DEVICES[ctx.device_type] = _device.get(ctx.device_type)
    return d


class _Chunk:
    """A block of memory and its engine var; a pooled block goes back to its pool through the
    engine when the chunk is dropped (after every function pushed on the var)."""

    __slots__ = ("raw", "var", "ctx", "pool", "cap", "__weakref__")

    def __init__(self, raw, var, ctx, pool=None, cap=0):
        self.raw = raw
        self.var = var
        self.ctx = ctx
        self.pool = pool          # storage pool, or None for borrowed memory (from_numpy)
        self.cap = cap

    def __del__(self):
        pool = self.pool
        if pool is not None and not _exiting:
            raw, cap = self.raw, self.cap
            _engine.get().push_delete(lambda rctx: pool.give(raw, cap), self.ctx, self.var)


def _as_ctx(c):
    """A Context from a Context, ``"cpu(1)"``, ``"cpu"`` or None/"" (None)."""
    if c is None or c == "":
        return None
    if isinstance(c, Context):
        return c
    text = str(c).strip()
    if "(" in text:
        dev, _, rest = text.partition("(")
        return Context(dev, int(rest.rstrip(")") or 0))
    return Context(text, 0)


def _alloc(shape, dtype, ctx) -> "NDArray":
    n = dtype.itemsize
    for s in shape:
        n *= s
    pool = _storage.pool(ctx)
    cap = pool.size_class(n)
    return NDArray._wrap(_Chunk(pool.take(cap), Var(), ctx, pool, cap), shape, dtype, 0)


def empty(shape, ctx=None, dtype=None) -> "NDArray":
    """An uninitialised array (MXNet's ``mx.nd.empty``)."""
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    return _alloc(shape, np.dtype(dtype or np.float32), _as_ctx(ctx) or current_context())


def waitall() -> None:
    """Wait for every pushed operation; raise the first stored error (MXNet's ``mx.nd.waitall``)."""
    _engine.get().wait_for_all()


def _push(fn, ctx, const, mutate, name, nbytes, prop=FnProperty.NORMAL):
    _engine.get().push_sync(fn, ctx, const, mutate, prop, name=name, cheap=nbytes <= _CHEAP_BYTES)


def _push_copy(src: "NDArray", dst: "NDArray") -> None:
    """Copy ``src`` into ``dst`` (same shape; dtype cast; any two contexts) through the engine."""
    if src._shape != dst._shape:
        raise MXNetError(f"copyto: shape mismatch: source {src._shape} vs target {dst._shape}")
    s, d = src._data(), dst._data()
    sctx, dctx = src._ctx, dst._ctx
    if sctx.device_type == dctx.device_type:
        def fn(rctx):
            d[...] = s
    else:
        sdev, ddev = _dev(sctx), _dev(dctx)

        def fn(rctx):
            d[...] = ddev.from_numpy(sdev.to_numpy(s), dctx.device_id)
    gpu = dctx if dctx.device_type != "cpu" else sctx
    prop = FnProperty.NORMAL if gpu.device_type == "cpu" else (
        FnProperty.COPY_TO_GPU if gpu is dctx else FnProperty.COPY_FROM_GPU)
    _push(fn, gpu, (src._chunk.var,), (dst._chunk.var,), "_copyto", d.nbytes, prop)


def _filled(shape, dtype, ctx, value) -> "NDArray":
    out = _alloc(shape, dtype, ctx)
    _push_fill(out, value)
    return out


def _filled_like(a: "NDArray", value) -> "NDArray":
    return _filled(a._shape, a._dtype, a._ctx, value)


def _push_add(src: "NDArray", dst: "NDArray") -> None:
    """``dst += src`` through the engine (gradient accumulation, ``grad_req='add'``)."""
    s, d = src._data(), dst._data()

    def fn(rctx):
        d[...] += s
    _push(fn, dst._ctx, (src._chunk.var,), (dst._chunk.var,), "_grad_add", d.nbytes)


def _push_fill(dst: "NDArray", value) -> None:
    d = dst._data()

    def fn(rctx):
        d[...] = value
    _push(fn, dst._ctx, (), (dst._chunk.var,), "_fill", d.nbytes)


class NDArray:
    """An n-dimensional array on a device, computed asynchronously by the engine."""

    __slots__ = ("_chunk", "_offset", "_shape", "_dtype", "_ctx", "_sig", "_v", "_ag",
                 "__weakref__")
    __array_priority__ = 1000.0      # numpy defers reflected operators to us

    @classmethod
    def _wrap(cls, chunk, shape, dtype, offset):
        self = object.__new__(cls)
        self._chunk = chunk
        self._offset = offset
        self._shape = shape
        self._dtype = dtype
        self._ctx = chunk.ctx
        self._sig = (shape, dtype, chunk.ctx.device_type, chunk.ctx.device_id)  # plan-cache key
        self._v = None
        self._ag = None
        return self

    def _alias(self) -> "NDArray":
        """Another NDArray for the same data (shares the device view), without history."""
        a = object.__new__(NDArray)
        a._chunk, a._offset, a._shape, a._dtype = self._chunk, self._offset, self._shape, self._dtype
        a._ctx, a._sig, a._v, a._ag = self._ctx, self._sig, self._v, None
        return a

    def _view(self, shape, offset=None) -> "NDArray":
        """Another NDArray over the same chunk (no autograd history)."""
        return NDArray._wrap(self._chunk, shape, self._dtype,
                             self._offset if offset is None else offset)

    def _data(self):
        """The device array (numpy/cupy view of the chunk); read it only inside engine functions
        or after waiting."""
        v = self._v
        if v is None:
            v = self._v = _dev(self._ctx).view(self._chunk.raw, self._dtype, self._shape,
                                               self._offset)
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
        from ._imperative import invoke_name
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
        host = _dev(self._ctx).to_numpy(v)
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

    def __dlpack__(self, stream=None, **kwargs):
        self.wait_to_read()
        return self._data().__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data().__dlpack_device__()

    # -- copies ---------------------------------------------------------------------
    def copyto(self, other):
        """Copy into ``other`` (an NDArray, returned) or onto a new array on a Context."""
        if isinstance(other, Context):
            other = _alloc(self._shape, self._dtype, other)
        elif not isinstance(other, NDArray):
            raise TypeError(f"copyto: expected an NDArray or Context, got {type(other).__name__}")
        if other._chunk is self._chunk and other._offset == self._offset:
            return other
        _push_copy(self, other)
        return other

    def copy(self) -> "NDArray":
        """A deep copy on the same context (recorded as ``_copy`` for autograd)."""
        if self._ag is not None:
            from ..autograd import _state
            if _state.recording:
                from ._imperative import invoke_name
                return invoke_name("_copy", [self], {})
        return self.copyto(self._ctx)

    def as_in_context(self, context) -> "NDArray":
        return self if context == self._ctx else self.copyto(context)

    def as_nd_ndarray(self) -> "NDArray":
        return self

    def astype(self, dtype, copy=True) -> "NDArray":
        dtype = np.dtype(dtype)
        if not copy and dtype == self._dtype:
            return self
        from ._imperative import invoke_name
        return invoke_name("Cast", [self], {"dtype": dtype.name})

    def tostype(self, stype) -> "NDArray":
        if stype != "default":
            raise MXNetError(f"tostype: storage type {stype!r} is not supported; only 'default'")
        return self

    def detach(self) -> "NDArray":
        """The same data without autograd history."""
        return self._view(self._shape)

    # -- autograd ---------------------------------------------------------------------
    def attach_grad(self, grad_req="write", stype=None) -> None:
        from .. import autograd
        autograd.mark_variables([self], [_filled_like(self, 0)], grad_req)

    @property
    def grad(self):
        e = self._ag                  # a variable's node keeps its gradient buffer
        return e.node.info.grad if e is not None and e.node.op is None else None

    def backward(self, out_grad=None, retain_graph=False, train_mode=True) -> None:
        from .. import autograd
        autograd.backward([self], None if out_grad is None else [out_grad],
                          retain_graph=retain_graph, train_mode=train_mode)

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

    __nonzero__ = __bool__

    def __hash__(self):
        return id(self) // 16

    def __getstate__(self):
        raise MXNetError("NDArray cannot be pickled; use mx.nd.save / mx.nd.load")

    def __reduce_ex__(self, protocol):
        self.__getstate__()
