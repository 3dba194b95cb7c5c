"""Slicing: slice (alias crop), slice_axis, slice_like (and their scatter-back gradients),
_slice_assign and _slice_assign_scalar."""

from __future__ import annotations

from opsdk import Field, NodeEntry, OpReqType, Param, assign, make_node, register_op
from opsdk.shape import dim_known

from ._layout import (backward_shape, data_grad, fail, forward_shape, merge, norm_axis,
                      same_type, zeros_entry)


def _scatter_back(index_of):
    """FCompute of a ``_backward_*`` slice op: inputs (og, data), ``index_of(p, data_shape,
    like_shape)`` is the index tuple the forward op read."""
    def compute(ctx, inputs, req, outputs, params):
        g = ctx.xp.zeros(outputs[0].shape, outputs[0].dtype)
        like = inputs[2].shape if len(inputs) > 2 else None
        g[index_of(params, g.shape, like)] = inputs[0]
        assign(outputs[0], req[0], g)
    return compute


def _register_backward(name, param, index_of, example):
    (register_op(name).set_attr_parser(param).set_num_inputs(len(example["inputs"]))
        .set_num_outputs(1)
        .describe(f"Gradient of {name[len('_backward_'):]}: scatters the head gradient "
                  "into zeros of the input's shape.")
        .set_attr("FInferShape", backward_shape(name))
        .set_attr("FInferType", same_type(name))
        .set_attr("FCompute<cpu>", _scatter_back(index_of))
        .set_attr("TExamples", [example]))


# -- slice -----------------------------------------------------------------------------
class SliceParam(Param):
    begin: tuple[int | None, ...] = Field(description="Start index per axis (None: default)")
    end: tuple[int | None, ...] = Field(description="Stop index per axis (None: default)")
    step: tuple[int | None, ...] = Field((), description="Step per axis (None: 1)")


def _slice_index(p, shape, like=None):
    n = len(shape)
    if len(p.begin) > n or len(p.end) != len(p.begin) or len(p.step) > len(p.begin):
        fail("slice", f"begin={p.begin}, end={p.end}, step={p.step} do not fit an input of "
                      f"{n} dims (begin and end need equal lengths <= ndim)")
    idx = []
    for k, (b, e) in enumerate(zip(p.begin, p.end)):
        s = p.step[k] if k < len(p.step) else None
        if s == 0:
            fail("slice", f"step 0 on axis {k}")
        idx.append(slice(b, e, s))
    return tuple(idx)


def _sliced_shape(index, shape):
    """The shape ``index`` cuts from ``shape``; an unknown dimension stays unknown."""
    out = list(shape)
    for k, sl in enumerate(index):
        if dim_known(shape[k]):
            out[k] = len(range(*sl.indices(shape[k])))
    return tuple(out)


def _register_slice(name, param, index_of, doc, examples, bwd_example):
    """A one-input op reading ``data[index_of(params, data.shape)]`` and its scatter-back
    gradient ``_backward_<name>``; returns the op's builder."""
    b = (register_op(name)
        .describe(doc)
        .set_attr_parser(param).set_num_inputs(1).set_num_outputs(1)
        .set_attr("FInferShape", forward_shape(name, lambda p, s: [
            _sliced_shape(index_of(p, s[0]), s[0])]))
        .set_attr("FInferType", same_type(name))
        .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
            o[0], r[0], i[0][index_of(p, i[0].shape)]))
        .set_attr("FGradient", data_grad(f"_backward_{name}"))
        .set_attr("TExamples", examples)
        .add_argument("data", "NDArray-or-Symbol", "Array to slice"))
    _register_backward(f"_backward_{name}", param, index_of, bwd_example)
    return b


_register_slice(
    "slice", SliceParam, _slice_index,
    "The block of data from begin to end (exclusive) with step, per axis; None takes "
    "the default.",
    [{"inputs": [(3, 4, 5)], "params": {"begin": "(0, 1)", "end": "(2, 4)"}},
     {"inputs": [(3, 4, 5)], "params": {"begin": "(None, -1)", "end": "(None, 0)", "step": "(2, -2)"}}],
    {"inputs": [(2, 3, 5), (3, 4, 5)], "params": {"begin": (0, 1), "end": (2, 4)}}
).add_alias("crop")


# -- _slice_assign, _slice_assign_scalar: data with the block ``slice`` reads replaced -------
class _ScalarArg(Param):
    scalar: float = Field(0.0, description="Value written into the block")


class SliceAssignScalarParam(SliceParam, _ScalarArg):
    """MXNet's field order: scalar, begin, end, step."""


def _assign_shape(p, ins, outs):
    data = ins[0] if ins[0] is not None else outs[0]
    if data is None:
        return list(ins), list(outs)
    data = tuple(data)
    block = _sliced_shape(_slice_index(p, data), data)
    if len(ins) > 1 and ins[1] is not None and tuple(ins[1]) != block:
        fail("_slice_assign", f"rhs has shape {tuple(ins[1])}, expected the block's {block}")
    return [data, block][:len(ins)], merge("_slice_assign", outs, [data])


