"""Shape ops that move no values: Reshape, Flatten, transpose, expand_dims,
squeeze, swapaxes, flip, reshape_like, _identity_with_attr_like_rhs; shape_array and
size_array."""

from __future__ import annotations

from math import prod

from opsdk import (ElemwiseShape, ElemwiseType, Field, MakeZeroGradNodes, NodeEntry, Param,
                   assign, make_node, register_op)
from opsdk.shape import dim_known, shape_known, unknown_dim

from ._layout import (fail, fixed_type, forward_shape, merge, norm_axis, same_shape_back,
                      same_type, zeros_entry)


def _like(og, data):
    """Gradient entry: ``og`` reshaped back to ``data``'s shape."""
    return NodeEntry(make_node("reshape_like", [og, data]), 0)


def _reshape_like_grad(node, out_grads):
    return [_like(out_grads[0], node.inputs[0])]


def _data_arg(b):
    return b.add_argument("data", "NDArray-or-Symbol", "Input array.")


# -- Reshape ---------------------------------------------------------------------------
class ReshapeParam(Param):
    shape: tuple[int, ...] = Field((), description="Target shape with MXNet's special codes "
                                   "0 (copy), -1 (infer), -2 (copy rest), -3 (merge two), "
                                   "-4 (split one in two)")
    reverse: bool = Field(False, description="Apply the special codes right to left")
    target_shape: tuple[int, ...] | None = Field(None, description="(Deprecated, MXNet's old "
                                                 "API) target shape; one 0 is inferred")
    keep_highest: bool = Field(False, description="(Deprecated) with target_shape, keep the "
                                                  "first input dim")


class _Reading:
    """Where MXNet's Reshape arithmetic stands: the input dims and the codes (both reversed
    with ``reverse``), the next of each to read, the output so far, where its -1 sits."""

    def __init__(self, op, shape, codes, reverse):
        self.op, self.shape = op, tuple(shape)
        self.src, self.codes = list(shape), list(codes)
        if reverse:
            self.src.reverse()
            self.codes.reverse()
        self.i = self.k = 0
        self.out, self.infer_at = [], -1


def _copy(r):
    """Code 0: copy one input dim."""
    if r.i >= len(r.src):
        fail(r.op, f"code 0 at position {r.k} has no input dim to copy (input {r.shape})")
    r.out.append(r.src[r.i])
    r.i += 1


def _infer(r):
    """Code -1: one dim inferred from the others at the end."""
    if r.infer_at >= 0:
        fail(r.op, f"more than one -1 in shape {tuple(r.codes)}")
    r.infer_at = len(r.out)
    r.out.append(1)
    r.i += 1


def _copy_rest(r):
    """Code -2: copy every remaining input dim."""
    r.out.extend(r.src[r.i:])
    r.i = len(r.src)


def _merge_two(r):
    """Code -3: two input dims as their product."""
    if r.i + 1 >= len(r.src):
        fail(r.op, f"code -3 needs two input dims (input {r.shape})")
    d0, d1 = r.src[r.i], r.src[r.i + 1]
    r.out.append(d0 * d1 if dim_known(d0) and dim_known(d1) else unknown_dim())
    r.i += 2


def _split_one(r):
    """Code -4 and the two codes after it: one input dim split in two (one may be -1)."""
    if r.k + 2 >= len(r.codes) or r.i >= len(r.src):
        fail(r.op, f"code -4 needs two following values and an input dim, got "
                   f"{tuple(r.codes)}")
    d0, d1, d2 = r.src[r.i], r.codes[r.k + 1], r.codes[r.k + 2]
    r.i += 1
    r.k += 2
    if d1 == -1 and d2 == -1:
        fail(r.op, f"code -4 cannot split into two -1 dims, got {tuple(r.codes)}")
    if not dim_known(d0):
        u = unknown_dim()
        r.out += [u if d1 == -1 else d1, u if d2 == -1 else d2]
        return
    if d1 == -1:
        d1 = d0 // d2 if d2 else 0
    if d2 == -1:
        d2 = d0 // d1 if d1 else 0
    if d1 * d2 != d0:
        fail(r.op, f"code -4 cannot split dim {d0} into ({d1}, {d2})")
    r.out += [d1, d2]


def _literal(r):
    """A positive code: that size."""
    r.out.append(r.codes[r.k])
    r.i += 1


_SPECIAL_CODES = {0: _copy, -1: _infer, -2: _copy_rest, -3: _merge_two, -4: _split_one}


def _step(r):
    code = r.codes[r.k]
    step = _SPECIAL_CODES.get(code, _literal if code > 0 else None)
    if step is None:
        fail(r.op, f"invalid shape code {code} in {tuple(r.codes)}")
    step(r)
    r.k += 1


