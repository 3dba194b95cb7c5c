"""Helpers shared by the elementwise, broadcast, scalar and reduction op tables."""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from opsdk import MXNetError, NodeEntry, assign, make_node
from opsdk.shape import merge_shape
from pydantic import BeforeValidator

IN, OUT = "in", "out"          # what a backward op reads besides the output gradient
INPLACE_0 = lambda params: [(0, 0)]  # noqa: E731  (MXNet's FInplaceOption {{0, 0}})


def put(out, req, value) -> None:
    """``assign`` after casting ``value`` to ``out``'s dtype (MXNet keeps the input dtype,
    so float math on integer inputs is truncated back, comparisons become 0/1)."""
    if req:
        if getattr(value, "dtype", out.dtype) != out.dtype:
            value = value.astype(out.dtype)
        assign(out, req, value)


def put_ufunc(out, req, ufunc, *args) -> None:
    """``put(out, req, ufunc(*args))`` with no temporary when overwriting: the ufunc writes
    straight into ``out`` (the unsafe cast truncates as ``put`` does)."""
    if req == 1 or req == 2:
        ufunc(*args, out=out, casting="unsafe")
    elif req:
        put(out, req, ufunc(*args))


class Ufunc:
    """A forward table row computed by ``xp.<name>(*inputs, *consts)`` (inputs reversed with
    ``reverse``), written straight into the output."""

    __slots__ = ("name", "consts", "reverse")

    def __init__(self, name, *consts, reverse=False):
        self.name, self.consts, self.reverse = name, consts, reverse

    def __call__(self, xp, *inputs):
        return getattr(xp, self.name)(*self._args(inputs))

    def _args(self, inputs):
        return (inputs[::-1] if self.reverse else inputs) + self.consts


def mod(xp, a, b):
    """MXNet's ``mod``: the floored remainder (the sign of ``b``), 0 where ``b`` is 0 (numpy
    gives NaN there for floats)."""
    r = xp.mod(a, b)
    return xp.where(xp.equal(b, 0), r.dtype.type(0), r)


def refuse_zero_divisor(op, compute, pos, what):
    """``compute`` of division op ``op``, refusing an integer input ``pos`` (``what``: its
    name) holding a zero: C gives no value there, numpy's true_divide gives inf, cast to
    INT_MIN, and MXNet returns that silently."""
    def checked(ctx, inputs, req, outputs, params):
        d = inputs[pos]
        if d.dtype.kind in "iub" and not d.all():
            n = d.size - int(ctx.xp.count_nonzero(d))
            raise MXNetError(f"Operator {op!r}: integer division by zero: {what} ({d.dtype}, "
                             f"shape {tuple(d.shape)}) has {n} zero element{'s' * (n != 1)}; "
                             f"cast to a float dtype for inf/nan results")
        compute(ctx, inputs, req, outputs, params)
    return checked


def mod_grads(xp, a, b):
    """MXNet's ``mod_grad`` and ``mod_rgrad``: 1 and ``-floor(a / b)`` for floating dtypes,
    0 and 0 for integer ones (``a`` or ``b`` may be a scalar)."""
    if np.result_type(a, b).kind != "f":
        return 0, 0
    return 1, -xp.floor(a / b)


_NARROW_FLOATS = (np.dtype(np.float16), np.dtype(np.float32))


class WideUfunc(Ufunc):
    """A one-input ``Ufunc`` row evaluated as ``wide`` does."""

    __slots__ = ()


def wide(xp, name, x):
    """``xp.<name>(x)``, float16 and float32 inputs evaluated in float64 and rounded once to
    float32 (float16 then rounds that float32 result, as MXNet's half kernels round the float
    result). MXNet's CPU kernels call C's expf, logf, ...; expf and logf are correctly rounded
    on all but a fraction of a percent of inputs, while numpy's own float32 loops are an ulp
    off on about a third of them (exp(1) is)."""
    if x.dtype not in _NARROW_FLOATS:
        return getattr(xp, name)(x)
    return getattr(xp, name)(x, dtype=np.float64).astype(np.float32).astype(x.dtype, copy=False)


