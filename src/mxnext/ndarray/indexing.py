"""``NDArray.__getitem__`` / ``__setitem__`` with MXNet 1.x semantics.

Ints and slices selecting one contiguous block (an int or a step-1 slice on the first axis,
``x[2, 1:3]``, ...) return a view sharing memory, as MXNet does; everything else copies. A result with no axes
left has shape ``(1,)`` (MXNet 1.x has no 0-d arrays here). Copies and writes
run through the engine with numpy's indexing rules; index arrays (NDArray,
list, numpy) select along axes. While recording, indexing becomes the
differentiable ops ``slice_axis``/``slice`` (any step)/``Reshape``/``take``.
"""

from __future__ import annotations

import numbers

import numpy as np

from .._runtime import device as _device, tape as _tape, registry
from .._runtime.tape import state as _state
from .._runtime.base import MXNetError, ShapeError
from ._imperative import from_host, invoke_name, new_array, push

__all__ = ["Indexing", "slice_is_contiguous"]

_INT = (int, np.integer)


class Indexing:
    """NDArray's ``[]``: first-axis views, copies otherwise, writes through the engine."""

    __slots__ = ()

    def __getitem__(self, key):
        return getitem(self, key)

    def __setitem__(self, key, value):
        setitem(self, key, value)


_ARRAY = Indexing          # NDArray is the class with this mixin
registry.require("NDArray indexing", "slice_axis", "slice", "Reshape", "take")


def getitem(self, key):
    shape = self._shape
    if isinstance(key, _INT) and shape:
        return _first_axis(self, *_int_range(int(key), shape[0]), drop=len(shape) > 1)
    if isinstance(key, slice) and key.step in (None, 1) and shape:
        start, stop, _ = key.indices(shape[0])
        return _first_axis(self, start, max(start, stop), drop=False)
    if isinstance(key, tuple) and _is_first_axis_key(key, len(shape)):
        return getitem(self, key[0])
    recording = _state.recording and self._ag is not None
    if isinstance(key, (tuple, slice)) and not recording:
        view = _contiguous_view(self, key)
        if view is not None:
            return view
    if recording:
        return _recorded(self, key)
    return _copy(self, key)


def _contiguous_view(self, key):
    """Basic indexing (ints and slices) that selects one contiguous block, as a view sharing
    memory (MXNet's rule, ``_basic_indexing_slice_is_contiguous``); None for other keys."""
    shape = self._shape
    key = _expand(key if isinstance(key, tuple) else (key,), len(shape))
    if len(key) > len(shape) or not all(isinstance(k, (slice, *_INT)) for k in key):
        return None
    key = key + (slice(None),) * (len(shape) - len(key))
    slices, keep = [], []
    for k, n in zip(key, shape):
        if isinstance(k, slice):
            slices.append(k)
            keep.append(True)
        else:
            slices.append(slice(*_int_range(int(k), n)))
            keep.append(False)
    if not slice_is_contiguous(slices, shape):
        return None
    ranges = [range(*k.indices(n)) for k, n in zip(slices, shape)]
    offset, stride = 0, self._dtype.itemsize
    for r, n in zip(reversed(ranges), reversed(shape)):
        if len(r):
            offset += r.start * stride
        stride *= n
    final = tuple(len(r) for r, k in zip(ranges, keep) if k) or (1,)
    return self._view(final, self._offset + offset)


def setitem(self, key, value):
    if _state.recording:
        _tape.check_assignable([self])
        if key is not None and key is not Ellipsis and getattr(value, "_ag", None) is not None:
            raise MXNetError(_tape.INPLACE)   # x[key] = y would lose y's history
    if isinstance(value, _ARRAY):
        if value._ctx != self._ctx:
            value = value.as_in_context(self._ctx)
        if value.stype != "default":          # a sparse value is written densified
            value = value.tostype("default")
        const, v = [value._chunk.var], value._data()
    elif isinstance(value, (numbers.Number, np.generic)):
        const, v = [], value
    else:
        const, v = [], np.array(value, dtype=self._dtype)
    key, key_vars = _resolvable(key)
    if not key_vars:                # index values known now: bad keys and values fail here
        vshape = _check_assignment(self, key, getattr(v, "shape", ()))
        if getattr(v, "ndim", 0) > len(vshape):
            v = v.reshape(vshape)     # leading unit axes dropped: b[0] = array([x]), as MXNet
    d, ctx = self._data(), self._ctx

    def fn(rctx):
        d[_resolve(key, ctx)] = _resolve(v, ctx)
    push(fn, self._ctx, const + key_vars, (self._chunk.var,), "_set_item", d.nbytes)


