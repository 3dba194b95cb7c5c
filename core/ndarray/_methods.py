"""NDArray methods that delegate to registered ops (``a.sum(axis=1)`` is ``mx.nd.sum(a, axis=1)``),
plus ``reshape``, which returns a view (recorded as ``Reshape`` for autograd)."""

from __future__ import annotations

from .. import registry
from ..autograd import _record, _state
from ..base import ShapeError
from .ndarray import NDArray

__all__ = []

# method name -> op name (MXNet 1.x NDArray methods)
_DELEGATES = {
    "sum": "sum", "nansum": "nansum", "mean": "mean", "max": "max", "min": "min",
    "prod": "prod", "nanprod": "nanprod", "norm": "norm", "argmax": "argmax",
    "argmin": "argmin", "argmax_channel": "argmax_channel", "argsort": "argsort",
    "sort": "sort", "topk": "topk", "clip": "clip", "sign": "sign", "sqrt": "sqrt",
    "rsqrt": "rsqrt", "square": "square", "exp": "exp", "expm1": "expm1", "log": "log",
    "log1p": "log1p", "log2": "log2", "log10": "log10", "abs": "abs", "round": "round",
    "rint": "rint", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "fix": "fix",
    "sin": "sin", "cos": "cos", "tan": "tan", "tanh": "tanh", "sigmoid": "sigmoid",
    "relu": "relu", "softmax": "softmax", "log_softmax": "log_softmax",
    "reciprocal": "reciprocal", "flatten": "Flatten", "expand_dims": "expand_dims",
    "squeeze": "squeeze", "swapaxes": "swapaxes", "flip": "flip", "tile": "tile",
    "repeat": "repeat", "pad": "pad", "split": "split", "slice": "slice",
    "slice_axis": "slice_axis", "slice_like": "slice_like", "take": "take",
    "pick": "pick", "one_hot": "one_hot", "zeros_like": "zeros_like",
    "ones_like": "ones_like", "broadcast_like": "broadcast_like",
    "reshape_like": "reshape_like", "diag": "diag", "dot": "dot", "sinh": "sinh",
    "cosh": "cosh", "arcsin": "arcsin", "arccos": "arccos", "arctan": "arctan",
    "arcsinh": "arcsinh", "arccosh": "arccosh", "arctanh": "arctanh", "degrees": "degrees",
    "radians": "radians", "cbrt": "cbrt", "broadcast_axes": "broadcast_axes",
    "shape_array": "shape_array", "size_array": "size_array", "rcbrt": "rcbrt",
}


def split_v2(self, indices_or_sections, axis=0, squeeze_axis=False):
    """Same as ``mx.nd.split_v2(self, ...)``."""
    from . import split_v2 as split
    return split(self, indices_or_sections, axis, squeeze_axis)


def _delegate(opname, method):
    def fn(self, *args, **kwargs):
        from . import _op_function
        return _op_function(opname)(self, *args, **kwargs)
    fn.__name__ = fn.__qualname__ = method
    fn.__doc__ = f"Same as ``mx.nd.{opname}(self, ...)``."
    return fn


def reshape(self, *shape, **kwargs):
    """A view with a new shape; MXNet's special codes 0, -1, -2, -3, -4 and ``reverse`` work."""
    if len(shape) == 1 and isinstance(shape[0], (list, tuple)):
        shape = shape[0]
    if "shape" in kwargs:
        shape = kwargs.pop("shape")
    op = registry.get("Reshape")
    params = op.parse_params({"shape": tuple(shape), **kwargs})
    _, outs = op.get_attr("FInferShape")(params, [self._shape], [None])
    new = tuple(outs[0])
    if _size(new) != _size(self._shape):
        raise ShapeError(f"reshape: cannot reshape {self._shape} into {tuple(shape)}")
    out = self._view(new)
    if _state.recording and self._ag is not None:
        _record(op, params, [self], [out])
    return out


def transpose(self, *axes, **kwargs):
    """``a.transpose(1, 0)``, ``a.transpose((1, 0))`` or ``a.transpose(axes=(1, 0))``."""
    from . import _op_function
    if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
        axes = axes[0]
    if axes:
        kwargs["axes"] = tuple(axes)
    return _op_function("transpose")(self, **kwargs)


def broadcast_to(self, shape):
    """Broadcast to ``shape``, which may have more (leading) axes than the array, as in
    MXNet's method (the ``broadcast_to`` op itself needs equal ranks)."""
    from . import _op_function
    shape = tuple(shape)
    if len(shape) < self.ndim:
        raise ShapeError(f"broadcast_to: cannot broadcast {self._shape} to {shape}, which has "
                         f"fewer axes")
    src = self if len(shape) == self.ndim else self.reshape((1,) * (len(shape) - self.ndim)
                                                            + self._shape)
    return _op_function("broadcast_to")(src, shape=shape)


def _size(shape):
    n = 1
    for s in shape:
        n *= s
    return n


for _m, _o in _DELEGATES.items():
    setattr(NDArray, _m, _delegate(_o, _m))
NDArray.reshape = reshape
NDArray.transpose = transpose
NDArray.broadcast_to = broadcast_to
NDArray.split_v2 = split_v2