def _inferred_dim(r):
    """The -1's size: what the other output dims leave of the input's."""
    rest = prod(d for j, d in enumerate(r.out) if j != r.infer_at)
    if not shape_known(r.shape):
        return unknown_dim()
    if rest == 0 or prod(r.shape) % rest:
        fail(r.op, f"cannot infer -1 in {tuple(r.codes)} for input {r.shape}")
    return prod(r.shape) // rest


def reshape_target(op, shape, codes, reverse=False):
    """MXNet's Reshape shape arithmetic (InferReshapeShape). Unknown input dims (see
    ``opsdk.shape``) make the output dims that depend on them unknown."""
    r = _Reading(op, shape, codes, reverse)
    while r.k < len(r.codes):
        _step(r)
    out = r.out
    if r.infer_at >= 0:
        out[r.infer_at] = _inferred_dim(r)
    if reverse:
        out.reverse()
    if shape_known(shape) and shape_known(out) and prod(out) != prod(shape):
        fail(op, f"target shape {tuple(out)} (from shape={tuple(r.codes)}) has {prod(out)} "
                 f"elements, input {tuple(shape)} has {prod(shape)}")
    return tuple(out)


def _fill_from_output(shape, out):
    """MXNet's ReverseReshapeInferShape: one unknown input dim is what the known output's
    size leaves for it."""
    if shape_known(shape) or not shape_known(out):
        return shape
    unknown = [j for j, d in enumerate(shape) if not dim_known(d)]
    if len(unknown) != 1:
        return shape
    rest = prod(d for j, d in enumerate(shape) if j != unknown[0])
    return tuple(prod(out) // rest if j == unknown[0] else d for j, d in enumerate(shape))


def _old_target(p, shape):
    """The deprecated ``target_shape`` (with ``keep_highest``): its one 0 is inferred."""
    out = list(p.target_shape)
    if p.keep_highest and out:
        out[0] = shape[0]
    zeros = [j for j in range(1 if p.keep_highest else 0, len(out)) if out[j] == 0]
    if len(zeros) == 1 and shape_known(shape):
        out[zeros[0]] = 1
        out[zeros[0]] = prod(shape) // prod(out)
    return tuple(out)


def _reshape_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    if ins[0] is None:
        return ins, outs
    if p.shape or p.target_shape is not None:
        target = (reshape_target("Reshape", ins[0], p.shape, p.reverse) if p.shape
                  else _old_target(p, ins[0]))
        ins[0] = _fill_from_output(ins[0], target)
        outs = merge("Reshape", outs, [target])
    if outs[0] is not None:
        ins[0] = _fill_from_output(tuple(ins[0]), outs[0])
    return ins, outs


def _reshape_compute(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], inputs[0].reshape(outputs[0].shape))


_data_arg(register_op("Reshape").add_alias("reshape")
    .describe("Same values in a new shape, which may use MXNet's codes 0, -1, -2, -3, -4 and "
              "reverse.")
    .set_attr_parser(ReshapeParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", _reshape_shape)
    .set_attr("FInferType", same_type("Reshape"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", _reshape_like_grad)
    .set_attr("TExamples", [{"inputs": [(2, 3, 4)], "params": {"shape": "(0, -1)"}},
                            {"inputs": [(2, 3, 4)], "params": {"shape": (-3, -2)}},
                            {"inputs": [(2, 3, 4)], "params": {"shape": (-4, 1, 2, -2)}},
                            {"inputs": [(2, 3, 4)], "params": {"shape": (-1, 0), "reverse": True}}]))


# -- reshape_like ----------------------------------------------------------------------
class ReshapeLikeParam(Param):
    lhs_begin: int | None = Field(None, description="First lhs axis to replace")
    lhs_end: int | None = Field(None, description="End of the lhs axes to replace")
    rhs_begin: int | None = Field(None, description="First rhs axis to take")
    rhs_end: int | None = Field(None, description="End of the rhs axes to take")


def _span(n, begin, end):
    b = 0 if begin is None else begin % n if n else 0
    e = n if end is None else (end % n if end < 0 else end)
    return b, e


def _reshape_like_shape(p, s):
    lhs, rhs = s
    p = p or ReshapeLikeParam()
    lb, le = _span(len(lhs), p.lhs_begin, p.lhs_end)
    rb, re = _span(len(rhs), p.rhs_begin, p.rhs_end)
    out = lhs[:lb] + rhs[rb:re] + lhs[le:]
    if prod(out) != prod(lhs):
        fail("reshape_like", f"cannot reshape {lhs} to {out} (taken from {rhs})")
    return [out]


(register_op("reshape_like")
    .describe("lhs given rhs's shape, or a span of lhs's axes replaced by a span of rhs's.")
    .set_attr_parser(ReshapeLikeParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("reshape_like", _reshape_like_shape))
    .set_attr("FInferType", lambda p, i, o: (i, [i[0] if i[0] is not None else o[0]]))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", lambda node, og: [
        _like(og[0], node.inputs[0]),
        zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(2, 6), (3, 4)], "grad": [0]}])
    .add_argument("lhs", "NDArray-or-Symbol", "Array to reshape.")
    .add_argument("rhs", "NDArray-or-Symbol", "Array whose shape is taken."))