def _check_assignment(self, key, vshape):
    """Raise at the assignment, as MXNet does, if ``key`` is out of range for the array
    (IndexError) or the value cannot be broadcast to the selection (ShapeError); the value's
    shape without the leading unit axes the selection lacks."""
    probe = np.broadcast_to(np.empty((), self._dtype), self._shape)   # no memory touched
    target = probe[key].shape
    vshape = tuple(vshape)
    while len(vshape) > len(target) and vshape[0] == 1:
        vshape = vshape[1:]                       # numpy drops leading unit axes of values
    try:
        ok = np.broadcast_shapes(vshape, target) == target
    except ValueError:
        ok = False
    if not ok:
        raise ShapeError(f"__setitem__: cannot assign a value of shape {tuple(vshape)} to the "
                         f"selection {key!r} of shape {target} (array shape {self._shape})")
    return vshape


def slice_is_contiguous(slc_key, shape) -> bool:
    """Whether basic indexing with the slices ``slc_key`` (one per axis) on an array of
    ``shape`` selects one contiguous block: the axes before the first that takes more than
    one element take at most one, that axis has step 1, and every axis after it is taken
    whole in order. An empty selection is contiguous."""
    ranges = [range(*k.indices(n)) for k, n in zip(slc_key, shape)]
    if any(len(r) == 0 for r in ranges):
        return True
    first = next((i for i, r in enumerate(ranges) if len(r) > 1), None)
    if first is None:
        return True
    if ranges[first].step != 1:
        return False
    return all(len(r) == n and (r.step == 1 or n == 1)
               for r, n in zip(ranges[first + 1:], shape[first + 1:]))


def _int_range(i, n):
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
    i %= n
    return i, i + 1


def _is_first_axis_key(key, ndim):
    if not key or len(key) > ndim:
        return False
    k0 = key[0]
    if not (isinstance(k0, _INT) or (isinstance(k0, slice) and k0.step in (None, 1))):
        return False
    return all(isinstance(k, slice) and k == slice(None) for k in key[1:])


def _first_axis(self, start, stop, drop):
    """A view of rows ``start:stop``; ``drop`` removes the first axis (int index)."""
    shape = self._shape
    rest = shape[1:]
    row = self._dtype.itemsize
    for s in rest:
        row *= s
    sliced = self._view((stop - start,) + rest, self._offset + start * row)
    if _state.recording and self._ag is not None:
        op = registry.get("slice_axis")
        _tape.record(op, op.parse_params({"axis": 0, "begin": start, "end": stop}), [self],
                     [sliced])
    if not drop:
        return sliced
    out = sliced._view(rest)
    if _state.recording and sliced._ag is not None:
        op = registry.get("Reshape")
        _tape.record(op, op.parse_params({"shape": rest}), [sliced], [out])
    return out


def _expand(key, ndim):
    key = key if isinstance(key, tuple) else (key,)
    if any(k is Ellipsis for k in key):
        i = next(j for j, k in enumerate(key) if k is Ellipsis)
        used = sum(1 for k in key if k is not None and k is not Ellipsis)
        key = key[:i] + (slice(None),) * (ndim - used) + key[i + 1:]
    return key


