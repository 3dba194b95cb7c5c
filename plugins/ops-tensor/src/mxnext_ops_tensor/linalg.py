"""Matrix products: dot (MXNet's N-d semantics) and batch_dot."""

from __future__ import annotations

from math import prod
from typing import Literal

from opsdk import Field, FloatOnly, NodeEntry, Param, assign, make_node, register_op
from opsdk.shape import dim_known

from ._layout import fail, forward_shape, same_type


class DotParam(Param):
    transpose_a: bool = Field(False, description="Use the transpose of lhs")
    transpose_b: bool = Field(False, description="Use the transpose of rhs")
    forward_stype: Literal["default", "csr", "row_sparse"] | None = Field(
        None, description="Output storage type of a sparse dot (dense inputs give dense)")


def _dot_parts(p, a, b):
    """(kept lhs dims, lhs contracted dim, rhs contracted dim, kept rhs dims)."""
    if not a or not b:
        fail("dot", f"inputs need at least 1 dim, got {a} and {b}")
    ka, keep_a = (a[0], a[1:]) if p.transpose_a else (a[-1], a[:-1])
    kb, keep_b = (b[-1], b[:-1]) if p.transpose_b else (b[0], b[1:])
    if ka != kb:
        fail("dot", f"contracted axes differ: lhs {a} (transpose_a={p.transpose_a}) has {ka}, "
                    f"rhs {b} (transpose_b={p.transpose_b}) has {kb}")
    return keep_a, ka, keep_b


def _dot_shape(p, s):
    keep_a, _, keep_b = _dot_parts(p, *s)
    return [keep_a + keep_b or (1,)]


def _as_matrices(p, a, b):
    """lhs as (m, k) and rhs as (k, n) views of MXNet's N-d dot operands."""
    if a.ndim == 2 == b.ndim and not (p.transpose_a or p.transpose_b):
        return a, b                 # the common case, its shapes checked by inference
    keep_a, k, keep_b = _dot_parts(p, a.shape, b.shape)
    m, n = prod(keep_a), prod(keep_b)
    A = a.reshape(k, m).T if p.transpose_a else a.reshape(m, k)
    B = b.reshape(n, k).T if p.transpose_b else b.reshape(k, n)
    return A, B


def _matmul_into(xp, out, req, A, B):
    """``out <- A @ B`` honouring req; written in place (no temporary) when ``out`` is a
    C-contiguous 2-d array of the product's shape."""
    if req in (1, 2) and out.ndim == 2 and out.shape == (A.shape[0], B.shape[1]) \
            and out.flags.c_contiguous:
        xp.matmul(A, B, out=out)
    else:
        assign(out, req, (A @ B).reshape(out.shape))


def _dot(ctx, inputs, req, outputs, params):
    A, B = _as_matrices(params, *inputs)
    _matmul_into(ctx.xp, outputs[0], req[0], A, B)


def _dot_backward(ctx, inputs, req, outputs, params):
    og, a, b = inputs
    A, B = _as_matrices(params, a, b)
    G = og.reshape(A.shape[0], B.shape[1])
    if req[0] and not params.transpose_a:
        _matmul_into(ctx.xp, outputs[0], req[0], G, B.T)
    elif req[0]:
        assign(outputs[0], req[0], (G @ B.T).T.reshape(a.shape))
    if req[1] and not params.transpose_b:
        _matmul_into(ctx.xp, outputs[1], req[1], A.T, G)
    elif req[1]:
        assign(outputs[1], req[1], (A.T @ G).T.reshape(b.shape))


def _two_grads(name):
    def grad(node, og):
        n = make_node(name, [og[0]] + list(node.inputs), node.params)
        return [NodeEntry(n, 0), NodeEntry(n, 1)]
    return grad


def _backward_infer(name):
    def infer(p, ins, outs):
        if ins[1] is None or ins[2] is None:
            return list(ins), list(outs)
        for o, i in zip(outs, ins[1:]):
            if o is not None and tuple(o) != tuple(i):
                fail(name, f"output shape {tuple(o)}, expected {tuple(i)}")
        return list(ins), [tuple(ins[1]), tuple(ins[2])]
    return infer


