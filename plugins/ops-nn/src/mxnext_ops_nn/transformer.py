"""The interleaved multi-head attention matmuls of MXNet's contrib/transformer.cc.

Projections are laid out (seq_length, batch, heads * k * head_dim): per head, the k
projections (queries, keys, values for self attention; keys, values for encoder-decoder)
follow each other. Attention maps are (batch * heads, query_length, key_length), batch
major. The score ops scale by 1 / sqrt(head_dim); the value ops compute attention @ values
and return (query_length, batch, heads * head_dim).
"""

from __future__ import annotations

import numpy as np
from opsdk import ElemwiseGradUseIn, Field, FloatOnly, Param, register_op
from opsdk.shape import dim_known, dim_op

from ._infer import fail, uniform_type
from ._layer_rules import put, result_shapes


class InterleavedMatMulParam(Param):
    heads: int = Field(..., ge=1, description="Set number of heads")


def _heads(x, heads, k, part):
    """Projection ``part`` of the interleaved (S, B, heads * k * d) ``x`` as (B * heads, S, d)."""
    s, b, e = x.shape
    return x.reshape(s, b, heads, k, e // (heads * k))[:, :, :, part, :] \
        .transpose(1, 2, 0, 3).reshape(b * heads, s, -1)


def _interleave(xp, parts, k, heads, shape, dtype):
    """(S, B, heads * k * d) holding the (B * heads, S, d) gradients ``parts`` ({index: array})
    at their projection, zeros at the others."""
    s, b, e = shape
    out = xp.zeros((s, b, heads, k, e // (heads * k)), dtype)
    for part, g in parts.items():
        out[:, :, :, part, :] = g.reshape(b, heads, s, -1).transpose(2, 0, 1, 3)
    return out.reshape(shape)


def _merge_heads(x, heads):
    """(B * heads, S, d) -> (S, B, heads * d)."""
    bh, s, d = x.shape
    return x.reshape(bh // heads, heads, s, d).transpose(2, 0, 1, 3).reshape(s, bh // heads, -1)


def _split_heads(x, heads):
    """(S, B, heads * d) -> (B * heads, S, d)."""
    s, b, e = x.shape
    return x.reshape(s, b, heads, e // heads).transpose(1, 2, 0, 3).reshape(b * heads, s, -1)


def _scale(x, heads, k):
    return x.dtype.type(1.0 / np.sqrt(x.shape[2] // (heads * k)))


def _times(d, heads):
    return dim_op(lambda x: x * heads, d)


def _mT(xp, x):
    return xp.swapaxes(x, -1, -2)


# -- shape rules ---------------------------------------------------------------------------
def _three_d(op, shape, name, layout):
    if len(shape) != 3:
        fail(op, f"input {name} must be 3-D ({layout}), got shape {shape}")


def _divisible(op, name, dim, by, what):
    if dim_known(dim) and dim % by:
        fail(op, f"input {name} has last dim {dim}, expected a multiple of {by} ({what})")


def _eq(op, a, b, what):
    if dim_known(a) and dim_known(b) and a != b:
        fail(op, f"{what}: {a} vs {b}")


def _known(ins):
    return all(s is not None for s in ins)


def _selfatt_qk_shape(p, ins, outs):
    op = "_contrib_interleaved_matmul_selfatt_qk"
    if not _known(ins):
        return list(ins), list(outs)
    qkv = tuple(ins[0])
    _three_d(op, qkv, "queries_keys_values", "seq_length, batch, heads * 3 * head_dim")
    s, b, e = qkv
    _divisible(op, "queries_keys_values", e, 3 * p.heads, f"3 * heads, heads={p.heads}")
    return list(ins), result_shapes(op, outs, [(_times(b, p.heads), s, s)])


def _selfatt_valatt_shape(p, ins, outs):
    op = "_contrib_interleaved_matmul_selfatt_valatt"
    if not _known(ins):
        return list(ins), list(outs)
    qkv, att = tuple(ins[0]), tuple(ins[1])
    _three_d(op, qkv, "queries_keys_values", "seq_length, batch, heads * 3 * head_dim")
    _three_d(op, att, "attention", "batch * heads, seq_length, seq_length")
    _divisible(op, "queries_keys_values", qkv[2], 3 * p.heads, f"3 * heads, heads={p.heads}")
    _eq(op, qkv[0], att[1], "queries_keys_values.shape[0] and attention.shape[1] must agree")
    _eq(op, qkv[0], att[2], "queries_keys_values.shape[0] and attention.shape[2] must agree")
    _eq(op, _times(qkv[1], p.heads), att[0],
        f"attention.shape[0] must be queries_keys_values.shape[1] * heads (heads={p.heads})")
    embed = dim_op(lambda e: e // 3, qkv[2])
    return list(ins), result_shapes(op, outs, [(qkv[0], qkv[1], embed)])


def _encdec_qk_shape(p, ins, outs):
    op = "_contrib_interleaved_matmul_encdec_qk"
    if not _known(ins):
        return list(ins), list(outs)
    q, kv = tuple(ins[0]), tuple(ins[1])
    _three_d(op, q, "queries", "seq_length, batch, heads * head_dim")
    _three_d(op, kv, "keys_values", "seq_length, batch, heads * 2 * head_dim")
    _divisible(op, "queries", q[2], p.heads, f"heads={p.heads}")
    _eq(op, _times(q[2], 2), kv[2], "keys_values.shape[2] must be queries.shape[2] * 2")
    _eq(op, q[1], kv[1], "queries.shape[1] and keys_values.shape[1] must agree")
    return list(ins), result_shapes(op, outs, [(_times(q[1], p.heads), q[0], kv[0])])


def _encdec_valatt_shape(p, ins, outs):
    op = "_contrib_interleaved_matmul_encdec_valatt"
    if not _known(ins):
        return list(ins), list(outs)
    kv, att = tuple(ins[0]), tuple(ins[1])
    _three_d(op, kv, "keys_values", "seq_length, batch, heads * 2 * head_dim")
    _three_d(op, att, "attention", "batch * heads, query_length, key_length")
    _divisible(op, "keys_values", kv[2], 2 * p.heads, f"2 * heads, heads={p.heads}")
    _eq(op, kv[0], att[2], "keys_values.shape[0] and attention.shape[2] must agree")
    _eq(op, _times(kv[1], p.heads), att[0],
        f"attention.shape[0] must be keys_values.shape[1] * heads (heads={p.heads})")
    embed = dim_op(lambda e: e // 2, kv[2])
    return list(ins), result_shapes(op, outs, [(att[1], kv[1], embed)])


def _backward_shape(op):
    """Gradient outputs have the shapes of the forward inputs (backward inputs 1, 2, ...)."""
    return lambda p, ins, outs: (list(ins), result_shapes(op, outs, list(ins[1:1 + len(outs)]))
                                 if _known(ins[1:1 + len(outs)]) else list(outs))


# -- kernels -------------------------------------------------------------------------------
def _selfatt_qk(ctx, inputs, req, outputs, p):
    xp, qkv = ctx.xp, inputs[0]
    q, k = _heads(qkv, p.heads, 3, 0), _heads(qkv, p.heads, 3, 1)
    put(outputs[0], req[0], _scale(qkv, p.heads, 3) * xp.matmul(q, _mT(xp, k)))


def _selfatt_qk_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, qkv = inputs
    scale = _scale(qkv, p.heads, 3)
    q, k = _heads(qkv, p.heads, 3, 0), _heads(qkv, p.heads, 3, 1)
    parts = {0: scale * xp.matmul(og, k), 1: scale * xp.matmul(_mT(xp, og), q)}
    put(outputs[0], req[0], _interleave(xp, parts, 3, p.heads, qkv.shape, qkv.dtype))


def _selfatt_valatt(ctx, inputs, req, outputs, p):
    xp, (qkv, att) = ctx.xp, inputs
    v = _heads(qkv, p.heads, 3, 2)
    put(outputs[0], req[0], _merge_heads(xp.matmul(att, v), p.heads))


def _selfatt_valatt_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, qkv, att = inputs
    v, g = _heads(qkv, p.heads, 3, 2), _split_heads(og, p.heads)
    if req[0]:
        dv = xp.matmul(_mT(xp, att), g)
        put(outputs[0], req[0], _interleave(xp, {2: dv}, 3, p.heads, qkv.shape, qkv.dtype))
    if req[1]:
        put(outputs[1], req[1], xp.matmul(g, _mT(xp, v)))


def _encdec_qk(ctx, inputs, req, outputs, p):
    xp, (q, kv) = ctx.xp, inputs
    qh, kh = _split_heads(q, p.heads), _heads(kv, p.heads, 2, 0)
    put(outputs[0], req[0], _scale(q, p.heads, 1) * xp.matmul(qh, _mT(xp, kh)))


def _encdec_qk_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, q, kv = inputs
    scale = _scale(q, p.heads, 1)
    qh, kh = _split_heads(q, p.heads), _heads(kv, p.heads, 2, 0)
    if req[0]:
        put(outputs[0], req[0], _merge_heads(scale * xp.matmul(og, kh), p.heads))
    if req[1]:
        dk = scale * xp.matmul(_mT(xp, og), qh)
        put(outputs[1], req[1], _interleave(xp, {0: dk}, 2, p.heads, kv.shape, kv.dtype))


def _encdec_valatt(ctx, inputs, req, outputs, p):
    xp, (kv, att) = ctx.xp, inputs
    put(outputs[0], req[0], _merge_heads(xp.matmul(att, _heads(kv, p.heads, 2, 1)), p.heads))


def _encdec_valatt_backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    og, kv, att = inputs
    v, g = _heads(kv, p.heads, 2, 1), _split_heads(og, p.heads)
    if req[0]:
        dv = xp.matmul(_mT(xp, att), g)
        put(outputs[0], req[0], _interleave(xp, {1: dv}, 2, p.heads, kv.shape, kv.dtype))
    if req[1]:
        put(outputs[1], req[1], xp.matmul(g, _mT(xp, v)))


# -- registration --------------------------------------------------------------------------
def _register(name, doc, args, shape, compute, backward, examples, bwd_examples):
    op = f"_contrib_interleaved_matmul_{name}"
    bwd = f"_backward_interleaved_matmul_{name}"
    names = [a for a, _ in args]
    b = (register_op(op).describe(doc).set_attr_parser(InterleavedMatMulParam)
         .set_num_inputs(len(args)).set_num_outputs(1)
         .set_attr("FListInputNames", lambda p: names)
         .set_attr("FListOutputNames", lambda p: ["output"])
         .set_attr("FInferShape", shape)
         .set_attr("FInferType", FloatOnly(uniform_type(op, names)))
         .set_attr("FCompute<cpu>", compute)
         .set_attr("FGradient", ElemwiseGradUseIn(bwd))
         .set_attr("TExamples", examples))
    for a, text in args:
        b.add_argument(a, "NDArray-or-Symbol", text)
    bwd_names = ["output_grad"] + names
    (register_op(bwd).describe(f"Gradient of {op}.").set_attr_parser(InterleavedMatMulParam)
        .set_attr("TIsBackward", True).set_num_inputs(len(args) + 1).set_num_outputs(len(args))
        .set_attr("FInferShape", _backward_shape(bwd))
        .set_attr("FInferType", FloatOnly(uniform_type(bwd, bwd_names)))
        .set_attr("FCompute<cpu>", backward)
        .set_attr("TExamples", bwd_examples))


def _ref_selfatt_qk(qkv, heads):
    s, b, e = qkv.shape
    x = qkv.reshape(s, b, heads, 3, e // (3 * heads))
    q = x[:, :, :, 0].transpose(1, 2, 0, 3).reshape(b * heads, s, -1)
    k = x[:, :, :, 1].transpose(1, 2, 0, 3).reshape(b * heads, s, -1)
    return (q / np.sqrt(q.shape[-1]).astype(q.dtype)) @ k.transpose(0, 2, 1)


_register(
    "selfatt_qk", "Attention scores of self attention: queries @ keys^T / sqrt(head_dim) per "
    "head, from the interleaved projections (seq_length, batch, heads * 3 * head_dim); returns "
    "(batch * heads, seq_length, seq_length).",
    [("queries_keys_values", "Interleaved queries, keys and values")],
    _selfatt_qk_shape, _selfatt_qk, _selfatt_qk_backward,
    [{"inputs": [(4, 2, 12)], "params": {"heads": 2}, "ref": _ref_selfatt_qk},
     {"inputs": [(3, 1, 6)], "params": {"heads": 1}, "dtype": "float64"}],
    [{"inputs": [(4, 4, 4), (4, 2, 12)], "params": {"heads": 2}}])
_register(
    "selfatt_valatt", "Attention output of self attention: attention @ values per head, from "
    "the interleaved projections (seq_length, batch, heads * 3 * head_dim) and the attention "
    "(batch * heads, seq_length, seq_length); returns (seq_length, batch, heads * head_dim).",
    [("queries_keys_values", "Queries, keys and values interleaved"),
     ("attention", "Attention maps")],
    _selfatt_valatt_shape, _selfatt_valatt, _selfatt_valatt_backward,
    [{"inputs": [(4, 2, 12), (4, 4, 4)], "params": {"heads": 2}},
     {"inputs": [(2, 3, 9), (9, 2, 2)], "params": {"heads": 3}}],
    [{"inputs": [(4, 2, 4), (4, 2, 12), (4, 4, 4)], "params": {"heads": 2}}])
_register(
    "encdec_qk", "Attention scores of encoder-decoder attention: queries @ keys^T / "
    "sqrt(head_dim) per head, from the queries (query_length, batch, heads * head_dim) and "
    "the interleaved keys and values (key_length, batch, heads * 2 * head_dim); returns "
    "(batch * heads, query_length, key_length).",
    [("queries", "Queries"), ("keys_values", "Keys and values interleaved")],
    _encdec_qk_shape, _encdec_qk, _encdec_qk_backward,
    [{"inputs": [(3, 2, 4), (5, 2, 8)], "params": {"heads": 2}},
     {"inputs": [(2, 1, 3), (4, 1, 6)], "params": {"heads": 3}}],
    [{"inputs": [(4, 3, 5), (3, 2, 4), (5, 2, 8)], "params": {"heads": 2}}])
_register(
    "encdec_valatt", "Attention output of encoder-decoder attention: attention @ values per "
    "head, from the interleaved keys and values (key_length, batch, heads * 2 * head_dim) and "
    "the attention (batch * heads, query_length, key_length); returns (query_length, batch, "
    "heads * head_dim).",
    [("keys_values", "Keys and values interleaved"), ("attention", "Attention maps")],
    _encdec_valatt_shape, _encdec_valatt, _encdec_valatt_backward,
    [{"inputs": [(5, 2, 8), (4, 3, 5)], "params": {"heads": 2}},
     {"inputs": [(4, 1, 6), (3, 2, 4)], "params": {"heads": 3}}],
    [{"inputs": [(3, 2, 4), (5, 2, 8), (4, 3, 5)], "params": {"heads": 2}}])
