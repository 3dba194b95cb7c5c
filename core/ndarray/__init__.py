"""MXNet's ``mx.nd``: NDArray, creation functions and one function per registered op.

Op functions are generated on first access from the registry (module
``__getattr__``), so ops registered later appear too; underscore names also
live in ``mx.nd._internal``, public ones in ``mx.nd.op``.
"""

from __future__ import annotations

import numpy as np

from .. import registry as _registry
from ..base import MXNetError
from ..context import Context, current_context
from . import _ops, _methods, indexing  # noqa: F401  (install operators and methods)
from ._gen import make_op_function as _make_op_function
from ._imperative import invoke, invoke_name
from .ndarray import NDArray, _alloc, _as_ctx, _Chunk, _dev, _push_copy, _push_fill, empty, waitall
from .serialization import load, load_frombuffer, save

__all__ = ["NDArray", "array", "empty", "zeros", "ones", "full", "arange", "eye", "linspace",
           "waitall", "concatenate", "moveaxis", "split_v2", "onehot_encode", "from_numpy",
           "from_dlpack", "invoke", "save", "load", "load_frombuffer", "Custom"]

_FLOAT32 = np.dtype(np.float32)


def _ctx(ctx):
    return _as_ctx(ctx) or current_context()


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (int(shape),)
    return tuple(int(s) for s in shape)


def _host_to_new(host, ctx):
    out = _alloc(host.shape, host.dtype, ctx)
    d = out._data()      # a fresh block nobody else references: write it now, as MXNet does
    d[...] = _dev(ctx).from_numpy(host, ctx.device_id) if ctx.device_type != "cpu" else host
    return out


# -- creation ---------------------------------------------------------------------------
def array(source_array, ctx=None, dtype=None) -> NDArray:
    """An array copied from a list, numpy array or NDArray (default dtype: the NDArray's,
    else float32, as in MXNet)."""
    ctx = _ctx(ctx)
    if isinstance(source_array, NDArray):
        dtype = np.dtype(dtype) if dtype is not None else source_array._dtype
        out = _alloc(source_array._shape, dtype, ctx)
        _push_copy(source_array, out)
        return out
    host = np.asarray(source_array, dtype=np.dtype(dtype) if dtype is not None else _FLOAT32)
    return _host_to_new(host, ctx)


def _filled(shape, value, ctx, dtype, out=None):
    if out is None:
        out = _alloc(_shape(shape), np.dtype(dtype) if dtype is not None else _FLOAT32, _ctx(ctx))
    _push_fill(out, value)
    return out


def zeros(shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    return _filled(shape, 0, ctx, dtype, kwargs.get("out"))


def ones(shape, ctx=None, dtype=None, **kwargs) -> NDArray:
    return _filled(shape, 1, ctx, dtype, kwargs.get("out"))


def full(shape, val, ctx=None, dtype=None, out=None) -> NDArray:
    return _filled(shape, val, ctx, dtype, out)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx=None,
           dtype=None) -> NDArray:
    host = np.arange(start, stop, step, dtype=np.dtype(dtype) if dtype else _FLOAT32)
    if repeat != 1:
        host = np.repeat(host, int(repeat))
    return _host_to_new(host, _ctx(ctx))


def eye(N, M=0, k=0, ctx=None, dtype=None, **kwargs) -> NDArray:
    host = np.eye(int(N), int(M) or None, int(k), dtype=np.dtype(dtype) if dtype else _FLOAT32)
    return _host_to_new(host, _ctx(ctx))


