"""Elementwise and broadcast binary ops, ``add_n`` and ``where``.

``_MATH`` rows are ``name: (forward, d/dlhs, d/drhs)``, each ``fn(xp, a, b)`` (forwards
mostly ``Ufunc`` rows, written straight into the output; integer division truncates, and
an integer zero divisor is an error, where MXNet gives INT_MIN).
Every row becomes ``broadcast_<name>`` (MXNet broadcasting: shapes aligned
on the right, each axis equal or 1) and ``_<name>`` / ``elemwise_<name>``
(equal shapes), each with a ``_backward_*`` op that multiplies the output
gradient by the partial derivatives and sums them back to the input shapes
(rows in ``_GRAD2`` give that backward op a gradient built from forward ops,
so add, sub, mul and div have second order too).
``_LOGIC`` rows (comparisons and logical ops) give 0/1 in the input dtype
and zero gradients.
"""

from __future__ import annotations

from opsdk import (CloneGradient, ElemwiseGradUseIn, ElemwiseGradUseNone, ElemwiseShape,
                   ElemwiseType, Field, MakeZeroGradNodes, NodeEntry, Param, ShapeError,
                   make_node, register_op)
from opsdk.shape import shape_known

from ._common import (OpsGrad, Ufunc, call, check_outs, forward_compute, mod, mod_grads, put,
                      refuse_zero_divisor, sum_to)


def _pow(xp, a, b):
    if a.dtype.kind == "f" or b.dtype.kind == "f":
        return xp.power(a, b)
    return xp.float_power(a, b)      # integer ** negative integer is an error in numpy


_MATH = {
    "add": (Ufunc("add"), lambda xp, a, b: 1, lambda xp, a, b: 1),
    "sub": (Ufunc("subtract"), lambda xp, a, b: 1, lambda xp, a, b: -1),
    "mul": (Ufunc("multiply"), lambda xp, a, b: b, lambda xp, a, b: a),
    "div": (Ufunc("true_divide"), lambda xp, a, b: 1 / b, lambda xp, a, b: -a / (b * b)),
    "mod": (mod, lambda xp, a, b: mod_grads(xp, a, b)[0],
            lambda xp, a, b: mod_grads(xp, a, b)[1]),
    "power": (_pow, lambda xp, a, b: b * _pow(xp, a, b - 1),
              lambda xp, a, b: _pow(xp, a, b) * xp.log(a)),
    "maximum": (Ufunc("maximum"), lambda xp, a, b: a >= b,
                lambda xp, a, b: a < b),
    "minimum": (Ufunc("minimum"), lambda xp, a, b: a <= b,
                lambda xp, a, b: a > b),
    "hypot": (Ufunc("hypot"), lambda xp, a, b: a / xp.hypot(a, b),
              lambda xp, a, b: b / xp.hypot(a, b)),
}
_IDENTITY = {"add": (0, 1), "sub": (0,)}   # backward outputs equal to the output gradient
# Equal-shape rows whose backward reads only the output gradient (MXNet's
# ElemwiseGradUseNone): the inputs need not live until backward. name: the rhs gradient.
_USE_NONE = {"add": lambda og: og, "sub": lambda og: -og}
_LOGIC = {
    "equal": lambda xp, a, b: a == b,
    "not_equal": lambda xp, a, b: a != b,
    "greater": lambda xp, a, b: a > b,
    "greater_equal": lambda xp, a, b: a >= b,
    "lesser": lambda xp, a, b: a < b,
    "lesser_equal": lambda xp, a, b: a <= b,
    "logical_and": lambda xp, a, b: (a != 0) & (b != 0),
    "logical_or": lambda xp, a, b: (a != 0) | (b != 0),
    "logical_xor": lambda xp, a, b: (a != 0) ^ (b != 0),
}
# The equal-shape op of each row and its MXNet aliases.
_ELEMWISE = {"add": ("elemwise_add", ("_add", "_plus", "_Plus")),
             "sub": ("elemwise_sub", ("_sub", "_minus", "_Minus")),
             "mul": ("elemwise_mul", ("_mul", "_Mul")),
             "div": ("elemwise_div", ("_div", "_Div"))}


