"""Python operators on NDArray with MXNet's rules: array-array goes to ``broadcast_*`` ops,
array-scalar to the ``_*_scalar`` ops (reflected forms to ``_r*_scalar``), in-place
forms write into the left operand through the engine."""

from __future__ import annotations

import math
import numbers
import operator

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


# mx.nd function: (ops as in _BINARY, result for two scalars)
_FUNCTIONS = {
    "add": (_BINARY["add"], operator.add),
    "subtract": (_BINARY["sub"], operator.sub),
    "multiply": (_BINARY["mul"], operator.mul),
    "divide": (_BINARY["truediv"], operator.truediv),
    "true_divide": (_BINARY["truediv"], operator.truediv),
    "modulo": (_BINARY["mod"], operator.mod),
    "power": (_BINARY["pow"], operator.pow),
    "maximum": (("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"), max),
    "minimum": (("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"), min),
    "hypot": (("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"), math.hypot),
    "equal": (_BINARY["eq"], lambda a, b: float(a == b)),
    "not_equal": (_BINARY["ne"], lambda a, b: float(a != b)),
    "greater": (_BINARY["gt"], lambda a, b: float(a > b)),
    "greater_equal": (_BINARY["ge"], lambda a, b: float(a >= b)),
    "lesser": (_BINARY["lt"], lambda a, b: float(a < b)),
    "lesser_equal": (_BINARY["le"], lambda a, b: float(a <= b)),
    "logical_and": (("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
                    lambda a, b: float(bool(a) and bool(b))),
    "logical_or": (("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
                   lambda a, b: float(bool(a) or bool(b))),
    "logical_xor": (("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
                    lambda a, b: float(bool(a) != bool(b))),
}


def _function(name, names, on_scalars):
    def fn(lhs, rhs):
        if isinstance(lhs, NDArray):
            res = _binary(lhs, rhs, names)
        elif isinstance(rhs, NDArray):
            res = _binary(rhs, lhs, names, reflected=True)
        elif isinstance(lhs, (numbers.Number, np.generic)) and isinstance(
                rhs, (numbers.Number, np.generic)):
            return on_scalars(lhs, rhs)
        else:
            res = NotImplemented
        if res is NotImplemented:
            raise TypeError(f"mx.nd.{name}: expected NDArrays or scalars, got "
                            f"{type(lhs).__name__} and {type(rhs).__name__}")
        return res
    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"Elementwise ``{name}`` of ``lhs`` and ``rhs``, each an NDArray or a scalar "
                  f"(arrays broadcast: ``{names[0]}``; with a scalar: ``{names[1]}``).")
    return fn


functions = {name: _function(name, names, f) for name, (names, f) in _FUNCTIONS.items()}


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