(register_op("_identity_with_attr_like_rhs")
    .describe("lhs unchanged, with rhs's shape and dtype: a constraint that lets inference "
              "flow from rhs to lhs (and back). rhs gets a zero gradient.")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["lhs", "rhs"])
    .set_attr("FInferShape", ElemwiseShape(2, 1, "_identity_with_attr_like_rhs"))
    .set_attr("FInferType", ElemwiseType(2, 1, "_identity_with_attr_like_rhs"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", lambda node, og: [og[0], zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 3)], "grad": [0]}])
    .add_argument("lhs", "NDArray-or-Symbol", "Array passed through.")
    .add_argument("rhs", "NDArray-or-Symbol", "Array whose shape and dtype lhs must have."))


# -- Flatten ---------------------------------------------------------------------------
def _flatten_shape(p, s):
    d = s[0]
    if not d:
        fail("Flatten", "input must have at least 1 dim")
    return [(d[0], prod(d[1:]))]


_data_arg(register_op("Flatten").add_alias("flatten")
    .describe("Keeps axis 0 and merges all later axes into one: (d0, d1*d2*...).")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("Flatten", _flatten_shape))
    .set_attr("FInferType", same_type("Flatten"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", _reshape_like_grad)
    .set_attr("TExamples", [{"inputs": [(2, 3, 4)]}]))


# -- transpose / swapaxes / flip -------------------------------------------------------
class TransposeParam(Param):
    axes: tuple[int, ...] = Field((), description="Permutation of the axes; () reverses them")


def _perm(p, ndim):
    axes = p.axes if p is not None and p.axes else tuple(range(ndim - 1, -1, -1))
    if sorted(a % ndim if ndim else a for a in axes) != list(range(ndim)) or len(axes) != ndim:
        fail("transpose", f"axes={axes} is not a permutation of {ndim} axes")
    return tuple(a % ndim for a in axes)


def _inverse(perm):
    inv = [0] * len(perm)
    for i, a in enumerate(perm):
        inv[a] = i
    return tuple(inv)


_data_arg(register_op("transpose")
    .describe("Reorders the axes as axes lists them (reversed by default).")
    .set_attr_parser(TransposeParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape(
        "transpose", lambda p, s: [tuple(s[0][a] for a in _perm(p, len(s[0])))],
        lambda p, o: [tuple(o[0][a] for a in _inverse(_perm(p, len(o[0]))))]))
    .set_attr("FInferType", same_type("transpose"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
        o[0], r[0], ctx.xp.transpose(i[0], _perm(p, i[0].ndim))))
    .set_attr("FGradient", lambda node, og: [NodeEntry(make_node("transpose", [og[0]], {
        "axes": _inverse(_perm(node.params, len(node.params.axes))) if node.params.axes
        else ()}), 0)])
    .set_attr("TExamples", [{"inputs": [(2, 3, 4)]},
                            {"inputs": [(2, 3, 4)], "params": {"axes": "(1, 2, 0)"}}]))


class SwapAxisParam(Param):
    dim1: int = Field(0, description="One axis to exchange")
    dim2: int = Field(0, description="The other axis to exchange")


def _swap(p, ndim):
    perm = list(range(ndim))
    a, b = norm_axis("swapaxes", p.dim1, ndim, "dim1"), norm_axis("swapaxes", p.dim2, ndim, "dim2")
    perm[a], perm[b] = perm[b], perm[a]
    return tuple(perm)


_data_arg(register_op("swapaxes").add_alias("SwapAxis")
    .describe("Exchanges axes dim1 and dim2.")
    .set_attr_parser(SwapAxisParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape(
        "swapaxes", lambda p, s: [tuple(s[0][a] for a in _swap(p, len(s[0])))],
        lambda p, o: [tuple(o[0][a] for a in _swap(p, len(o[0])))]))
    .set_attr("FInferType", same_type("swapaxes"))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
        o[0], r[0], ctx.xp.transpose(i[0], _swap(p, i[0].ndim))))
    .set_attr("FGradient", lambda node, og: [NodeEntry(make_node("swapaxes", [og[0]], node.params), 0)])
    .set_attr("TExamples", [{"inputs": [(2, 3, 4)], "params": {"dim1": 0, "dim2": 2}}]))