def _sum_to(v, a, b, k):
    """``v`` (of the broadcast shape of ``a`` and ``b``) summed back to the shape of input
    ``k`` of a broadcast op, by the (differentiable) ``_backward_broadcast_add``."""
    return NodeEntry(make_node("_backward_broadcast_add", [v, a, b]), k, 0)


def _broadcast_mul_grad2(p, h0, h1, og, a, b, ga, gb):
    """Gradient of ``(sum_to(og * b, a), sum_to(og * a, b))`` given ``h0``, ``h1``."""
    return (call("broadcast_add", call("broadcast_mul", h0, b), call("broadcast_mul", h1, a)),
            _sum_to(call("broadcast_mul", h1, og), a, b, 0),
            _sum_to(call("broadcast_mul", h0, og), a, b, 1))


def _broadcast_div_grad2(p, h0, h1, og, a, b, ga, gb):
    """Gradient of ``(sum_to(og / b, a), sum_to(-og * a / b**2, b))`` given ``h0``, ``h1``."""
    r, t = call("broadcast_div", a, b), call("broadcast_div", call("broadcast_div", og, b), b)
    h1r = call("broadcast_mul", h1, r)
    return (call("broadcast_div", call("broadcast_sub", h0, h1r), b),
            _sum_to(call("negative", call("broadcast_mul", h1, t)), a, b, 0),
            _sum_to(call("broadcast_mul", t, call("broadcast_sub", call(
                "_mul_scalar", h1r, params={"scalar": 2}), h0)), a, b, 1))


# FGradient of _backward_<row> and _backward_broadcast_<row> (inputs og, lhs, rhs; head
# gradients h0, h1; broadcast ops serve the equal-shape case too).
_GRAD2 = {
    "add": OpsGrad(lambda p, h0, h1, og, a, b, ga, gb: (call("broadcast_add", h0, h1),
                                                        None, None)),
    "sub": OpsGrad(lambda p, h0, h1, og, a, b, ga, gb: (call("broadcast_sub", h0, h1),
                                                        None, None)),
    "mul": OpsGrad(_broadcast_mul_grad2),
    "div": OpsGrad(_broadcast_div_grad2),
}
_BROADCAST_ALIASES = {"add": ("broadcast_plus",), "sub": ("broadcast_minus",)}
_INPLACE = lambda params: [(0, 0), (1, 0)]  # noqa: E731


def broadcast_shape(op, a, b):
    """The broadcast result of shapes ``a`` and ``b``; ShapeError naming ``op`` otherwise."""
    n = max(len(a), len(b))
    a1, b1 = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(a1, b1):
        if x != y and x != 1 and y != 1:
            raise ShapeError(f"Operator {op!r}: operands with shapes {tuple(a)} and {tuple(b)} "
                             f"cannot be broadcast together (each axis must match or be 1)")
        out.append(y if x == 1 else x)
    return tuple(out)


def _broadcast_infer(op):
    def infer(params, ins, outs):
        lhs, rhs = ins
        if lhs is None or rhs is None:
            return list(ins), list(outs)
        return list(ins), check_outs(op, outs, [broadcast_shape(op, lhs, rhs)])
    return infer


def _backward(dl, dr):
    def compute(ctx, inputs, req, outputs, params):
        og, a, b = inputs
        xp = ctx.xp
        if req[0]:
            put(outputs[0], req[0], sum_to(_scaled(og, dl(xp, a, b)), a.shape))
        if req[1]:
            put(outputs[1], req[1], sum_to(_scaled(og, dr(xp, a, b)), b.shape))
    return compute


def _scaled(og, d):
    """``og * d``, with no pass over ``og`` for the constant derivatives of add and sub."""
    if type(d) is int and d in (1, -1):
        return og if d == 1 else -og
    return og * d


