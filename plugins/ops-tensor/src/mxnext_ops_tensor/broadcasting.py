"""Explicit broadcasting and diagonals: broadcast_to, broadcast_like, broadcast_axis, diag."""

from __future__ import annotations

from opsdk import Field, NodeEntry, Param, assign, make_node, register_op
from opsdk.shape import dim_known, unknown_dim

from ._common import sum_to
from ._layout import (backward_shape, data_grad, fail, forward_shape, norm_axis, same_type,
                      zeros_entry)


def _check_broadcast(op, src, dst):
    if len(src) != len(dst) or any(a not in (1, b) for a, b in zip(src, dst)):
        fail(op, f"cannot broadcast {src} to {dst}: axes must match or be 1")
    return [tuple(dst)]


def _grad_to_input(node, og):
    return NodeEntry(make_node("_backward_broadcast_to", [og[0], node.inputs[0]]), 0)


def _compute(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], ctx.xp.broadcast_to(inputs[0], outputs[0].shape))


(register_op("_backward_broadcast_to")
    .describe("Gradient of broadcast_to/broadcast_like/broadcast_axis: sums the head "
              "gradient back to the input's shape.")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_broadcast_to"))
    .set_attr("FInferType", same_type("_backward_broadcast_to"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(o[0], r[0], sum_to(i[0], i[1].shape)))
    .set_attr("TExamples", [{"inputs": [(2, 3), (1, 3)]}, {"inputs": [(2, 3), (2, 1)]}]))


# -- broadcast_to ----------------------------------------------------------------------
class BroadcastToParam(Param):
    shape: tuple[int, ...] = Field((), description="Target shape; 0 keeps the input's axis")


def _to_shape(p, s):
    d = s[0]
    if len(p.shape) != len(d):
        fail("broadcast_to", f"shape={p.shape} needs {len(d)} axes like the input {d}")
    return _check_broadcast("broadcast_to", d, tuple(n or a for n, a in zip(p.shape, d)))


(register_op("broadcast_to")
    .describe("Stretches the size-1 axes of the input to match shape, repeating values.")
    .set_attr_parser(BroadcastToParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("broadcast_to", _to_shape))
    .set_attr("FInferType", same_type("broadcast_to"))
    .set_attr("FCompute<cpu>", _compute)
    .set_attr("FGradient", lambda node, og: [_grad_to_input(node, og)])
    .set_attr("TExamples", [{"inputs": [(1, 3)], "params": {"shape": "(4, 3)"}},
                            {"inputs": [(2, 1, 1)], "params": {"shape": (0, 2, 3)}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))


# -- broadcast_like --------------------------------------------------------------------
class BroadcastLikeParam(Param):
    lhs_axes: tuple[int, ...] | None = Field(None, description="lhs axes to broadcast")
    rhs_axes: tuple[int, ...] | None = Field(None, description="rhs axes giving the sizes")


def _like_shape(p, s):
    """Without both axis lists, lhs takes rhs's whole shape (as MXNet, one list alone is
    ignored); with them, each lhs axis (of size 1) takes the size of its rhs axis."""
    lhs, rhs = s
    if p.lhs_axes is None or p.rhs_axes is None:
        return _check_broadcast("broadcast_like", lhs, rhs)
    la, ra = p.lhs_axes, p.rhs_axes
    if len(la) != len(ra):
        fail("broadcast_like", f"lhs_axes={la} and rhs_axes={ra} need equal lengths")
    if not la:
        fail("broadcast_like", "lhs_axes and rhs_axes are empty, expected at least one axis")
    out = list(lhs)
    for a, b in zip(la, ra):
        a = norm_axis("broadcast_like", a, len(lhs), "lhs_axes")
        if lhs[a] != 1:
            fail("broadcast_like", f"lhs axis {a} has size {lhs[a]}, expected 1 (lhs {lhs})")
        out[a] = rhs[norm_axis("broadcast_like", b, len(rhs), "rhs_axes")]
    return [tuple(out)]


(register_op("broadcast_like")
    .describe("Stretches lhs to rhs's shape, or only lhs_axes to the sizes of rhs_axes.")
    .set_attr_parser(BroadcastLikeParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("broadcast_like", _like_shape))
    .set_attr("FInferType", lambda p, i, o: (i, [i[0] if i[0] is not None else o[0]]))
    .set_attr("FCompute<cpu>", _compute)
    .set_attr("FGradient", lambda node, og: [
        _grad_to_input(node, og), zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(1, 3), (2, 3)], "grad": [0]},
                            {"inputs": [(1, 3), (5, 4)], "grad": [0],
                             "params": {"lhs_axes": "(0,)", "rhs_axes": "(0,)"}}])
    .add_argument("lhs", "NDArray-or-Symbol", "Array to broadcast")
    .add_argument("rhs", "NDArray-or-Symbol", "Array supplying the target sizes"))


# -- broadcast_axis --------------------------------------------------------------------
class BroadcastAxisParam(Param):
    axis: tuple[int, ...] = Field((), description="Axes (of size 1) to broadcast")
    size: tuple[int, ...] = Field((), description="New length of each listed axis")


def _axis_shape(p, s):
    d = s[0]
    if len(p.axis) != len(p.size):
        fail("broadcast_axis", f"axis={p.axis} and size={p.size} need equal lengths")
    out = list(d)
    for a, n in zip(p.axis, p.size):
        a = norm_axis("broadcast_axis", a, len(d))
        if d[a] != 1:
            fail("broadcast_axis", f"axis {a} has size {d[a]}, expected 1 (input {d})")
        out[a] = n
    return [tuple(out)]


(register_op("broadcast_axis").add_alias("broadcast_axes")
    .describe("Broadcasts axes of size 1 to the given sizes.")
    .set_attr_parser(BroadcastAxisParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("broadcast_axis", _axis_shape))
    .set_attr("FInferType", same_type("broadcast_axis"))
    .set_attr("FCompute<cpu>", _compute)
    .set_attr("FGradient", lambda node, og: [_grad_to_input(node, og)])
    .set_attr("TExamples", [{"inputs": [(2, 1, 1)], "params": {"axis": "(1, 2)", "size": "(3, 4)"}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))


# -- diag ------------------------------------------------------------------------------
class DiagParam(Param):
    k: int = Field(0, description="Which diagonal: 0 the main one, >0 above it, <0 below")
    axis1: int = Field(0, description="Row axis of the matrices read (ndim >= 2 only)")
    axis2: int = Field(1, description="Column axis of the matrices read (ndim >= 2 only)")


def _axes(p, ndim):
    a1, a2 = norm_axis("diag", p.axis1, ndim, "axis1"), norm_axis("diag", p.axis2, ndim, "axis2")
    if a1 == a2:
        fail("diag", f"axis1 and axis2 must differ, both are {a1}")
    return a1, a2


def _diag_shape(p, s):
    d = s[0]
    if len(d) == 0:
        fail("diag", "input must have at least 1 dim")
    if len(d) == 1:
        n = d[0] + abs(p.k)
        return [(n, n)]
    a1, a2 = _axes(p, len(d))
    if dim_known(d[a1]) and dim_known(d[a2]):
        n = min(d[a1] + min(p.k, 0), d[a2] - max(p.k, 0))
        if n < 0:
            fail("diag", f"diagonal k={p.k} does not exist in a {d[a1]}x{d[a2]} matrix")
    else:
        n = unknown_dim()
    return [tuple(x for i, x in enumerate(d) if i not in (a1, a2)) + (n,)]


def _diag(ctx, inputs, req, outputs, params):
    x, xp = inputs[0], ctx.xp
    if x.ndim == 1:
        value = xp.diag(x, params.k)
    else:
        value = xp.diagonal(x, params.k, *_axes(params, x.ndim))
    assign(outputs[0], req[0], value)


def _diag_backward(ctx, inputs, req, outputs, params):
    og, shape, xp, k = inputs[0], inputs[1].shape, ctx.xp, params.k
    if len(shape) == 1:
        g = xp.diag(og, k)
    else:
        g = xp.zeros(shape, og.dtype)
        gm = xp.moveaxis(g, _axes(params, len(shape)), (-2, -1))
        i = xp.arange(og.shape[-1])
        gm[..., i - min(k, 0), i + max(k, 0)] = og
    assign(outputs[0], req[0], g)


(register_op("diag")
    .describe("With ndim >= 2, reads the k-th diagonal; with a 1-D input, returns the matrix "
              "having it as k-th diagonal.")
    .set_attr_parser(DiagParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("diag", _diag_shape))
    .set_attr("FInferType", same_type("diag"))
    .set_attr("FCompute<cpu>", _diag)
    .set_attr("FGradient", data_grad("_backward_diag"))
    .set_attr("TExamples", [{"inputs": [(3, 4)]}, {"inputs": [(3, 4)], "params": {"k": 1}},
                            {"inputs": [(3,)], "params": {"k": -1}},
                            {"inputs": [(2, 3, 4)], "params": {"k": -1, "axis1": 2, "axis2": 0}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array"))

(register_op("_backward_diag")
    .describe("Gradient of diag.")
    .set_attr_parser(DiagParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_diag"))
    .set_attr("FInferType", same_type("_backward_diag"))
    .set_attr("FCompute<cpu>", _diag_backward)
    .set_attr("TExamples", [{"inputs": [(3,), (3, 4)]}, {"inputs": [(4, 4), (3,)], "params": {"k": 1}}]))