class FlipParam(Param):
    axis: tuple[int, ...] = Field(description="The axes to reverse")


def _flip_shape(p, s):
    for a in p.axis:
        norm_axis("flip", a, len(s[0]))
    return [s[0]]


def _flip_compute(ctx, inputs, req, outputs, params):
    x = inputs[0]
    axes = tuple(norm_axis("flip", a, x.ndim) for a in params.axis)
    assign(outputs[0], req[0], ctx.xp.flip(x, axes).copy())


_data_arg(register_op("flip").add_alias("reverse")
    .describe("Same shape, with the entries along each listed axis in backward order.")
    .set_attr_parser(FlipParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("flip", _flip_shape, same_shape_back))
    .set_attr("FInferType", same_type("flip"))
    .set_attr("FCompute<cpu>", _flip_compute)
    .set_attr("FGradient", lambda node, og: [NodeEntry(make_node("flip", [og[0]], node.params), 0)])
    .set_attr("TExamples", [{"inputs": [(2, 3, 4)], "params": {"axis": "(0, 2)"}},
                            {"inputs": [(5,)], "params": {"axis": 0}}]))


# -- expand_dims / squeeze -------------------------------------------------------------
class ExpandDimsParam(Param):
    axis: int = Field(description="Index the new axis takes, in [-ndim-1, ndim]")


def _expand_shape(p, s):
    d = s[0]
    a = norm_axis("expand_dims", p.axis, len(d) + 1)
    return [d[:a] + (1,) + d[a:]]


def _expand_back(p, o):
    a = norm_axis("expand_dims", p.axis, len(o[0]))
    return [o[0][:a] + o[0][a + 1:]]


_data_arg(register_op("expand_dims")
    .describe("Adds a length-1 axis at position axis.")
    .set_attr_parser(ExpandDimsParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("expand_dims", _expand_shape, _expand_back))
    .set_attr("FInferType", same_type("expand_dims"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", _reshape_like_grad)
    .set_attr("TExamples", [{"inputs": [(2, 3)], "params": {"axis": 1}},
                            {"inputs": [(2, 3)], "params": {"axis": -1}}]))


class SqueezeParam(Param):
    axis: tuple[int, ...] | None = Field(None, description="Axes of size 1 to drop; None: all")


def _squeeze_shape(p, s):
    d = s[0]
    if p.axis is None:
        axes = {i for i, n in enumerate(d) if n == 1}
    else:
        axes = {norm_axis("squeeze", a, len(d)) for a in p.axis}
        for a in axes:
            if d[a] != 1:
                fail("squeeze", f"axis {a} has size {d[a]}, expected 1 (input {d})")
    out = tuple(n for i, n in enumerate(d) if i not in axes)
    return [out or (1,)]  # MXNet keeps one axis when every axis is squeezed


_data_arg(register_op("squeeze")
    .describe("Drops length-1 axes (all of them, or those listed).")
    .set_attr_parser(SqueezeParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("squeeze", _squeeze_shape))
    .set_attr("FInferType", same_type("squeeze"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _reshape_compute)
    .set_attr("FGradient", _reshape_like_grad)
    .set_attr("TExamples", [{"inputs": [(2, 1, 3, 1)]},
                            {"inputs": [(2, 1, 3, 1)], "params": {"axis": "(1,)"}}]))


# -- shape_array / size_array ------------------------------------------------------------
def _shape_array(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], ctx.xp.asarray(inputs[0].shape, dtype="int64"))


def _size_array(ctx, inputs, req, outputs, params):
    assign(outputs[0], req[0], ctx.xp.asarray([inputs[0].size], dtype="int64"))


for _name, _compute, _shape, _doc in [
        ("shape_array", _shape_array, lambda p, s: [(len(s[0]),)], "The input's shape (int64)."),
        ("size_array", _size_array, lambda p, s: [(1,)], "The input's element count (int64).")]:
    _data_arg(register_op(_name)
        .describe(_doc).set_num_inputs(1).set_num_outputs(1)
        .set_attr("FInferShape", forward_shape(_name, _shape))
        .set_attr("FInferType", fixed_type(_name, lambda p: "int64"))
        .set_attr("FCompute<cpu>", _compute)
        .set_attr("FGradient", MakeZeroGradNodes)
        .set_attr("TExamples", [{"inputs": [(2, 3, 4)], "grad": False}]))