def _backward_shape(op):
    """Gradients take the shapes of the forward inputs (inputs 1 and 2)."""
    def infer(params, ins, outs):
        ins = list(ins)
        ins[1] = ins[1] if ins[1] is not None else outs[0]
        ins[2] = ins[2] if ins[2] is not None else outs[1]
        return ins, check_outs(op, outs, ins[1:])
    return infer


def _backward_type(params, ins, outs):
    t = next((x for x in list(ins) + list(outs) if x is not None), None)
    return [t] * 3, [t, t]


def _binary(name, compute, shape, grad, doc, aliases=()):
    b = (register_op(name).describe(doc).set_num_inputs(2).set_num_outputs(1)
         .set_attr("FInferShape", shape).set_attr("FInferType", ElemwiseType(2, 1))
         .set_attr("FInplaceOption", _INPLACE).set_attr("FCompute<cpu>", compute)
         .set_attr("FGradient", grad)
         .add_argument("lhs", "NDArray-or-Symbol", "First input.")
         .add_argument("rhs", "NDArray-or-Symbol", "Second input."))
    for alias in aliases:
        b.add_alias(alias)


def _register_backward(name, dl, dr, grad=None, identity=()):
    """``identity``: the outputs that are the output gradient itself when their shape is
    the output's (add's both, sub's lhs); the frontend then aliases it, with no copy."""
    b = (register_op(name).set_num_inputs(3).set_num_outputs(2)
         .set_attr("FInferShape", _backward_shape(name)).set_attr("FInferType", _backward_type)
         .set_attr("FCompute<cpu>", _backward(dl, dr)))
    if grad is not None:
        b.set_attr("FGradient", grad)
    if identity:
        pairs = [(0, o) for o in identity]
        b.set_attr("FInplaceOption", lambda p: pairs)
        b.set_attr("FInplaceIdentity", lambda p: [True] * len(pairs))


def _register_backward_use_none(name, row, rhs):
    """The backward of equal-shape add/sub: reads only the output gradient ``og``; the lhs
    gradient is ``og`` itself (aliased, never written, where the frontend can), the rhs
    gradient ``rhs(og)``; its gradient is ``h0 + h1`` (add) or ``h0 - h1`` (sub)."""
    def compute(ctx, inputs, req, outputs, params):
        og = inputs[0]
        if req[0]:
            put(outputs[0], req[0], og)
        if req[1]:
            put(outputs[1], req[1], rhs(og))

    def grad(node, out_grads):
        return [call(f"elemwise_{row}", *out_grads)]
    (register_op(name).set_num_inputs(1).set_num_outputs(2)
     .set_attr("FInferShape", ElemwiseShape(1, 2)).set_attr("FInferType", ElemwiseType(1, 2))
     .set_attr("FCompute<cpu>", compute).set_attr("FGradient", grad)
     .set_attr("FInplaceOption", lambda p: [(0, 0)])
     .set_attr("FInplaceIdentity", lambda p: [True]))


for _row, (_fwd, _dl, _dr) in _MATH.items():
    _eq_name, _eq_aliases = _ELEMWISE.get(_row, (f"_{_row}", (f"_{_row.capitalize()}",)))
    for _name, _bw, _shape, _aliases in (
            (f"broadcast_{_row}", f"_backward_broadcast_{_row}", None,
             _BROADCAST_ALIASES.get(_row, ())),
            (_eq_name, f"_backward_{_row}", ElemwiseShape(2, 1), _eq_aliases)):
        if _shape is not None and _row in _USE_NONE:
            _register_backward_use_none(_bw, _row, _USE_NONE[_row])
            rule = ElemwiseGradUseNone(_bw)
        else:
            _register_backward(_bw, _dl, _dr, _GRAD2.get(_row), _IDENTITY.get(_row, ()))
            rule = ElemwiseGradUseIn(_bw)
        _compute = forward_compute(_fwd)
        if _row == "div":
            _compute = refuse_zero_divisor(_name, _compute, 1, "rhs")
        _binary(_name, _compute, _shape or _broadcast_infer(_name), rule,
                f"Elementwise {_row} of lhs and rhs"
                + (" with broadcasting." if _shape is None else " (equal shapes)."), _aliases)

