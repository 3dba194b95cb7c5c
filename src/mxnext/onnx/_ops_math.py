"""Converters for elementwise arithmetic (tensor, broadcast and scalar forms), unary
functions, comparisons and reductions."""

from __future__ import annotations

import numpy as np

from ._table import converts

_BINARY = {
    "Add": "elemwise_add _plus _Plus broadcast_add broadcast_plus _grad_add",
    "Sub": "elemwise_sub _minus _Minus broadcast_sub broadcast_minus",
    "Mul": "elemwise_mul _mul _Mul broadcast_mul",
    "Div": "elemwise_div _div _Div broadcast_div",
    "Pow": "_power _Power broadcast_power",
    "Max": "_maximum _Maximum broadcast_maximum",
    "Min": "_minimum _Minimum broadcast_minimum",
}
_COMPARE = {
    "Equal": "_equal broadcast_equal", "Greater": "_greater broadcast_greater",
    "Less": "_lesser broadcast_lesser", "GreaterOrEqual": "_greater_equal broadcast_greater_equal",
    "LessOrEqual": "_lesser_equal broadcast_lesser_equal",
    "NotEqual": "_not_equal broadcast_not_equal",
}
_LOGICAL = {"And": "_logical_and broadcast_logical_and", "Or": "_logical_or broadcast_logical_or",
            "Xor": "_logical_xor broadcast_logical_xor"}
_UNARY = {
    "Abs": "abs", "Neg": "negative", "Exp": "exp", "Log": "log", "Sqrt": "sqrt",
    "Reciprocal": "reciprocal", "Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin",
    "Acos": "arccos", "Atan": "arctan", "Sinh": "sinh", "Cosh": "cosh", "Tanh": "tanh",
    "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh", "Sigmoid": "sigmoid",
    "Relu": "relu", "Floor": "floor", "Ceil": "ceil", "Sign": "sign", "Erf": "erf",
    "Softsign": "softsign",
}


def _register(table, make):
    for onnx_op, names in table.items():
        converts(*names.split())(make(onnx_op))


def _binary(onnx_op):
    def convert(b, n):
        b.add(onnx_op, n.inputs[:2], [n.out])
    return convert


def _compare(onnx_op):
    def convert(b, n):     # MXNet's comparisons give 0/1 in the inputs' dtype
        b.cast(b.add(onnx_op, n.inputs[:2]), n.out_dtypes[0], n.out)
    return convert


def _logical(onnx_op):
    def convert(b, n):
        flags = [b.cast(x, np.bool_) for x in n.inputs[:2]]
        b.cast(b.add(onnx_op, flags), n.out_dtypes[0], n.out)
    return convert


def _unary(onnx_op):
    def convert(b, n):
        b.add(onnx_op, [n.x], [n.out])
    return convert


_register(_BINARY, _binary)
_register(_COMPARE, _compare)
_register(_LOGICAL, _logical)
_register(_UNARY, _unary)


def _scalar(b, n):
    return b.const(float(n.attr("scalar", 0.0)), n.in_dtypes[0], f"{n.name}_scalar")


_SCALAR = {"_plus_scalar": ("Add", False), "_minus_scalar": ("Sub", False),
           "_rminus_scalar": ("Sub", True), "_mul_scalar": ("Mul", False),
           "_div_scalar": ("Div", False), "_rdiv_scalar": ("Div", True),
           "_power_scalar": ("Pow", False), "_rpower_scalar": ("Pow", True),
           "_maximum_scalar": ("Max", False), "_minimum_scalar": ("Min", False)}
_SCALAR_COMPARE = {"_equal_scalar": "Equal", "_not_equal_scalar": "NotEqual",
                   "_greater_scalar": "Greater", "_greater_equal_scalar": "GreaterOrEqual",
                   "_lesser_scalar": "Less", "_lesser_equal_scalar": "LessOrEqual"}


@converts(*_SCALAR)
def scalar_arith(b, n):
    onnx_op, reverse = _SCALAR[n.op]
    pair = [_scalar(b, n), n.x] if reverse else [n.x, _scalar(b, n)]
    b.add(onnx_op, pair, [n.out])


@converts(*_SCALAR_COMPARE)
def scalar_compare(b, n):
    b.cast(b.add(_SCALAR_COMPARE[n.op], [n.x, _scalar(b, n)]), n.out_dtypes[0], n.out)


def _const_like(b, n, value):
    return b.const(value, n.in_dtypes[0])


@converts("square")
def square(b, n):
    b.add("Mul", [n.x, n.x], [n.out])


@converts("rsqrt")
def rsqrt(b, n):
    b.add("Reciprocal", [b.add("Sqrt", [n.x])], [n.out])