def _wide_compute(name):
    def compute(ctx, inputs, req, outputs, params):
        x, out, r = inputs[0], outputs[0], req[0]
        if (r == 1 or r == 2) and x.dtype == out.dtype == np.float32:
            getattr(ctx.xp, name)(x, out=out, dtype=np.float64, casting="same_kind")
        elif r:
            put(out, r, wide(ctx.xp, name, x))
    return compute


def call(op, *inputs, params=None):
    """Output 0 of a new ``op`` node reading the entries ``inputs`` (``params``: a parsed
    model or a kwargs dict)."""
    return NodeEntry(make_node(op, list(inputs), params), 0, 0)


class OpsGrad:
    """A table row's ``FGradient`` written with forward ops (``call``), so the gradient is
    itself differentiable (second order). ``build(params, *out_grads, *inputs, *outputs)``
    gets entries and returns the input gradient, or a tuple of them for several inputs
    (None where there is none)."""

    __slots__ = ("build",)

    def __init__(self, build):
        self.build = build

    def __call__(self, node, out_grads):
        outs = [NodeEntry(node, i, 0) for i in range(node.num_outputs())]
        res = self.build(node.params, *out_grads, *node.inputs, *outs)
        return [res] if isinstance(res, NodeEntry) else list(res)


def mul(a, b):
    return call("elemwise_mul", a, b)


def scale(a, s):
    return call("_mul_scalar", a, params={"scalar": s})


def backward_grad(bw_op, d2):
    """``FGradient`` of a ``bw_op(og, v) = og * d(v)`` node (``v`` the forward input or output),
    so the forward op keeps its one-node first-order backward and still has second order.
    Head gradient ``h``: ``bw_op(h, v)`` for ``og``, and ``d2(params, h * og, v)`` (``u * d'(v)``
    built from forward ops, None where ``d'`` is 0) for ``v``."""
    return OpsGrad(lambda p, h, og, v, out: (call(bw_op, h, v, params=p), d2(p, mul(h, og), v)))


def forward_compute(fwd):
    """FCompute of a one-output table row: ``fwd(xp, *inputs)``, a ``Ufunc`` or a
    ``WideUfunc``."""
    if isinstance(fwd, WideUfunc):
        return _wide_compute(fwd.name)
    if isinstance(fwd, Ufunc):
        return _ufunc_compute(fwd)

    def compute(ctx, inputs, req, outputs, params):
        put(outputs[0], req[0], fwd(ctx.xp, *inputs))
    return compute


def _ufunc_compute(fwd):
    """A ``Ufunc`` row's FCompute, one Python call deep: the hot path of elementwise ops."""
    name, consts, reverse = fwd.name, fwd.consts, fwd.reverse
    if not consts and not reverse:
        def compute(ctx, inputs, req, outputs, params):
            r = req[0]
            if r == 1 or r == 2:
                getattr(ctx.xp, name)(*inputs, out=outputs[0], casting="unsafe")
            elif r:
                put(outputs[0], r, getattr(ctx.xp, name)(*inputs))
        return compute

    def compute(ctx, inputs, req, outputs, params):
        put_ufunc(outputs[0], req[0], getattr(ctx.xp, name),
                  *(inputs[::-1] if reverse else inputs), *consts)
    return compute


def sum_to(g, shape):
    """Sum a broadcast gradient ``g`` back to an input of ``shape`` (right-aligned)."""
    shape = tuple(shape)
    if g.shape == shape:
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and g.shape[lead + i] != 1)
    return g.sum(axis=axes).reshape(shape)


def check_outs(op, outs, new):
    """The computed output shapes ``new`` merged with the known ``outs`` dimension by
    dimension (both may be partial; ShapeError names the op)."""
    return [merge_shape(op, old, s, f"output {k}") for k, (old, s) in enumerate(zip(outs, new))]


def _dtype_name(value):
    if isinstance(value, str) or value is None:
        return value
    return np.dtype(value).name


def dtype_field(*names):
    """A Literal dtype field type that also accepts numpy dtypes (``np.float32``)."""
    return Annotated[Literal[names], BeforeValidator(_dtype_name)]


INDEX_DTYPE = dtype_field("float16", "float32", "float64", "int32", "int64", "uint8")