def linspace(start, stop, num, endpoint=True, ctx=None, dtype=None) -> NDArray:
    host = np.linspace(start, stop, int(num), endpoint=endpoint,
                       dtype=np.dtype(dtype) if dtype else _FLOAT32)
    return _host_to_new(host, _ctx(ctx))


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
        raise MXNetError(f"moveaxis: {len(src)} source axes but {len(dst)} destination axes")
    for a in src + dst:
        if not -nd <= a < nd:
            raise MXNetError(f"moveaxis: axis {a} is out of range for a tensor of shape "
                             f"{tensor.shape}")
    src, dst = [int(a) % nd for a in src], [int(a) % nd for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise MXNetError(f"moveaxis: repeated axis in source {source} or destination "
                         f"{destination}")
    order = [a for a in range(nd) if a not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return invoke_name("transpose", [tensor], {"axes": tuple(order)})


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices (a
    tuple), as ``numpy.split``; ``squeeze_axis`` drops the split axis from pieces of size 1.
    A list of arrays (one array when there is one piece); recorded for autograd."""
    n = ary.shape[axis]
    if isinstance(indices_or_sections, (int, np.integer)):
        k = int(indices_or_sections)
        if k < 1 or n % k:
            raise MXNetError(f"split_v2: axis {axis} of size {n} does not split into {k} "
                             f"equal sections")
        cuts = [i * (n // k) for i in range(1, k)]
    elif isinstance(indices_or_sections, tuple):
        cuts = [min(max(int(i) + n if i < 0 else int(i), 0), n) for i in indices_or_sections]
    else:
        raise TypeError(f"split_v2: indices_or_sections must be an int or a tuple of ints, got "
                        f"{type(indices_or_sections).__name__}")
    pieces = []
    for b, e in zip([0] + cuts, cuts + [n]):
        p = invoke_name("slice_axis", [ary], {"axis": axis, "begin": b, "end": max(b, e)})
        if squeeze_axis:
            if p.shape[axis] != 1:
                raise MXNetError(f"split_v2: squeeze_axis needs pieces of size 1 along axis "
                                 f"{axis}, got {p.shape[axis]}")
            p = invoke_name("squeeze", [p], {"axis": (axis,)})
        pieces.append(p)
    return pieces[0] if len(pieces) == 1 else pieces


def onehot_encode(indices, out):
    """MXNet's deprecated ``onehot_encode``: ``one_hot(indices, depth=out.shape[1])`` into
    ``out``."""
    return invoke_name("one_hot", [indices], {"depth": out.shape[1]}, out=out)


def from_numpy(ndarray, zero_copy=True) -> NDArray:
    """An NDArray over a numpy array; with ``zero_copy`` (C-contiguous input) the memory is
    shared and the numpy array must not be written while the NDArray is used."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"from_numpy: expected numpy.ndarray, got {type(ndarray).__name__}")
    if not zero_copy or not ndarray.flags.c_contiguous or ndarray.ndim == 0:
        return array(ndarray, ctx=Context("cpu", 0), dtype=ndarray.dtype)
    from .. import engine
    raw = ndarray.reshape(-1).view(np.uint8)
    ctx = Context("cpu", 0)
    return NDArray._wrap(_Chunk(raw, engine.get().new_var(), ctx), ndarray.shape,
                         ndarray.dtype, 0)


def from_dlpack(dlpack) -> NDArray:
    """An NDArray sharing memory with a DLPack-capable object (CPU)."""
    return from_numpy(np.from_dlpack(dlpack), zero_copy=True)


def Custom(*inputs, op_type=None, **kwargs):
    """Run a Python custom operator registered with ``mx.operator.register(op_type)``."""
    from ..operator import Custom as _custom
    return _custom(*inputs, op_type=op_type, **kwargs)


globals().update(_ops.functions)     # add, maximum, greater, ... (array or scalar operands)
__all__ += list(_ops.functions)

# -- generated op functions -----------------------------------------------------------------
_HAND_WRITTEN = set(globals())
_functions: dict = {}


def _call(opdef, inputs, kwargs, out, name):
    ctx = None
    if "ctx" in kwargs:
        ctx = kwargs.pop("ctx")
        if opdef.param_model is not None and "ctx" in opdef.param_model.model_fields:
            kwargs["ctx"] = str(ctx) if ctx is not None else None
    return invoke(opdef, inputs, kwargs, out, ctx)


def _op_function(name):
    """The generated function for op ``name`` (or alias), built on first use."""
    fn = _functions.get(name)
    if fn is None:
        fn = _functions[name] = _make_op_function(_registry.get(name), _call, name)
    return fn


def _forget(opdef):
    for n in [opdef.name, *opdef.aliases]:
        _functions.pop(n, None)
        if n not in _HAND_WRITTEN:
            globals().pop(n, None)
        vars(op).pop(n, None)
        vars(_internal).pop(n, None)


_registry.on_new_op(_forget)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        fn = _op_function(name)
    except KeyError as exc:   # OpNotFound is a KeyError: keep hasattr() working
        raise AttributeError(f"module 'mxnext.ndarray' has no attribute {name!r}: {exc}") from None
    globals()[name] = fn
    return fn


def __dir__():
    names = set(globals())
    for d in _registry.list_ops():
        names.update([d.name, *d.aliases])
    return sorted(names)


from . import _internal, op, random  # noqa: E402