def _slice_assign(ctx, inputs, req, outputs, params):
    data = inputs[0]
    value = inputs[1] if len(inputs) > 1 else params.scalar
    new = data if req[0] == OpReqType.WRITE_INPLACE else data.copy()
    new[_slice_index(params, data.shape)] = value
    assign(outputs[0], req[0], new)


for _name, _param, _args, _example in (
        ("_slice_assign", SliceParam, (("lhs", "Array written into"), ("rhs", "The new block")),
         {"inputs": [(3, 4, 5), (2, 3, 5)], "params": {"begin": (0, 1), "end": (2, 4)}}),
        ("_slice_assign_scalar", SliceAssignScalarParam, (("data", "Array written into"),),
         {"inputs": [(3, 4)], "params": {"begin": (None, 1), "end": (2, None), "step": (1, 2),
                                         "scalar": 5}})):
    _b = (register_op(_name).add_alias(_name.replace("slice", "crop"))
          .describe("data (lhs) with the block slice(begin, end, step) reads replaced by "
                    "rhs or by scalar; not differentiable (as in MXNet).")
          .set_attr_parser(_param).set_num_inputs(len(_args)).set_num_outputs(1)
          .set_attr("FInferShape", _assign_shape)
          .set_attr("FInferType", same_type(_name))
          .set_attr("FInplaceOption", lambda p: [(0, 0)])
          .set_attr("FCompute<cpu>", _slice_assign)
          .set_attr("TExamples", [_example]))
    for _arg, _doc in _args:
        _b.add_argument(_arg, "NDArray-or-Symbol", _doc)


# -- slice_axis ------------------------------------------------------------------------
class SliceAxisParam(Param):
    axis: int = Field(description="Axis to slice")
    begin: int = Field(description="Start index (negative counts from the end)")
    end: int | None = Field(description="Stop index (None: the axis length)")


def _slice_axis_index(p, shape, like=None):
    """As MXNet's GetSliceAxisParams: the range must lie in the axis, begin before end."""
    a = norm_axis("slice_axis", p.axis, len(shape))
    n = shape[a]
    if dim_known(n) and n > 0:
        b = p.begin + n if p.begin < 0 else p.begin
        e = n if p.end is None else (p.end + n if p.end < 0 else p.end)
        if not 0 <= b < e <= n:
            fail("slice_axis", f"begin={p.begin}, end={p.end} is not a non-empty range of "
                               f"axis {p.axis} of length {n}")
    return (slice(None),) * a + (slice(p.begin, p.end),)


_register_slice(
    "slice_axis", SliceAxisParam, _slice_axis_index, "The range [begin, end) of one axis.",
    [{"inputs": [(3, 4)], "params": {"axis": 1, "begin": 1, "end": 3}},
     {"inputs": [(3, 4)], "params": {"axis": 0, "begin": -2, "end": "None"}}],
    {"inputs": [(3, 2), (3, 4)], "params": {"axis": 1, "begin": 1, "end": 3}})


# -- slice_like ------------------------------------------------------------------------
class SliceLikeParam(Param):
    axes: tuple[int, ...] = Field((), description="Axes to slice like shape_like; (): all")


def _slice_like_index(p, shape, like):
    axes = p.axes or tuple(range(min(len(shape), len(like))))
    idx = [slice(None)] * len(shape)
    for a in axes:
        a = norm_axis("slice_like", a, len(shape))
        if a >= len(like) or like[a] > shape[a]:
            fail("slice_like", f"axis {a}: shape_like {like} does not fit inside data {shape}")
        idx[a] = slice(0, like[a])
    return tuple(idx)


(register_op("slice_like")
    .describe("The leading part of data whose size on each listed axis equals shape_like's.")
    .set_attr_parser(SliceLikeParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", forward_shape("slice_like", lambda p, s: [
        _sliced_shape(_slice_like_index(p, s[0], s[1]), s[0])]))
    .set_attr("FInferType", lambda p, i, o: (i, [i[0] if i[0] is not None else o[0]]))
    .set_attr("FCompute<cpu>", lambda ctx, i, r, o, p: assign(
        o[0], r[0], i[0][_slice_like_index(p, i[0].shape, i[1].shape)]))
    .set_attr("FGradient", lambda node, og: [
        NodeEntry(make_node("_backward_slice_like", [og[0], node.inputs[0], node.inputs[1]],
                            node.params), 0),
        zeros_entry(node.inputs[1])])
    .set_attr("TExamples", [{"inputs": [(3, 4), (2, 3)], "grad": [0]},
                            {"inputs": [(3, 4), (2, 3)], "params": {"axes": "(1,)"}, "grad": [0]}])
    .add_argument("data", "NDArray-or-Symbol", "Array to slice")
    .add_argument("shape_like", "NDArray-or-Symbol", "Array whose sizes are matched"))
_register_backward("_backward_slice_like", SliceLikeParam, _slice_like_index, {
    "inputs": [(2, 3), (3, 4), (2, 3)]})
