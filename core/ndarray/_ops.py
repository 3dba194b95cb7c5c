"""Python operators on NDArray with MXNet's rules: array-array goes to ``broadcast_*`` ops,
array-scalar to the ``_*_scalar`` ops (reflected forms to ``_r*_scalar``), in-place
forms write into the left operand through the engine."""

from __future__ import annotations

import numbers

import numpy as np

from ._imperative import invoke_name
from .ndarray import NDArray

__all__ = []

# operator: (array-array op, array-scalar op, scalar-array op)
_BINARY = {
    "add": ("broadcast_add", "_plus_scalar", "_plus_scalar"),
    "sub": ("broadcast_sub", "_minus_scalar", "_rminus_scalar"),
    "mul": ("broadcast_mul", "_mul_scalar", "_mul_scalar"),
    "truediv": ("broadcast_div", "_div_scalar", "_rdiv_scalar"),
    "mod": ("broadcast_mod", "_mod_scalar", "_rmod_scalar"),
    "pow": ("broadcast_power", "_power_scalar", "_rpower_scalar"),
    "eq": ("broadcast_equal", "_equal_scalar", "_equal_scalar"),
    "ne": ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar"),
    "gt": ("broadcast_greater", "_greater_scalar", "_lesser_scalar"),
    "ge": ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar"),
    "lt": ("broadcast_lesser", "_lesser_scalar", "_greater_scalar"),
    "le": ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar"),
}


def _binary(lhs, rhs, names, out=None, reflected=False):
    if type(rhs) is float or type(rhs) is int:      # the common scalars, before the ABC check
        return invoke_name(names[2] if reflected else names[1], [lhs],
                           {"scalar": float(rhs)}, out)
    if isinstance(rhs, NDArray):
        a, b = (rhs, lhs) if reflected else (lhs, rhs)
        return invoke_name(names[0], [a, b], {}, out)
    if isinstance(rhs, (numbers.Number, np.generic)):
        return invoke_name(names[2] if reflected else names[1], [lhs],
                            {"scalar": float(rhs)}, out)
    if isinstance(rhs, np.ndarray):
        from . import array
        return _binary(lhs, array(rhs, ctx=lhs._ctx, dtype=lhs._dtype), names, out, reflected)
    return NotImplemented


def _make(names, reflected=False, inplace=False):
    if inplace:
        def method(self, other):
            t = type(other)
            if t is not NDArray and t is not float and t is not int and not isinstance(
                    other, (NDArray, numbers.Number, np.generic, np.ndarray)):
                return NotImplemented
            return _binary(self, other, names, out=self)
    else:
        def method(self, other):
            return _binary(self, other, names, reflected=reflected)
    return method


def _matmul(self, other):
    if not isinstance(other, NDArray):
        return NotImplemented
    return invoke_name("dot", [self, other], {})


def _rmatmul(self, other):
    if not isinstance(other, NDArray):
        return NotImplemented
    return invoke_name("dot", [other, self], {})


def _neg(self):
    return invoke_name("negative", [self], {})


def _abs(self):
    return invoke_name("abs", [self], {})


def _install():
    for op, names in _BINARY.items():
        setattr(NDArray, f"__{op}__", _make(names))
        if op in ("add", "sub", "mul", "truediv", "mod", "pow"):
            setattr(NDArray, f"__r{op}__", _make(names, reflected=True))
            setattr(NDArray, f"__i{op}__", _make(names, inplace=True))
    NDArray.__div__ = NDArray.__truediv__
    NDArray.__rdiv__ = NDArray.__rtruediv__
    NDArray.__idiv__ = NDArray.__itruediv__
    NDArray.__matmul__ = _matmul
    NDArray.__rmatmul__ = _rmatmul
    NDArray.__neg__ = _neg
    NDArray.__abs__ = _abs
    NDArray.__pos__ = lambda self: self
    NDArray.__hash__ = lambda self: id(self) // 16


_install()
