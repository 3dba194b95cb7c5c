"""MXNet's ``mxnet.ndarray.ndarray`` module: the NDArray class and the functions MXNet
defines beside it (creation, joins, conversions, and ``add``/``maximum``/... taking an
NDArray or a scalar on either side). ``mx.nd`` re-exports all of it; the class itself
lives in ``_array.py``.
"""

from __future__ import annotations

import functools
import inspect
import warnings
from builtins import slice as py_slice   # noqa: F401  (MXNet's name here; its tests import it)

import numpy as np

from .._runtime import engine as _engine
from .._runtime import registry as _registry
from .._runtime import storage as _storage
from .._runtime.base import MXNetError, ParamError, as_dtype, did_you_mean
from .._runtime.context import Context, as_context, current_context
from ..util import is_np_shape
from ._arith import functions as _functions
from ._array import NDArray, waitall
from ._copies import push_copy as _push_copy
from ._copies import push_fill as _push_fill
from ._imperative import from_host as _from_host
from ._imperative import invoke_name, new_array
from ._methods import split_v2
from ._shapes import allocation_failed, arange_length, creation_shape

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "eye", "linspace",
           "waitall", "concatenate", "moveaxis", "histogram", "split_v2", "onehot_encode",
           "from_numpy", "from_dlpack", "to_dlpack_for_read", "to_dlpack_for_write"]

_FLOAT32 = np.dtype(np.float32)
# MXNet's storage type ids (its Gluon tests import the table); mxnext stores "default" only.
_STORAGE_TYPE_STR_TO_ID = {"_undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


def _ctx(ctx):
    return as_context(ctx) or current_context()


# -- creation ---------------------------------------------------------------------------
def array(source_array, ctx=None, dtype=None) -> NDArray:
    """An array copied from a list, numpy array or NDArray (default dtype: the NDArray's,
    else float32, as in MXNet)."""
    if getattr(source_array, "stype", "default") != "default" \
            or type(source_array).__module__.startswith("scipy.sparse"):
        from . import sparse         # MXNet: a sparse source gives a sparse array
        return sparse.array(source_array, ctx, dtype)
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        dtype = as_dtype(dtype) if dtype is not None else source_array._dtype
        out = new_array(source_array._shape, dtype, ctx)
        _push_copy(source_array, out)
        return out
    host = np.asarray(source_array, dtype=as_dtype(dtype) if dtype is not None else _FLOAT32)
    return _from_host(host, ctx)


def _filled(shape, value, ctx, dtype, out=None, name="_full"):
    if out is None:
        dtype = as_dtype(dtype) if dtype is not None else _FLOAT32
        out = _allocate(name.strip("_"), shape, dtype, ctx)
    _push_fill(out, value, name)      # MXNet's op names: _zeros, _ones, _full
    return out


def _allocate(what, shape, dtype, ctx):
    """A new array for creation function ``what``: its shape checked, an allocation failure
    naming the function and the shape."""
    shape = creation_shape(what, shape, dtype)
    try:
        return new_array(shape, dtype, _ctx(ctx))
    except (MemoryError, MXNetError) as exc:
        raise allocation_failed(what, shape, dtype, exc) from exc


def _strict(fn):
    """``fn`` refusing keywords it does not have with the error every registered op gives
    (``ParamError``, with suggestions), instead of Python's bare ``TypeError``. A sparse
    ``stype`` makes ``zeros``/``empty`` the ``mx.nd.sparse`` ones; ``name`` is accepted and
    unused, as in MXNet's ``mx.nd``."""
    known = [p for p in inspect.signature(fn).parameters if p != "kwargs"]

    @functools.wraps(fn)
    def checked(*args, **kwargs):
        for k in kwargs:
            if k not in known:
                raise ParamError(f"Operator {fn.__name__!r}: unknown parameter {k!r}"
                                 f"{did_you_mean(k, known)}; known parameters: "
                                 f"{', '.join(known)}")
        stype = kwargs.pop("stype", None)
        if stype not in (None, "default"):
            return _sparse_creation(fn.__name__, stype, args, kwargs)
        return fn(*args, **kwargs)
    return checked


def _sparse_creation(what, stype, args, kwargs):
    if what not in ("zeros", "empty"):
        raise ParamError(f"Operator {what!r}: stype {stype!r} is not supported; only zeros "
                         f"and empty make sparse arrays")
    from . import sparse
    kwargs.pop("out", None)
    kwargs.pop("name", None)
    return sparse.zeros(stype, *args, **kwargs)


@_strict
def zeros(shape, ctx=None, dtype=None, stype=None, out=None, name=None) -> NDArray:
    """An array of zeros (float32 unless ``dtype``) on ``ctx``, or written into ``out``;
    ``stype`` 'csr' or 'row_sparse' gives a sparse array that stores nothing."""
    _check_known("zeros", shape, dtype)
    if stype not in (None, "default"):
        from . import sparse
        return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype)
    return _filled(shape, 0, ctx, dtype, out, "_zeros")


