"""Symbol's Python operators, with MXNet's rules: symbol-symbol goes to the elementwise ops
(same shapes; no broadcasting), symbol-scalar to the ``_*_scalar`` ops (reflected forms to
``_r*_scalar``), and each result is named as MXNet names it (``a + b`` is ``_plus0``,
``a * 2`` is ``_mulscalar0``). In-place forms exist only for NDArray."""

from __future__ import annotations

from numbers import Number

from .._runtime.base import NotImplementedForSymbol, numeric_types
from . import _create

__all__ = ["Arithmetic", "binary"]

# operator: ((op, name hint) with a symbol, with a scalar, with a scalar on the left)
_OPS = {
    "add": (("elemwise_add", "_plus"), ("_plus_scalar", "_plusscalar"),
            ("_plus_scalar", "_plusscalar")),
    "sub": (("elemwise_sub", "_minus"), ("_minus_scalar", "_minusscalar"),
            ("_rminus_scalar", "_rminusscalar")),
    "mul": (("elemwise_mul", "_mul"), ("_mul_scalar", "_mulscalar"),
            ("_mul_scalar", "_mulscalar")),
    "div": (("elemwise_div", "_div"), ("_div_scalar", "_divscalar"),
            ("_rdiv_scalar", "_rdivscalar")),
    "mod": (("_mod", "_mod"), ("_mod_scalar", "_modscalar"), ("_rmod_scalar", "_rmodscalar")),
    "pow": (("_power", "_power"), ("_power_scalar", "_powerscalar"),
            ("_rpower_scalar", "_rpower_scalar")),
    "maximum": (("_maximum", "_maximum"), ("_maximum_scalar", "_maximumscalar"),
                ("_maximum_scalar", "_maximumscalar")),
    "minimum": (("_minimum", "_minimum"), ("_minimum_scalar", "_minimumscalar"),
                ("_minimum_scalar", "_minimumscalar")),
    "hypot": (("_hypot", "_hypot"), ("_hypot_scalar", "_hypotscalar"),
              ("_hypot_scalar", "_hypotscalar")),
}
for _cmp, _flip in (("equal", "equal"), ("not_equal", "not_equal"), ("greater", "lesser"),
                    ("greater_equal", "lesser_equal"), ("lesser", "greater"),
                    ("lesser_equal", "greater_equal")):
    _OPS[_cmp] = ((f"_{_cmp}", f"_{_cmp}"), (f"_{_cmp}_scalar", f"_{_cmp}_scalar"),
                  (f"_{_flip}_scalar", f"_{_flip}_scalar"))


def binary(kind, lhs, rhs, reflected=False, scalars=Number):
    """``lhs <kind> rhs`` for a Symbol ``lhs`` (``rhs <kind> lhs`` when ``reflected``)."""
    with_symbol, with_scalar, scalar_first = _OPS[kind]
    if isinstance(rhs, Arithmetic):
        op, hint = with_symbol
        return _create.apply(op, hint, [rhs, lhs] if reflected else [lhs, rhs])
    if isinstance(rhs, scalars):
        op, hint = scalar_first if reflected else with_scalar
        return _create.apply(op, hint, [lhs], scalar=rhs)
    raise TypeError(f"type {type(rhs).__name__} not supported with a Symbol (use a Symbol or "
                    f"a number)")


def _op(kind, reflected=False, scalars=Number):
    def method(self, other):
        return binary(kind, self, other, reflected, scalars)
    return method


def _inplace(name, symbol):
    def method(self, other):
        raise NotImplementedForSymbol(method, symbol, other)
    method.__name__ = name
    return method


class Arithmetic:
    """The arithmetic and comparison operators of Symbol."""

    __slots__ = ()
    __array_priority__ = 1000.0      # numpy defers reflected operators to us

    __add__, __radd__ = _op("add"), _op("add")
    __sub__, __rsub__ = _op("sub"), _op("sub", reflected=True)
    __mul__, __rmul__ = _op("mul"), _op("mul")
    __truediv__, __rtruediv__ = _op("div"), _op("div", reflected=True)
    __mod__, __rmod__ = _op("mod"), _op("mod", reflected=True)
    __pow__, __rpow__ = _op("pow"), _op("pow", reflected=True)
    __eq__, __ne__ = _op("equal", scalars=numeric_types), _op("not_equal", scalars=numeric_types)
    __gt__ = _op("greater", scalars=numeric_types)
    __ge__ = _op("greater_equal", scalars=numeric_types)
    __lt__ = _op("lesser", scalars=numeric_types)
    __le__ = _op("lesser_equal", scalars=numeric_types)
    __iadd__, __isub__ = _inplace("__iadd__", "+="), _inplace("__isub__", "-=")
    __imul__, __itruediv__ = _inplace("__imul__", "*="), _inplace("__itruediv__", "/=")
    __hash__ = None                  # == builds a symbol, so symbols are unhashable (MXNet's)

    def __neg__(self):
        return binary("mul", self, -1.0)

    def __abs__(self):
        return self.abs()
