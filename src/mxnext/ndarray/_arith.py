"""NDArray's Python operators, with MXNet's rules: array-array goes to the ``broadcast_*``
ops, array-scalar to the ``_*_scalar`` ops (reflected forms to ``_r*_scalar``), in-place
forms write into the left operand through the engine; and ``mx.nd``'s functions of the
same names (``mx.nd.add`` ...), which take an NDArray or a scalar on either side."""

from __future__ import annotations

import math
import numbers
import operator

import numpy as np

from .._runtime import registry
from ._imperative import from_host, invoke_name

__all__ = ["Arithmetic", "functions"]

# (array-array op, array-scalar op, scalar-array op)
_ADD = ("broadcast_add", "_plus_scalar", "_plus_scalar")
_SUB = ("broadcast_sub", "_minus_scalar", "_rminus_scalar")
_MUL = ("broadcast_mul", "_mul_scalar", "_mul_scalar")
_DIV = ("broadcast_div", "_div_scalar", "_rdiv_scalar")
_MOD = ("broadcast_mod", "_mod_scalar", "_rmod_scalar")
_POW = ("broadcast_power", "_power_scalar", "_rpower_scalar")
_EQ = ("broadcast_equal", "_equal_scalar", "_equal_scalar")
_NE = ("broadcast_not_equal", "_not_equal_scalar", "_not_equal_scalar")
_GT = ("broadcast_greater", "_greater_scalar", "_lesser_scalar")
_GE = ("broadcast_greater_equal", "_greater_equal_scalar", "_lesser_equal_scalar")
_LT = ("broadcast_lesser", "_lesser_scalar", "_greater_scalar")
_LE = ("broadcast_lesser_equal", "_lesser_equal_scalar", "_greater_equal_scalar")
_SCALARS = (numbers.Number, np.generic)


def _binary(lhs, rhs, names, out=None, reflected=False):
    if type(rhs) is float or type(rhs) is int:      # the common scalars, before the ABC check
        return invoke_name(names[2] if reflected else names[1], [lhs],
                           {"scalar": float(rhs)}, out)
    if isinstance(rhs, Arithmetic):
        a, b = (rhs, lhs) if reflected else (lhs, rhs)
        return invoke_name(names[0], [a, b], {}, out)
    if isinstance(rhs, _SCALARS):
        return invoke_name(names[2] if reflected else names[1], [lhs],
                           {"scalar": float(rhs)}, out)
    if isinstance(rhs, np.ndarray):
        rhs = from_host(np.asarray(rhs, dtype=lhs._dtype), lhs._ctx)
        return _binary(lhs, rhs, names, out, reflected)
    return NotImplemented


def _op(names):
    def method(self, other):
        return _binary(self, other, names)
    return method


def _rop(names):
    def method(self, other):
        return _binary(self, other, names, reflected=True)
    return method


def _iop(names):
    def method(self, other):
        t = type(other)
        if t is not float and t is not int and not isinstance(
                other, (Arithmetic, *_SCALARS, np.ndarray)):
            return NotImplemented
        return _binary(self, other, names, out=self)
    return method


class Arithmetic:
    """The arithmetic, comparison and matrix operators of NDArray."""

    __slots__ = ()
    __array_priority__ = 1000.0      # numpy defers reflected operators to us

    __add__, __radd__, __iadd__ = _op(_ADD), _rop(_ADD), _iop(_ADD)
    __sub__, __rsub__, __isub__ = _op(_SUB), _rop(_SUB), _iop(_SUB)
    __mul__, __rmul__, __imul__ = _op(_MUL), _rop(_MUL), _iop(_MUL)
    __truediv__, __rtruediv__, __itruediv__ = _op(_DIV), _rop(_DIV), _iop(_DIV)
    __mod__, __rmod__, __imod__ = _op(_MOD), _rop(_MOD), _iop(_MOD)
    __pow__, __rpow__, __ipow__ = _op(_POW), _rop(_POW), _iop(_POW)
    __eq__, __ne__ = _op(_EQ), _op(_NE)
    __gt__, __ge__, __lt__, __le__ = _op(_GT), _op(_GE), _op(_LT), _op(_LE)

    def __matmul__(self, other):
        if not isinstance(other, Arithmetic):
            return NotImplemented
        return invoke_name("dot", [self, other], {})

    def __rmatmul__(self, other):
        if not isinstance(other, Arithmetic):
            return NotImplemented
        return invoke_name("dot", [other, self], {})

    def __neg__(self):
        return invoke_name("negative", [self], {})

    def __abs__(self):
        return invoke_name("abs", [self], {})

    def __pos__(self):
        return self

    def __hash__(self):           # __eq__ is elementwise: identity hashing, as in MXNet
        return id(self) // 16


# mx.nd function: (ops as above, result for two scalars)
_FUNCTIONS = {
    "add": (_ADD, operator.add),
    "subtract": (_SUB, operator.sub),
    "multiply": (_MUL, operator.mul),
    "divide": (_DIV, operator.truediv),
    "true_divide": (_DIV, operator.truediv),
    "modulo": (_MOD, operator.mod),
    "power": (_POW, operator.pow),
    "maximum": (("broadcast_maximum", "_maximum_scalar", "_maximum_scalar"), max),
    "minimum": (("broadcast_minimum", "_minimum_scalar", "_minimum_scalar"), min),
    "hypot": (("broadcast_hypot", "_hypot_scalar", "_hypot_scalar"), math.hypot),
    "equal": (_EQ, lambda a, b: float(a == b)),
    "not_equal": (_NE, lambda a, b: float(a != b)),
    "greater": (_GT, lambda a, b: float(a > b)),
    "greater_equal": (_GE, lambda a, b: float(a >= b)),
    "lesser": (_LT, lambda a, b: float(a < b)),
    "lesser_equal": (_LE, lambda a, b: float(a <= b)),
    "logical_and": (("broadcast_logical_and", "_logical_and_scalar", "_logical_and_scalar"),
                    lambda a, b: float(bool(a) and bool(b))),
    "logical_or": (("broadcast_logical_or", "_logical_or_scalar", "_logical_or_scalar"),
                   lambda a, b: float(bool(a) or bool(b))),
    "logical_xor": (("broadcast_logical_xor", "_logical_xor_scalar", "_logical_xor_scalar"),
                    lambda a, b: float(bool(a) != bool(b))),
}


def _function(name, names, on_scalars):
    def fn(lhs, rhs):
        if isinstance(lhs, Arithmetic):
            res = _binary(lhs, rhs, names)
        elif isinstance(rhs, Arithmetic):
            res = _binary(rhs, lhs, names, reflected=True)
        elif isinstance(lhs, _SCALARS) and isinstance(rhs, _SCALARS):
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
registry.require("NDArray operators", "dot", "negative", "abs",
                 *{n for names, _ in _FUNCTIONS.values() for n in names})