@_strict
def ones(shape, ctx=None, dtype=None, stype=None, out=None, name=None) -> NDArray:
    """An array of ones (float32 unless ``dtype``) on ``ctx``, or written into ``out``."""
    _check_known("ones", shape, dtype)
    return _filled(shape, 1, ctx, dtype, out, "_ones")


def _check_known(what, shape, dtype):
    """MXNet's ``zeros``/``ones`` are ops whose shape must be known: in legacy shape
    semantics ``()`` and a 0 dimension mean unknown (``mx.np_shape()`` allows them)."""
    shape = creation_shape(what, shape, dtype or _FLOAT32)
    if not is_np_shape() and (not shape or 0 in shape):
        raise MXNetError(f"{what}: shape {shape} is unknown in MXNet's legacy shape semantics "
                         f"(() and 0 dimensions mean unknown); use mx.np_shape() for scalar "
                         f"and zero-size arrays, or mx.nd.empty/array")


@_strict
def full(shape, val, ctx=None, dtype=None, out=None) -> NDArray:
    """An array filled with ``val``."""
    return _filled(shape, val, ctx, dtype, out)


@_strict
def empty(shape, ctx=None, dtype=None, stype=None) -> NDArray:
    """An uninitialised array (MXNet's ``mx.nd.empty``); a sparse ``stype`` gives an empty
    sparse array."""
    if stype not in (None, "default"):
        from . import sparse
        return sparse.zeros(stype, shape, ctx=ctx, dtype=dtype)
    return _allocate("empty", shape, as_dtype(dtype or _FLOAT32), ctx)


@_strict
def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None,
           dtype=None) -> NDArray:
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    dtype = as_dtype(dtype) if dtype else _FLOAT32
    n = arange_length(start, stop, step, repeat, dtype)
    try:
        if dtype.kind in "iu":     # as MXNet: start and step cast to the type, values wrap
            lo = 0 if stop is None else start
            host = (int(lo) + np.arange(n // int(repeat), dtype=np.int64) * int(step)
                    ).astype(dtype)
        else:
            host = np.arange(start, stop, step, dtype=dtype)
        if repeat != 1:
            host = np.repeat(host, int(repeat))
        return _from_host(host, _ctx(ctx))
    except (MemoryError, MXNetError) as exc:
        raise allocation_failed("arange", (n,), dtype, exc) from exc


@_strict
def eye(N, M=0, k=0, ctx=None, dtype=None, out=None, name=None) -> NDArray:
    """A 2-D array with ones on diagonal ``k`` and zeros elsewhere."""
    host = np.eye(int(N), int(M) or None, int(k), dtype=as_dtype(dtype) if dtype else _FLOAT32)
    if out is not None:
        return array(host, ctx=out.context, dtype=out.dtype).copyto(out)
    return _from_host(host, _ctx(ctx))


@_strict
def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None) -> NDArray:
    """``num`` evenly spaced values from ``start`` to ``stop``."""
    host = np.linspace(start, stop, int(num), endpoint=endpoint,
                       dtype=as_dtype(dtype) if dtype else _FLOAT32)
    return _from_host(host, _ctx(ctx))


_registry.require("mx.nd functions", "Concat", "transpose", "one_hot")


def concatenate(arrays, axis=0, always_copy=True) -> NDArray:
    """Join ``arrays`` along ``axis`` (the ``Concat`` op)."""
    if not arrays:
        raise MXNetError("concatenate: expected at least one array")
    if len(arrays) == 1 and not always_copy:
        return arrays[0]
    return invoke_name("Concat", list(arrays), {"num_args": len(arrays), "dim": axis})