@converts("log2", "log10")
def log_base(b, n):
    base = 2.0 if n.op == "log2" else 10.0
    b.add("Div", [b.add("Log", [n.x]), _const_like(b, n, np.log(base))], [n.out])


@converts("log1p")
def log1p(b, n):
    b.add("Log", [b.add("Add", [n.x, _const_like(b, n, 1.0)])], [n.out])


@converts("expm1")
def expm1(b, n):
    b.add("Sub", [b.add("Exp", [n.x]), _const_like(b, n, 1.0)], [n.out])


@converts("logical_not")
def logical_not(b, n):
    b.cast(b.add("Not", [b.cast(n.x, np.bool_)]), n.out_dtypes[0], n.out)


@converts("hard_sigmoid")
def hard_sigmoid(b, n):
    b.add("HardSigmoid", [n.x], [n.out], alpha=float(n.attr("alpha", 0.2)),
          beta=float(n.attr("beta", 0.5)))


@converts("clip")
def clip(b, n):
    b.add("Clip", [n.x, _const_like(b, n, float(n.attr("a_min"))),
                   _const_like(b, n, float(n.attr("a_max")))], [n.out])


@converts("add_n", "ElementWiseSum")
def add_n(b, n):
    b.add("Sum", n.inputs, [n.out])


@converts("where")
def where(b, n):
    b.add("Where", [b.cast(n.x, np.bool_), *n.inputs[1:3]], [n.out])


@converts("smooth_l1")
def smooth_l1(b, n):
    sigma2 = float(n.attr("scalar", 1.0)) ** 2
    ax = b.add("Abs", [n.x])
    small = b.add("Less", [ax, _const_like(b, n, 1.0 / sigma2)])
    quad = b.add("Mul", [b.add("Mul", [n.x, n.x]), _const_like(b, n, 0.5 * sigma2)])
    lin = b.add("Sub", [ax, _const_like(b, n, 0.5 / sigma2)])
    b.add("Where", [small, quad, lin], [n.out])


# -- reductions ----------------------------------------------------------------------------
def _axes(n):
    rank = len(n.in_shapes[0])
    axis = n.attr("axis", None)
    if axis is None or axis == ():
        axes = list(range(rank))
    else:
        axes = [a % rank for a in (axis if isinstance(axis, (tuple, list)) else [axis])]
    if n.attr("exclude", False):
        axes = [a for a in range(rank) if a not in axes]
    return axes


def _reduction(onnx_op):
    def convert(b, n):
        keep = bool(n.attr("keepdims", False))
        axes = _axes(n)
        if not keep and len(axes) == len(n.in_shapes[0]):     # MXNet gives shape (1,)
            b.add("Reshape", [b.reduce(onnx_op, n.x, axes, False), b.ints([1])], [n.out])
        else:
            b.reduce(onnx_op, n.x, axes, keep, n.out)
    return convert


_register({"ReduceSum": "sum sum_axis", "ReduceMean": "mean", "ReduceMax": "max max_axis",
           "ReduceMin": "min min_axis", "ReduceProd": "prod"}, _reduction)


@converts("norm")
def norm(b, n):
    order = int(n.attr("ord", 2))
    _reduction("ReduceL2" if order == 2 else "ReduceL1")(b, n)


@converts("argmax", "argmin")
def argmax(b, n):
    onnx_op = "ArgMax" if n.op == "argmax" else "ArgMin"
    axis, keep = n.attr("axis", None), bool(n.attr("keepdims", False))
    if axis is None:
        flat = b.add("Reshape", [n.x, b.ints([-1])])
        index = b.add(onnx_op, [flat], axis=0, keepdims=1)
    else:
        index = b.add(onnx_op, [n.x], axis=axis, keepdims=int(keep))
    b.cast(index, n.out_dtypes[0], n.out)     # MXNet gives the index as a float


def _floor_mod(b, a, c, out):
    """a - floor(a / c) * c: MXNet's mod, whose result takes the divisor's sign."""
    floor = b.add("Floor", [b.add("Div", [a, c])])
    b.add("Sub", [a, b.add("Mul", [floor, c])], [out])


@converts("broadcast_mod", "_mod")
def mod(b, n):
    _floor_mod(b, n.inputs[0], n.inputs[1], n.out)


@converts("_mod_scalar", "_rmod_scalar")
def mod_scalar(b, n):
    pair = [n.x, _scalar(b, n)] if n.op == "_mod_scalar" else [_scalar(b, n), n.x]
    _floor_mod(b, *pair, n.out)


@converts("_contrib_div_sqrt_dim")
def div_sqrt_dim(b, n):
    b.add("Div", [n.x, _const_like(b, n, np.sqrt(n.in_shapes[0][-1]))], [n.out])