def _register(name, shape_fn, compute, backward, examples, bwd_example, doc):
    (register_op(name)
        .describe(doc).set_attr_parser(DotParam).set_num_inputs(2).set_num_outputs(1)
        .set_attr("FInferShape", forward_shape(name, shape_fn))
        .set_attr("FInferType", FloatOnly(same_type(name)))
        .set_attr("FCompute<cpu>", compute)
        .set_attr("FGradient", _two_grads(f"_backward_{name}"))
        .set_attr("TExamples", examples)
        .add_argument("lhs", "NDArray-or-Symbol", "Left operand")
        .add_argument("rhs", "NDArray-or-Symbol", "Right operand"))
    (register_op(f"_backward_{name}")
        .describe(f"Gradient of {name} wrt both inputs.")
        .set_attr_parser(DotParam).set_num_inputs(3).set_num_outputs(2)
        .set_attr("FInferShape", _backward_infer(f"_backward_{name}"))
        .set_attr("FInferType", same_type(f"_backward_{name}"))
        .set_attr("FCompute<cpu>", backward)
        .set_attr("TExamples", [bwd_example]))


_register("dot", _dot_shape, _dot, _dot_backward, [
    {"inputs": [(2, 3), (3, 4)]},
    {"inputs": [(3, 2), (4, 3)], "params": {"transpose_a": True, "transpose_b": True}},
    {"inputs": [(2, 3, 4), (4, 5)]},
    {"inputs": [(4, 3, 2), (5, 3, 4)], "params": {"transpose_a": "True", "transpose_b": "True"}},
    {"inputs": [(3,), (3,)]},
    {"inputs": [(3,), (3, 2)]}],
    {"inputs": [(2, 4), (2, 3), (3, 4)]},
    "Dot product: contracts the last axis of lhs with the first axis of rhs "
    "(first of lhs / last of rhs when transposed).")


# -- batch_dot -------------------------------------------------------------------------
def _mats(p, a, b, xp):
    A = xp.swapaxes(a, -1, -2) if p.transpose_a else a
    B = xp.swapaxes(b, -1, -2) if p.transpose_b else b
    return A, B


def _batch_shape(p, s):
    a, b = s
    if len(a) < 3 or len(a) != len(b) or a[:-2] != b[:-2]:
        fail("batch_dot", f"inputs need the same batch axes and >= 3 dims, got {a} and {b}")
    if not (dim_known(a[-1]) and dim_known(b[-2])):
        return [None]       # as MXNet: no partial result before these two dims are known
    m, ka = (a[-1], a[-2]) if p.transpose_a else (a[-2], a[-1])
    kb, n = (b[-1], b[-2]) if p.transpose_b else (b[-2], b[-1])
    if ka != kb:
        fail("batch_dot", f"contracted axes differ: {a} vs {b} "
                          f"(transpose_a={p.transpose_a}, transpose_b={p.transpose_b})")
    return [a[:-2] + (m, n)]


def _batch_dot(ctx, inputs, req, outputs, params):
    A, B = _mats(params, *inputs, ctx.xp)
    assign(outputs[0], req[0], ctx.xp.matmul(A, B))


def _batch_backward(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    og, a, b = inputs
    A, B = _mats(params, a, b, xp)
    dA, dB = xp.matmul(og, xp.swapaxes(B, -1, -2)), xp.matmul(xp.swapaxes(A, -1, -2), og)
    assign(outputs[0], req[0], xp.swapaxes(dA, -1, -2) if params.transpose_a else dA)
    assign(outputs[1], req[1], xp.swapaxes(dB, -1, -2) if params.transpose_b else dB)


_register("batch_dot", _batch_shape, _batch_dot, _batch_backward, [
    {"inputs": [(2, 3, 4), (2, 4, 5)]},
    {"inputs": [(2, 4, 3), (2, 5, 4)], "params": {"transpose_a": True, "transpose_b": True}},
    {"inputs": [(2, 2, 3, 4), (2, 2, 4, 2)]}],
    {"inputs": [(2, 3, 5), (2, 3, 4), (2, 4, 5)]},
    "Batched matrix product over the leading (batch) axes.")