# MXNet names elemwise_add's output (the names AMP's casts get: "_plus0_output_amp_cast_...")
register_op("elemwise_add").set_attr("FListOutputNames", lambda p: ["output"])

for _row, _fwd in _LOGIC.items():
    _binary(f"broadcast_{_row}", forward_compute(_fwd), _broadcast_infer(f"broadcast_{_row}"),
            MakeZeroGradNodes, f"lhs {_row} rhs with broadcasting, as 1/0 in the input dtype.")
    _binary(f"_{_row}", forward_compute(_fwd), ElemwiseShape(2, 1), MakeZeroGradNodes,
            f"lhs {_row} rhs (equal shapes), as 1/0 in the input dtype.",
            ("_" + "_".join(w.capitalize() for w in _row.split("_")),))


# -- add_n ---------------------------------------------------------------------------------
class AddNParam(Param):
    num_args: int = Field(ge=1, description="How many arrays are added.")


def _add_n(ctx, inputs, req, outputs, params):
    total = inputs[0] + inputs[1] if len(inputs) > 1 else inputs[0]
    for x in inputs[2:]:
        total += x
    put(outputs[0], req[0], total)


(register_op("add_n").add_alias("ElementWiseSum")
 .describe("Elementwise sum of any number of equally shaped arrays: a1 + ... + an.")
 .set_attr_parser(AddNParam)
 .set_num_inputs(lambda p: p.num_args)
 .set_attr("FListInputNames", lambda p: [f"arg{i}" for i in range(p.num_args)])
 .set_attr("key_var_num_args", "num_args")
 .set_attr("FCompute<cpu>", _add_n)
 .set_attr("FInplaceOption", lambda p: [(0, 0)])
 .set_attr("FInferShape", ElemwiseShape(-1, 1))
 .set_attr("FInferType", ElemwiseType(-1, 1))
 .set_attr("FGradient", CloneGradient("_backward_add_n"))
 .add_argument("args", "NDArray-or-Symbol[]", "The arrays to add, num_args of them."))


# -- where ---------------------------------------------------------------------------------
def _cond_view(cond, ndim):
    """A 1-D condition selects whole rows: shape (n,) -> (n, 1, ..., 1)."""
    return cond.reshape(cond.shape + (1,) * (ndim - cond.ndim))


def _where(ctx, inputs, req, outputs, params):
    cond, x, y = inputs
    put(outputs[0], req[0], ctx.xp.where(_cond_view(cond, x.ndim) != 0, x, y))


def _where_shape(params, ins, outs):
    cond, x, y = ins
    if not shape_known(cond):       # as MXNet: nothing is inferred before the condition is
        return list(ins), list(outs)
    ins, outs = ElemwiseShape(2, 1, "where")(params, [x, y], outs)
    x = ins[0]
    if cond is not None and x is not None and tuple(cond) != x and \
            not (len(cond) == 1 and len(x) >= 1 and cond[0] == x[0]):
        raise ShapeError(f"Operator 'where': condition has shape {tuple(cond)}; expected the "
                         f"shape of x, {x}, or ({x[0] if x else '?'},) to select rows")
    return [cond] + ins, outs


def _where_type(params, ins, outs):
    new_ins, outs = ElemwiseType(2, 1, "where")(params, ins[1:], outs)
    return [ins[0]] + new_ins, outs


def _where_grad(node, out_grads):
    n = make_node("_backward_where", [out_grads[0], node.inputs[0]],
                  name=f"{node.name}_backward")
    zero = make_node("zeros_like", [node.inputs[0]], name=f"{node.name}_cond_backward")
    return [NodeEntry(zero, 0, 0), NodeEntry(n, 0, 0), NodeEntry(n, 1, 0)]