def _recorded(self, key):
    """Indexing as recorded ops: basic indexing as ``slice`` + ``Reshape``, one index array
    as ``take`` on axis 0, any other key (index arrays mixed with ints and slices) as
    ``take`` of the selected elements' flat positions."""
    if isinstance(key, (_ARRAY, list, np.ndarray)):
        idx = key if isinstance(key, _ARRAY) else _from_host(self, np.asarray(key))
        return invoke_name("take", [self, idx], {"axis": 0})
    if any(isinstance(k, (_ARRAY, list, np.ndarray))
           for k in (key if isinstance(key, tuple) else (key,))):
        return _recorded_advanced(self, key)
    key = _expand(key, len(self._shape))
    begin, end, step, out_shape, axis = [], [], [], [], 0
    for k in key:
        if k is None:
            out_shape.append(1)
            continue
        if axis >= len(self._shape):
            raise IndexError(f"too many indices for an NDArray of shape {self._shape}")
        n = self._shape[axis]
        st = 1
        if isinstance(k, _INT):
            b, e = _int_range(int(k), n)
        elif isinstance(k, slice):
            b, e, st = k.indices(n)
            length = len(range(b, e, st))
            if not length:
                e, st = b, 1
            elif st < 0 and e < 0:
                e = None                       # down to index 0 (-1 would mean the last)
            out_shape.append(length)
        else:
            raise MXNetError(f"indexing with {key!r}: expected ints, slices, None, ... or "
                             f"index arrays")
        begin.append(b)
        end.append(e)
        step.append(st)
        axis += 1
    out_shape += self._shape[axis:]
    r = invoke_name("slice", [self], {"begin": tuple(begin), "end": tuple(end),
                                       "step": tuple(step)})
    return invoke_name("Reshape", [r], {"shape": tuple(out_shape) or (1,)})


def _recorded_advanced(self, key):
    """``self[key]`` for any numpy-style key, recorded: the flat positions numpy selects
    (index arrays read now) taken from the flattened array; repeated positions add up their
    gradients."""
    host = tuple(k.asnumpy().astype(np.intp) if isinstance(k, _ARRAY) and k._dtype.kind != "b"
                 else k.asnumpy() if isinstance(k, _ARRAY) else k
                 for k in (key if isinstance(key, tuple) else (key,)))
    size = 1
    for n in self._shape:
        size *= n
    try:
        positions = np.arange(size, dtype=np.int64).reshape(self._shape)[host]
    except IndexError as exc:
        raise IndexError(f"NDArray of shape {self._shape}: {exc}") from None
    flat = invoke_name("Reshape", [self], {"shape": (-1,)})
    out = invoke_name("take", [flat, from_host(positions.reshape(-1), self._ctx)], {"axis": 0})
    return invoke_name("Reshape", [out], {"shape": positions.shape or (1,)})


def _from_host(self, arr):
    return from_host(arr if arr.dtype.kind in "iub" else arr.astype(np.float32), self._ctx)


def _resolvable(key):
    """``key`` with NDArray index arrays kept for run time, and the vars they need."""
    items = key if isinstance(key, tuple) else (key,)
    out, key_vars = [], []
    for k in items:
        if isinstance(k, _ARRAY):
            key_vars.append(k._chunk.var)
        elif isinstance(k, list):
            k = np.asarray(k)
        if isinstance(k, np.ndarray) and k.dtype.kind == "f":
            k = k.astype(np.intp)
        out.append(k)
    return (tuple(out) if isinstance(key, tuple) else out[0]), key_vars


def _resolve(key, ctx):
    """Replace NDArray index arrays by their data and copy host (numpy) index arrays and
    values onto ``ctx``'s device (inside an engine function)."""
    if isinstance(key, tuple):
        return tuple(_resolve(k, ctx) for k in key)
    if isinstance(key, _ARRAY):
        d = key._data()
        return d if d.dtype.kind in "iub" else d.astype(np.intp)
    if isinstance(key, np.ndarray) and ctx.device_type != "cpu":
        return _device.get(ctx.device_type).from_host(key, ctx.device_id)
    return key


def _shape_probe(key):
    """A key with the same result shape whose index arrays are host zeros/values."""
    if isinstance(key, tuple):
        return tuple(_shape_probe(k) for k in key)
    if isinstance(key, _ARRAY):
        if key._dtype.kind == "b":
            return key.asnumpy()
        return np.zeros(key._shape, dtype=np.intp)
    return key


def _copy(self, key):
    key, key_vars = _resolvable(key)
    probe = np.broadcast_to(np.empty((), dtype=np.uint8), self._shape)
    try:
        shape = probe[_shape_probe(key)].shape
    except IndexError as exc:
        raise IndexError(f"NDArray of shape {self._shape}: {exc}") from None
    out = new_array(shape or (1,), self._dtype, self._ctx)
    s, o, ctx = self._data(), out._data(), self._ctx

    def fn(rctx):
        o[...] = s[_resolve(key, ctx)].reshape(o.shape)
    push(fn, self._ctx, [self._chunk.var] + key_vars, (out._chunk.var,), "_get_item", o.nbytes)
    return out


