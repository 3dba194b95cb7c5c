"""The scalar family (``_plus_scalar`` ...): ``data <op> scalar`` elementwise.

Rows are ``name: (forward, gradient)`` with ``forward(xp, x, s)``. The
gradient is ``ZERO``, ``(IN, d)`` with ``d(xp, x, s)`` the derivative (a
``_backward_<op>`` node computes ``out_grad * d`` from the input; first order
only), ``(IN, d, d2)`` (the same with second order, ``d2`` as in
``backward_grad``), or an ``OpsGrad`` built from forward ops (second order too).

Types follow MXNet 1.9: the result keeps the input dtype; with an integer
input the scalar is truncated to an integer unless ``is_int=False``, in which
case the result is float64 (booleans give int64).
"""

from __future__ import annotations

import numpy as np
from opsdk import (ElemwiseGradUseIn, ElemwiseShape, Field, MakeZeroGradNodes, MXNetError,
                   Param, TypeInferError, register_op)

from ._common import (IN, INPLACE_0, OpsGrad, Ufunc, backward_grad, call, mod, mod_grads, mul, put,
                      put_ufunc, refuse_zero_divisor)

ZERO = MakeZeroGradNodes


class ScalarParam(Param):
    scalar: float = Field(1.0, description="The number combined with every element.")
    is_int: bool = Field(True, description="The scalar counts as an integer: with integer data "
                                           "it is truncated and the dtype kept; False gives a "
                                           "float64 result.")


def _via(op_name, with_params=False):
    """Gradient ``op_name(out_grad)``, with the forward params when ``with_params``."""
    return OpsGrad(lambda p, g, x, y: call(op_name, g, params=p if with_params else None))


def _pow(xp, a, b):
    if getattr(a, "dtype", np.dtype(type(a))).kind in "iub" and \
            getattr(b, "dtype", np.dtype(type(b))).kind in "iub":
        return xp.float_power(a, b)      # integer ** negative integer is an error in numpy
    return xp.power(a, b)


def _rdiv_d2(p, u, x):
    """``u * 2s / x**3``, the derivative of ``-s / x**2``."""
    return mul(u, call("_rdiv_scalar", call("_power_scalar", x, params={"scalar": 3}),
                       params={"scalar": 2 * p.scalar, "is_int": p.is_int}))


def _power_d2(p, u, x):
    """``u * s (s - 1) x**(s - 2)``, the derivative of ``s x**(s - 1)``."""
    s = p.scalar
    return mul(u, call("_mul_scalar", call("_power_scalar", x, params={"scalar": s - 2}),
                       params={"scalar": s * (s - 1)}))


_OPS = {
    "_plus_scalar": (Ufunc("add"), _via("_copy")),
    "_minus_scalar": (Ufunc("subtract"), _via("_copy")),
    "_rminus_scalar": (Ufunc("subtract", reverse=True), _via("negative")),
    "_mul_scalar": (Ufunc("multiply"), _via("_mul_scalar", with_params=True)),
    "_div_scalar": (Ufunc("true_divide"), _via("_div_scalar", with_params=True)),
    "_rdiv_scalar": (Ufunc("true_divide", reverse=True), (IN, lambda xp, x, s: -s / (x * x),
                                                          _rdiv_d2)),
    "_mod_scalar": (mod, (IN, lambda xp, x, s: mod_grads(xp, x, s)[0])),
    "_rmod_scalar": (lambda xp, x, s: mod(xp, s, x), (IN, lambda xp, x, s: mod_grads(xp, s, x)[1])),
    "_power_scalar": (lambda xp, x, s: _pow(xp, x, s),
                      (IN, lambda xp, x, s: s * _pow(xp, x, s - 1), _power_d2)),
    "_rpower_scalar": (lambda xp, x, s: _pow(xp, s, x),
                       (IN, lambda xp, x, s: _pow(xp, s, x) * np.log(s))),
    "_maximum_scalar": (Ufunc("maximum"), (IN, lambda xp, x, s: x >= s)),
    "_minimum_scalar": (Ufunc("minimum"), (IN, lambda xp, x, s: x <= s)),
    "_hypot_scalar": (Ufunc("hypot"), (IN, lambda xp, x, s: x / xp.hypot(x, s))),
    "_equal_scalar": (lambda xp, x, s: x == s, ZERO),
    "_not_equal_scalar": (lambda xp, x, s: x != s, ZERO),
    "_greater_scalar": (lambda xp, x, s: x > s, ZERO),
    "_greater_equal_scalar": (lambda xp, x, s: x >= s, ZERO),
    "_lesser_scalar": (lambda xp, x, s: x < s, ZERO),
    "_lesser_equal_scalar": (lambda xp, x, s: x <= s, ZERO),
    "_logical_and_scalar": (lambda xp, x, s: (x != 0) & (s != 0), ZERO),
    "_logical_or_scalar": (lambda xp, x, s: (x != 0) | (s != 0), ZERO),
    "_logical_xor_scalar": (lambda xp, x, s: (x != 0) ^ (s != 0), ZERO),
}


def _scalar_of(x, params):
    s = params.scalar
    return int(s) if params.is_int and x.dtype.kind in "iub" else s


def _result_type(params, t):
    t = np.dtype(t)
    if t.kind in "iub" and not params.is_int:
        return np.dtype(np.float64)
    return np.dtype(np.int64) if t.kind == "b" else t


def scalar_type(op):
    def infer(params, ins, outs):
        if ins[0] is None:
            return list(ins), list(outs)
        t = _result_type(params, ins[0])
        if outs[0] is not None and np.dtype(outs[0]) != t:
            raise TypeInferError(f"Operator {op!r}: output dtype {np.dtype(outs[0])}, expected "
                                 f"{t} (input {np.dtype(ins[0])}, is_int={params.is_int})")
        return list(ins), [t]
    return infer