def _where_backward(ctx, inputs, req, outputs, params):
    og, cond = inputs
    pick = _cond_view(cond, og.ndim) != 0
    put(outputs[0], req[0], ctx.xp.where(pick, og, 0))
    put(outputs[1], req[1], ctx.xp.where(pick, 0, og))


def _where_backward_shape(params, ins, outs):
    s = ins[0] if ins[0] is not None else next((o for o in outs if o is not None), None)
    return [s, ins[1]], check_outs("_backward_where", outs, [s, s])


def _where_backward_type(params, ins, outs):
    t = ins[0] if ins[0] is not None else next((o for o in outs if o is not None), None)
    return [t, ins[1]], [t, t]


(register_op("where")
 .describe("Takes x where condition is nonzero, else y. A 1-D condition selects rows of x/y.")
 .set_num_inputs(3).set_num_outputs(1)
 .set_attr("FInferShape", _where_shape).set_attr("FInferType", _where_type)
 .set_attr("FCompute<cpu>", _where).set_attr("FGradient", _where_grad)
 .add_argument("condition", "NDArray-or-Symbol", "Selector: nonzero picks x, zero picks y.")
 .add_argument("x", "NDArray-or-Symbol", "Values taken where condition is nonzero.")
 .add_argument("y", "NDArray-or-Symbol", "Values taken where condition is zero."))
(register_op("_backward_where").set_num_inputs(2).set_num_outputs(2)
 .set_attr("FInferShape", _where_backward_shape).set_attr("FInferType", _where_backward_type)
 .set_attr("FCompute<cpu>", _where_backward))


# -- conformance examples (opsdk.testing "TExamples") --------------------------------------
_RHS_POSITIVE = {"div": [(-1, 1), (0.5, 2)], "mod": [(-1, 1), (0.5, 2)],
                 "power": [(0.5, 2), (-1, 1)]}
_INT = {"dtype": "int32", "domain": [(-9, 9), (1, 9)], "grad": False}
for _row in list(_MATH) + list(_LOGIC):
    _dom = _RHS_POSITIVE.get(_row, [(-1, 1), (-1, 1)])
    _same = [{"domain": _dom}, {"inputs": [(3,), (3,)], **_INT}]
    _eq_name = _ELEMWISE.get(_row, (f"_{_row}",))[0]
    register_op(_eq_name).set_attr("TExamples", _same)
    register_op(f"broadcast_{_row}").set_attr("TExamples", _same + [
        {"inputs": [(2, 3), (1, 3)], "domain": _dom},
        {"inputs": [(2, 1, 3), (4, 1)], "domain": _dom},
        {"inputs": [(3, 1), (1, 3)], **_INT}])
    if _row in _MATH:
        register_op(f"_backward_{_row}").set_attr("TExamples", [
            {"inputs": [(2, 3)]} if _row in _USE_NONE else
            {"inputs": [(2, 3)] * 3, "domain": [(-1, 1)] + list(_dom)}])
        register_op(f"_backward_broadcast_{_row}").set_attr(
            "TExamples", [{"inputs": [(2, 3), (2, 3), (1, 3)], "domain": [(-1, 1)] + list(_dom)}])
register_op("add_n").set_attr("TExamples", [
    {"inputs": [(2, 3)] * 3, "params": {"num_args": 3}},
    {"inputs": [(4,)], "params": {"num_args": "1"}},
    {"inputs": [(2, 2)] * 2, "params": {"num_args": 2}, **_INT, "domain": (-9, 9)}])
register_op("where").set_attr("TExamples", [
    {"inputs": [(2, 3)] * 3, "dtype": ["int32", "float32", "float32"],
     "domain": [(0, 2), (-1, 1), (-1, 1)]},
    {"inputs": [(2,), (2, 3), (2, 3)], "domain": [(0, 1), (-1, 1), (-1, 1)], "grad": [1, 2]}])
register_op("_backward_where").set_attr("TExamples", [{"inputs": [(2, 3), (2,)]}])