def moveaxis(tensor, source, destination) -> NDArray:
    """``tensor`` with axes ``source`` moved to ``destination`` (ints or sequences), the
    others kept in order (a ``transpose``)."""
    nd = tensor.ndim
    src = [source] if isinstance(source, (int, np.integer)) else list(source)
    dst = [destination] if isinstance(destination, (int, np.integer)) else list(destination)
    if len(src) != len(dst):
        raise ParamError(f"moveaxis: {len(src)} source axes but {len(dst)} destination axes")
    for a in src + dst:
        if not -nd <= a < nd:
            raise ParamError(f"moveaxis: axis {a} is out of range for a tensor of shape "
                             f"{tensor.shape}")
    src, dst = [int(a) % nd for a in src], [int(a) % nd for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise ParamError(f"moveaxis: repeated axis in source {source} or destination "
                         f"{destination}")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke_name("transpose", [tensor], {"axes": tuple(order)})


def histogram(a, bins=10, range=None):
    """(counts, bin edges) of the flattened ``a``: ``bins`` equal bins over ``range``, or the
    edges given as an NDArray. An int ``bins`` without ``range`` warns and takes numpy's
    histogram over (a.min(), a.max()), returned as float32 arrays (as MXNet)."""
    if isinstance(bins, NDArray):
        return invoke_name("_histogram", [a, bins], {})
    if isinstance(bins, (int, np.integer)):
        if range is None:
            warnings.warn("range is not specified, using numpy's result to ensure consistency "
                          "with numpy", stacklevel=2)
            counts, edges = np.histogram(a.asnumpy(), bins=int(bins))
            return array(counts), array(edges)
        return invoke_name("_histogram", [a], {"bin_cnt": int(bins), "range": range})
    raise ValueError(f"histogram: bins must be an int or an NDArray of bin edges, got "
                     f"{type(bins).__name__}")


def onehot_encode(indices, out):
    """MXNet's deprecated ``onehot_encode``: ``one_hot(indices, depth=out.shape[1])`` into
    ``out``."""
    return invoke_name("one_hot", [indices], {"depth": out.shape[1]}, out=out)


def from_numpy(ndarray, zero_copy=True) -> NDArray:
    """An NDArray over a numpy array. With ``zero_copy`` (the default, as in MXNet) the memory
    is shared: the numpy array must be C-contiguous (else ValueError) and becomes read-only,
    so that it changes only through the NDArray (0-d and empty arrays are copied)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy or ndarray.ndim == 0 or ndarray.size == 0:
        return array(ndarray, ctx=Context("cpu", 0), dtype=ndarray.dtype)
    if not ndarray.flags.c_contiguous:
        raise ParamError("from_numpy: zero_copy needs a C-contiguous numpy array; pass "
                         "numpy.ascontiguousarray(a) or zero_copy=False")
    if not ndarray.flags.writeable:     # read-only already (given to from_numpy before)
        try:
            ndarray.flags.writeable = True
        except ValueError:
            raise ParamError("from_numpy: zero_copy needs writable memory and this numpy "
                             "array's is read-only (not its own); pass zero_copy=False") from None
    raw = ndarray.reshape(-1).view(np.uint8)      # writable: the NDArray's own view
    ndarray.flags.writeable = False
    borrowed = _storage.Handle(raw, raw.nbytes, raw.nbytes, Context("cpu", 0), None,
                               _engine.get().new_var())
    return NDArray._new(borrowed, 0, ndarray.shape, ndarray.dtype)


class _Capsule:
    """A bare DLPack capsule (what ``to_dlpack_for_read`` returns, as in MXNet) in the
    protocol numpy's ``from_dlpack`` takes."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)             # kDLCPU


def from_dlpack(dlpack) -> NDArray:
    """An NDArray sharing memory with a DLPack capsule (CPU) or DLPack-capable object (on
    the host, or on a device whose plugin declares that DLPack device type)."""
    if type(dlpack).__name__ == "PyCapsule":
        dlpack = _Capsule(dlpack)
    kind = dlpack.__dlpack_device__()[0] if hasattr(dlpack, "__dlpack_device__") else 1
    if kind != 1:
        return _from_device_dlpack(dlpack, kind)
    host = np.from_dlpack(dlpack)
    if not host.flags.writeable:
        return from_numpy(host, zero_copy=False)
    return from_numpy(host, zero_copy=True)


def _from_device_dlpack(obj, kind) -> NDArray:
    from .._runtime import device as _device
    dev = next((d for d in _device.available().values() if getattr(d, "dlpack_type", 0) == kind),
               None)
    if dev is None:
        raise MXNetError(f"from_dlpack: no device plugin holds arrays of DLPack device type "
                         f"{kind} (the gpu one: mxnext-device-cupy)")
    raw, device_id, shape, dtype = dev.borrow(obj)
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    borrowed = _storage.Handle(raw, nbytes, nbytes, Context(dev.type, device_id), None,
                               _engine.get().new_var())
    return NDArray._new(borrowed, 0, tuple(shape), np.dtype(dtype))


def to_dlpack_for_read(data):
    """Same as ``data.to_dlpack_for_read()``."""
    return data.to_dlpack_for_read()


def to_dlpack_for_write(data):
    """Same as ``data.to_dlpack_for_write()``."""
    return data.to_dlpack_for_write()


globals().update(_functions)     # add, maximum, greater, ... (array or scalar operands)
__all__ += list(_functions)