_scalars: dict = {}           # (value, made integer, output dtype) -> numpy scalar


def _scalar(params, x, out):
    """The scalar as ``_scalar_of`` gives it, as a numpy scalar of the output dtype, made once:
    numpy takes a numpy scalar 0.4 us faster than a Python float (a quarter of a tiny
    ``a + 1``'s kernel time), with the same result."""
    key = (params.scalar, params.is_int and x.dtype.kind in "iub", out.dtype)
    s = _scalars.get(key)
    if s is None:
        if len(_scalars) >= 4096:
            _scalars.clear()
        s = _scalars[key] = out.dtype.type(int(key[0]) if key[1] else key[0])
    return s


def scalar_forward(fwd):
    """FCompute of a row, one Python call deep for ``Ufunc`` rows (``a + 1``)."""
    if not isinstance(fwd, Ufunc):
        def compute(ctx, inputs, req, outputs, params):
            x = inputs[0]
            put(outputs[0], req[0], fwd(ctx.xp, x, _scalar_of(x, params)))
        return compute
    name, reverse = fwd.name, fwd.reverse

    def compute(ctx, inputs, req, outputs, params):
        x, out, r = inputs[0], outputs[0], req[0]
        s = _scalar(params, x, out)
        args = (s, x) if reverse else (x, s)
        if r == 1 or r == 2:
            getattr(ctx.xp, name)(*args, out=out, casting="unsafe")
        elif r:
            put(out, r, getattr(ctx.xp, name)(*args))
    return compute


def _refuse_zero_scalar(compute):
    """``_div_scalar``'s ``compute``, refusing a scalar that truncates to 0 for integer data
    (MXNet gives INT_MIN)."""
    def checked(ctx, inputs, req, outputs, params):
        x = inputs[0]
        if params.is_int and x.dtype.kind in "iub" and int(params.scalar) == 0:
            raise MXNetError(f"Operator '_div_scalar': integer division by zero: scalar "
                             f"{params.scalar:g} is 0 as an integer for {x.dtype} data; cast "
                             f"to a float dtype (or pass is_int=False) for inf/nan results")
        compute(ctx, inputs, req, outputs, params)
    return checked


_CHECKS = {"_div_scalar": _refuse_zero_scalar,
           "_rdiv_scalar": lambda c: refuse_zero_divisor("_rdiv_scalar", c, 0, "data")}


def _backward(deriv):
    def compute(ctx, inputs, req, outputs, params):
        og, x = inputs
        put_ufunc(outputs[0], req[0], ctx.xp.multiply, og,
                  deriv(ctx.xp, x, _scalar_of(x, params)))
    return compute


def _backward_type(params, ins, outs):
    t = next((v for v in (ins[0], outs[0]) if v is not None), None)
    return [t, ins[1]], [t]


_BACKWARD = set()
for _name, (_fwd, _grad) in _OPS.items():
    if isinstance(_grad, tuple):
        _bw = "_backward" + _name
        _BACKWARD.add(_bw)
        _b = (register_op(_bw).set_attr_parser(ScalarParam).set_num_inputs(2).set_num_outputs(1)
              .set_attr("FInferShape", ElemwiseShape(2, 1)).set_attr("FInferType", _backward_type)
              .set_attr("FInplaceOption", INPLACE_0).set_attr("FCompute<cpu>", _backward(_grad[1])))
        if len(_grad) == 3:
            _b.set_attr("FGradient", backward_grad(_bw, _grad[2]))
        _grad = ElemwiseGradUseIn(_bw)
    (register_op(_name).describe(f"Elementwise {_name.strip('_').replace('_', ' ')} of data "
                                 f"and a scalar.")
     .set_attr_parser(ScalarParam).set_num_inputs(1).set_num_outputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FInferType", scalar_type(_name))
     .set_attr("FInplaceOption", INPLACE_0)
     .set_attr("FCompute<cpu>", _CHECKS.get(_name, lambda c: c)(scalar_forward(_fwd)))
     .set_attr("FGradient", _grad)
     .add_argument("data", "NDArray-or-Symbol", "The array operand."))


# -- conformance examples (opsdk.testing "TExamples") --------------------------------------
_INT = {"dtype": "int32", "domain": (-9, 9), "grad": False}
_POSITIVE = ("_rdiv_scalar", "_rmod_scalar", "_power_scalar")
# integer data truncates the scalar 2.5 of the first example to 2 (is_int)
_INT_REFS = {"_power_scalar": lambda x, scalar: x ** int(scalar),
             "_rmod_scalar": lambda x, scalar: np.mod(int(scalar), x)}
for _name in _OPS:
    if _name in _POSITIVE:
        _ex = [{"params": {"scalar": 2.5}, "domain": (0.5, 2.0)},
               {"params": {"scalar": 3}, **_INT, "domain": (1, 9)}]
    else:
        _ex = [{"params": {"scalar": 2.5}}, {"params": {"scalar": "3", "is_int": "True"}, **_INT},
               {"params": {"scalar": 1.5, "is_int": False}, **_INT}]
    if _name in _INT_REFS:
        _ex[0]["int_ref"] = _INT_REFS[_name]
    register_op(_name).set_attr("TExamples", _ex)
    if _name in ("_div_scalar", "_rdiv_scalar"):     # integer division truncates
        register_op(_name).set_attr("TTruncatesIntegers", True)
    if "_backward" + _name in _BACKWARD:
        register_op("_backward" + _name).set_attr("TExamples", _ex[:1])
