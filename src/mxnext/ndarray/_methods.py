"""NDArray methods that run registered ops (``a.sum(axis=1)`` is ``mx.nd.sum(a, axis=1)``),
and the shape methods with MXNet's method forms (``reshape`` returns a view)."""

from __future__ import annotations

import numpy as np

from .._runtime import tape as _tape, registry
from .._runtime.base import MXNetError, ShapeError
from ._imperative import invoke_name, op_function

__all__ = ["OpMethods", "split_v2"]

# (target, input shape, keywords) -> (Reshape's params, the new shape): a layer reshapes
# the same way every call, and inferring the shape each time cost most of a reshape
_RESHAPES: dict = {}
registry.require("NDArray shape methods", "Reshape", "transpose", "broadcast_to", "slice_axis",
                 "squeeze", "expand_dims", "Flatten")


def _op(opname):
    """A method calling op ``opname``'s ``mx.nd`` function with the array first."""
    def method(self, *args, **kwargs):
        return op_function(opname)(self, *args, **kwargs)
    method.__doc__ = f"Same as ``mx.nd.{opname}(self, ...)``."
    return method


class OpMethods:
    """MXNet 1.x's NDArray methods that are ops."""

    __slots__ = ()

    # reductions and ordering
    sum, nansum, mean, prod, nanprod = _op("sum"), _op("nansum"), _op("mean"), _op("prod"), \
        _op("nanprod")
    max, min, norm = _op("max"), _op("min"), _op("norm")
    argmax, argmin, argmax_channel = _op("argmax"), _op("argmin"), _op("argmax_channel")
    argsort, sort, topk = _op("argsort"), _op("sort"), _op("topk")
    # elementwise
    clip, sign, abs, round, rint = _op("clip"), _op("sign"), _op("abs"), _op("round"), \
        _op("rint")
    floor, ceil, trunc, fix = _op("floor"), _op("ceil"), _op("trunc"), _op("fix")
    sqrt, rsqrt, cbrt, rcbrt, square = _op("sqrt"), _op("rsqrt"), _op("cbrt"), _op("rcbrt"), \
        _op("square")
    exp, expm1, log, log1p, log2, log10 = _op("exp"), _op("expm1"), _op("log"), _op("log1p"), \
        _op("log2"), _op("log10")
    sin, cos, tan, arcsin, arccos, arctan = _op("sin"), _op("cos"), _op("tan"), \
        _op("arcsin"), _op("arccos"), _op("arctan")
    sinh, cosh, tanh, arcsinh, arccosh, arctanh = _op("sinh"), _op("cosh"), _op("tanh"), \
        _op("arcsinh"), _op("arccosh"), _op("arctanh")
    degrees, radians, reciprocal = _op("degrees"), _op("radians"), _op("reciprocal")
    sigmoid, relu, softmax, log_softmax, softmin = _op("sigmoid"), _op("relu"), \
        _op("softmax"), _op("log_softmax"), _op("softmin")
    # shape and indexing
    swapaxes = _op("swapaxes")
    flip, tile, repeat, pad, split = _op("flip"), _op("tile"), _op("repeat"), _op("pad"), \
        _op("split")
    slice, slice_axis, slice_like = _op("slice"), _op("slice_axis"), _op("slice_like")
    take, pick, one_hot, diag, dot = _op("take"), _op("pick"), _op("one_hot"), _op("diag"), \
        _op("dot")
    zeros_like, ones_like = _op("zeros_like"), _op("ones_like")
    broadcast_like, broadcast_axes = _op("broadcast_like"), _op("broadcast_axes")
    reshape_like, shape_array, size_array = _op("reshape_like"), _op("shape_array"), \
        _op("size_array")

    def reshape(self, *shape, **kwargs):
        """A view with a new shape; MXNet's special codes 0, -1, -2, -3, -4 and ``reverse``
        work. Recorded as ``Reshape`` for autograd."""
        if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
            shape = shape[0]
        if "shape" in kwargs:
            shape = kwargs.pop("shape")
        op = registry.get("Reshape")
        key = (tuple(shape), self._shape, *kwargs.items())
        try:
            hit = _RESHAPES.get(key)
        except TypeError:                   # an unhashable keyword: not cached
            hit = key = None
        if hit is None:
            hit = self._reshape_target(op, shape, kwargs)
            if key is not None:
                if len(_RESHAPES) >= 4096:
                    _RESHAPES.clear()
                _RESHAPES[key] = hit
        params, new = hit
        out = self._view(new)
        if _tape.state.recording and self._ag is not None:
            _tape.record(op, params, [self], [out])
        return out

    def _reshape_target(self, op, shape, kwargs):
        params = op.parse_params({"shape": tuple(shape), **kwargs})
        _, outs = op.get_attr("FInferShape")(params, [self._shape], [None])
        new = tuple(outs[0])
        if _size(new) != _size(self._shape):
            raise ShapeError(f"reshape: cannot reshape {self._shape} into {tuple(shape)}")
        return params, new

    def flatten(self, inplace=False):
        """Collapse every axis but the first; ``inplace`` returns a view instead of a copy."""
        if inplace:
            return self.reshape((self._shape[0] if self._shape else 1, -1))
        return op_function("Flatten")(self)

    def expand_dims(self, axis, inplace=False):
        """A new axis of size 1 at ``axis``; ``inplace`` returns a view instead of a copy."""
        if inplace:
            nd = len(self._shape) + 1
            if not -nd <= axis < nd:
                raise MXNetError(f"expand_dims: axis {axis} is out of range for an array of "
                                 f"{nd - 1} dimensions")
            axis %= nd
            return self.reshape(self._shape[:axis] + (1,) + self._shape[axis:])
        return op_function("expand_dims")(self, axis=axis)

    def squeeze(self, axis=None, inplace=False):
        """Drop axes of size 1 (all, or those in ``axis``); ``inplace`` returns a view."""
        if not inplace:
            return op_function("squeeze")(self, axis=axis)
        nd = len(self._shape)
        drop = range(nd) if axis is None else [
            a % nd for a in (axis if isinstance(axis, (tuple, list)) else (axis,))]
        for a in drop:
            if axis is not None and self._shape[a] != 1:
                raise ShapeError(f"squeeze: axis {a} has size {self._shape[a]}, not 1")
        return self.reshape(tuple(s for i, s in enumerate(self._shape)
                                  if not (i in drop and s == 1)) or (1,))

    def transpose(self, *axes, **kwargs):
        """``a.transpose(1, 0)``, ``a.transpose((1, 0))`` or ``a.transpose(axes=(1, 0))``."""
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = axes[0]
        if axes:
            kwargs["axes"] = tuple(axes)
        return op_function("transpose")(self, **kwargs)

    def broadcast_to(self, shape):
        """Broadcast to ``shape``, which may have more (leading) axes than the array, as in
        MXNet's method (the ``broadcast_to`` op itself needs equal ranks)."""
        shape = tuple(shape)
        if len(shape) < self.ndim:
            raise ShapeError(f"broadcast_to: cannot broadcast {self._shape} to {shape}, which "
                             f"has fewer axes")
        src = self if len(shape) == self.ndim else self.reshape(
            (1,) * (len(shape) - self.ndim) + self._shape)
        return op_function("broadcast_to")(src, shape=shape)

    def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
        """Same as ``mx.nd.split_v2(self, ...)``."""
        return split_v2(self, indices_or_sections, axis, squeeze_axis)


def split_v2(ary, indices_or_sections, axis=0, squeeze_axis=False):
    """Split ``ary`` along ``axis`` into equal sections (an int) or at the given indices (a
    tuple), as ``numpy.split``; ``squeeze_axis`` drops the split axis from pieces of size 1.
    A list of arrays (one array when there is one piece); recorded for autograd."""
    if not -ary.ndim <= axis < ary.ndim:
        raise MXNetError(f"split_v2: axis {axis} out of range for an array of {ary.ndim} dims")
    axis %= ary.ndim
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
        p = invoke_name("slice", [ary], {"begin": (None,) * axis + (b,),     # may be empty
                                         "end": (None,) * axis + (max(b, e),)})
        if squeeze_axis:
            if p.shape[axis] != 1:
                raise MXNetError(f"split_v2: squeeze_axis needs pieces of size 1 along axis "
                                 f"{axis}, got {p.shape[axis]}")
            p = invoke_name("squeeze", [p], {"axis": (axis,)})
        pieces.append(p)
    return pieces[0] if len(pieces) == 1 else pieces


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n
