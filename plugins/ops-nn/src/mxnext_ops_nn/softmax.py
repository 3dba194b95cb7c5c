"""softmax, log_softmax, softmin (axis, temperature, dtype; softmax also a length mask) and
SoftmaxActivation (instance / channel).

SoftmaxActivation's ``instance`` mode is a softmax over all axes but the first, as
documented, with its exact gradient; for data of more than 2 dims MXNet 1.9.1's
oneDNN build takes it over the last axis and its backward sums over axis 1 only.
"""

from __future__ import annotations

from typing import Annotated, Literal

import numpy as np
from opsdk import (DType, ElemwiseGradUseOut, ElemwiseShape, ElemwiseType, Field, FloatOnly,
                   MXNetError, Param, register_op)

from ._infer import (assign_shape, assign_type, backward_node, fail, grads_of, out_shapes,
                     output_entry)

FloatDType = Annotated[Literal["float16", "float32", "float64"], DType.__metadata__[0]]


class SoftmaxParam(Param):
    axis: int = Field(-1, description="Axis the normalization runs over.")
    temperature: float | None = Field(None, description="Divisor t of the inputs (None means 1).")
    dtype: FloatDType | None = Field(
        None, description="Output dtype; None keeps the input's.")
    use_length: bool | None = Field(
        False, description="Take a second input of per-row lengths and mask the positions past "
                           "them.")


def _uses_length(p):
    return bool(p.use_length)


def _wide(p):
    """The backward reads the forward data too (MXNet: dtype override or a length input)."""
    return p.dtype is not None or _uses_length(p)


def _acc(dtype):
    """Accumulation dtype: float16 sums in float32 (MXNet's safe accumulation)."""
    return np.result_type(dtype, np.float32)


def _axis(op, axis, ndim):
    if not -ndim <= axis < ndim:
        fail(op, f"axis={axis} out of range for data of {ndim} dims")
    return axis % ndim


def _length_mask(xp, length, shape, axis):
    """Boolean mask ``position < length`` over ``shape`` (length has shape minus ``axis``).
    The length dtype is checked here, when the op runs, as MXNet does: inference leaves it
    open, so a graph binds with a float32 length and fails on its first forward."""
    if length.dtype.kind not in "iu":
        raise MXNetError(f"Operator 'softmax': input 'length' must have an integer dtype, got "
                         f"{length.dtype.name}")
    lead = tuple(s for i, s in enumerate(shape) if i != axis)
    n = xp.expand_dims(length.reshape(lead).astype(np.int64), axis)
    pos = xp.arange(shape[axis]).reshape([-1 if i == axis else 1 for i in range(len(shape))])
    return pos < n


# -- forward ---------------------------------------------------------------------------------
def _make_forward(op, log, negate):
    def compute(ctx, inputs, req, outputs, params):
        xp, x = ctx.xp, inputs[0]
        if x.size == 0:
            return
        axis = _axis(op, params.axis, x.ndim)
        t = 1.0 if params.temperature is None else params.temperature
        z = x.astype(_acc(x.dtype))
        if negate:
            z = -z
        mask = _length_mask(xp, inputs[1], x.shape, axis) if _uses_length(params) else None
        if mask is not None:
            z = xp.where(mask, z, -xp.inf)
        m = z.max(axis=axis, keepdims=True)
        m = xp.where(xp.isfinite(m), m, 0)
        s = (z - m) / t
        e = xp.exp(s)
        total = e.sum(axis=axis, keepdims=True)
        y = s - xp.log(total) if log else e / total
        if mask is not None:
            y = xp.where(mask, y, 0)
        _put(outputs[0], req[0], y)
    compute.__name__ = f"{op}_forward"
    return compute


def _put(out, req, value):
    if req == 3:
        out += value.astype(out.dtype)
    elif req:
        out[...] = value


def _forward_shape(op):
    def infer(p, ins, outs):
        ins = list(ins)
        if _uses_length(p):
            if ins[0] is not None:
                axis = _axis(op, p.axis, len(ins[0]))
                lshape = tuple(s for i, s in enumerate(ins[0]) if i != axis) or (1,)
                assign_shape(op, ins, 1, lshape, "input 'length'")
        elif ins[0] is None and outs[0] is not None:
            ins[0] = tuple(outs[0])
        if ins[0] is None:
            return ins, list(outs)
        return ins, out_shapes(op, outs, [ins[0]])
    return infer


def _forward_type(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        if p.dtype is not None:
            assign_type(op, outs, 0, p.dtype, "output 0")
        else:
            if ins[0] is None and outs[0] is not None:
                ins[0] = np.dtype(outs[0])
            if ins[0] is not None:
                assign_type(op, outs, 0, ins[0], "output 0")
        return ins, outs
    return infer


def _gradient(bwd):
    """MXNet's SoftmaxFGradient: the backward reads the output (and, with a dtype override or
    a length input, the data and length too, for their dtypes / the mask)."""
    def grad(node, og):
        out = output_entry(node, 0)
        extra = list(node.inputs) if _wide(node.params) else []
        n = backward_node(bwd, node, [og[0], *extra, out])
        return grads_of(n, len(node.inputs))
    return grad


# -- backward --------------------------------------------------------------------------------
def _make_backward(op, log, negate):
    def compute(ctx, inputs, req, outputs, params):
        xp = ctx.xp
        og, out = inputs[0], inputs[-1]
        if _uses_length(params):
            if req[1]:
                _put(outputs[1], req[1], xp.zeros(outputs[1].shape, outputs[1].dtype))
        if not req[0] or og.size == 0:
            return
        axis = _axis(op, params.axis, og.ndim)
        t = 1.0 if params.temperature is None else params.temperature
        acc = _acc(og.dtype)
        og, out = og.astype(acc), out.astype(acc)
        if log:
            g = og - xp.exp(out) * og.sum(axis=axis, keepdims=True)
        else:
            g = out * (og - (og * out).sum(axis=axis, keepdims=True))
        if negate:
            g = -g
        if t != 1.0:
            g = g / t
        if _uses_length(params):
            g = xp.where(_length_mask(xp, inputs[2], og.shape, axis), g, 0)
        _put(outputs[0], req[0], g)
    compute.__name__ = f"{op}_backward"
    return compute


def _backward_inputs(p):
    if _uses_length(p):
        return ["ograd", "data", "length", "output"]
    return ["ograd", "data", "output"] if p.dtype is not None else ["ograd", "output"]


def _backward_shape(op):
    def infer(p, ins, outs):
        ins = list(ins)
        main = [i for i in range(len(ins)) if not (_uses_length(p) and i == 2)]
        known = next((ins[i] for i in main if ins[i] is not None), outs[0])
        new_outs = list(outs)
        if known is not None:
            for i in main:
                assign_shape(op, ins, i, known, f"input {_backward_inputs(p)[i]!r}")
            new_outs[0] = out_shapes(op, outs[:1], [known])[0]
        if _uses_length(p):
            length = ins[2] if ins[2] is not None else outs[1]
            if length is not None:
                assign_shape(op, ins, 2, length, "input 'length'")
                new_outs[1] = out_shapes(op, outs[1:], [length])[0]
        return ins, new_outs
    return infer


def _backward_type(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        out_t = ins[-1] if ins[-1] is not None else ins[0]
        if out_t is not None:
            assign_type(op, ins, 0, out_t, "input 'ograd'")
            assign_type(op, ins, len(ins) - 1, out_t, "input 'output'")
        data_t = ins[1] if _wide(p) else out_t
        if data_t is not None:
            assign_type(op, outs, 0, data_t, "output 0")
        if _uses_length(p) and ins[2] is not None:
            assign_type(op, outs, 1, ins[2], "output 1")
        return ins, outs
    return infer


def _backward_inplace(p):
    if _uses_length(p):
        return [(0, 0), (1, 0), (2, 1), (3, 0)]
    return [(0, 0), (1, 0), (2, 0)] if p.dtype is not None else [(0, 0), (1, 0)]


def _softmax_ref(log=False, negate=False):
    def ref(x, axis=-1, temperature=None, dtype=None, **_):
        z = (-x if negate else x).astype(np.float64) / (temperature or 1.0)
        z = z - z.max(axis, keepdims=True)
        y = z - np.log(np.exp(z).sum(axis, keepdims=True))
        return (y if log else np.exp(y)).astype(dtype or x.dtype)
    return ref


def _register(op, log, negate, doc, examples):
    bwd = f"_backward_{op}"
    b = (register_op(op).describe(doc).set_attr_parser(SoftmaxParam)
         .set_num_outputs(1)
         .set_attr("FListOutputNames", lambda p: ["output"])
         .set_attr("FInferShape", _forward_shape(op))
         .set_attr("FInferType", FloatOnly(_forward_type(op), inputs=(0,)))
         .set_attr("FInplaceOption", lambda p: [(0, 0)])
         .set_attr("FCompute<cpu>", _make_forward(op, log, negate))
         .set_attr("FGradient", _gradient(bwd))
         .set_attr("TExamples", examples)
         .add_argument("data", "NDArray-or-Symbol", "The input array."))
    if op == "softmax":
        b.set_num_inputs(lambda p: 2 if _uses_length(p) else 1)
        b.set_attr("FListInputNames", lambda p: ["data", "length"] if _uses_length(p) else ["data"])
        b.add_argument("length", "NDArray-or-Symbol", "Valid length of each row along axis.")
    else:
        b.set_num_inputs(1)
        b.set_attr("FInferShape", _single_input_shape(op))
    (register_op(bwd).describe(f"Gradient of {op}.").set_attr_parser(SoftmaxParam)
        .set_attr("TIsBackward", True)
        .set_num_inputs(lambda p: len(_backward_inputs(p)))
        .set_num_outputs(lambda p: 2 if _uses_length(p) else 1)
        .set_attr("FListInputNames", _backward_inputs)
        .set_attr("FInferShape", _backward_shape(bwd))
        .set_attr("FInferType", _backward_type(bwd))
        .set_attr("FInplaceOption", _backward_inplace)
        .set_attr("FCompute<cpu>", _make_backward(op, log, negate))
        .set_attr("TExamples", [{"inputs": [(2, 3), (2, 3)], "domain": [(-1, 1), (0, 1)]},
                                {"inputs": [(2, 3), (2, 3), (2, 3)],
                                 "domain": [(-1, 1), (-1, 1), (0, 1)],
                                 "dtype": ["float64", "float32", "float64"],
                                 "params": {"dtype": "float64", "axis": 0}}]))


def _single_input_shape(op):
    def infer(p, ins, outs):
        if p.use_length:
            fail(op, "use_length=True is only supported by softmax (MXNet 1.9 rejects it here)")
        return ElemwiseShape(1, 1, op)(p, ins, outs)
    return infer


_DOC = ("{what} along ``axis``: ``{formula}`` with temperature ``t`` (default 1). "
        "``dtype`` sets the output dtype (float16/32/64).")
_register("softmax", False, False,
          _DOC.format(what="Softmax", formula="exp(x/t) / sum(exp(x/t))")
          + " With ``use_length`` a second input gives per-row lengths: positions at or "
            "beyond the length are masked out and output 0.",
          [{"inputs": [(3, 4)], "ref": _softmax_ref()},
           {"inputs": [(2, 3, 4)], "params": {"axis": 1, "temperature": 2.5},
            "ref": _softmax_ref()},
           {"inputs": [(2, 5)], "params": {"dtype": "float64"}, "ref": _softmax_ref()},
           {"inputs": [(3, 4), np.array([4, 1, 2], np.int32)], "params": {"use_length": True}},
           {"inputs": [(2, 4, 3), np.array([[0, 2, 4], [3, 1, 4]], np.int64)],
            "params": {"use_length": True, "axis": 1, "temperature": 0.5}}])
_register("log_softmax", True, False,
          _DOC.format(what="Log-softmax", formula="x/t - log(sum(exp(x/t)))"),
          [{"inputs": [(3, 4)], "ref": _softmax_ref(log=True)},
           {"inputs": [(2, 3, 2)], "params": {"axis": 0, "temperature": 0.7},
            "ref": _softmax_ref(log=True)},
           {"inputs": [(2, 5)], "dtype": "float16", "params": {"dtype": "float32"}, "grad": False,
            "ref": _softmax_ref(log=True)}])
_register("softmin", False, True,
          _DOC.format(what="Softmin", formula="exp(-x/t) / sum(exp(-x/t))"),
          [{"inputs": [(3, 4)], "ref": _softmax_ref(negate=True)},
           {"inputs": [(4, 3)], "params": {"axis": 0, "temperature": 3.0},
            "ref": _softmax_ref(negate=True)}])


# -- SoftmaxActivation -----------------------------------------------------------------------
class SoftmaxActivationParam(Param):
    mode: Literal["instance", "channel"] = Field(
        "instance", description="'instance' normalizes each sample over all its axes but the "
                                "first; 'channel' normalizes over axis 1 at every position.")


def _activation_view(op, x, p):
    """``x`` as ``(n, k, rest)`` with the softmax taken over axis 1."""
    if p.mode == "channel":
        if x.ndim < 3:
            fail(op, f"mode='channel' needs data of at least 3 dims, got shape {x.shape}")
        return x.reshape(x.shape[0], x.shape[1], -1)
    return x.reshape(x.shape[0], -1, 1)


def _activation_forward(ctx, inputs, req, outputs, params):
    x = _activation_view("SoftmaxActivation", inputs[0], params)
    z = x.astype(_acc(x.dtype))
    e = ctx.xp.exp(z - z.max(axis=1, keepdims=True))
    _put(outputs[0], req[0], (e / e.sum(axis=1, keepdims=True)).reshape(outputs[0].shape))


def _activation_backward(ctx, inputs, req, outputs, params):
    og = _activation_view("SoftmaxActivation", inputs[0], params)
    out = _activation_view("SoftmaxActivation", inputs[1], params)
    g = out * (og - (og * out).sum(axis=1, keepdims=True))
    _put(outputs[0], req[0], g.reshape(outputs[0].shape))


def _activation_shape(p, ins, outs):
    known = ins[0] if ins[0] is not None else outs[0]
    if p.mode == "channel" and known is not None and len(known) < 3:
        fail("SoftmaxActivation",
             f"mode='channel' needs data of at least 3 dims, got {tuple(known)}")
    return ElemwiseShape(1, 1, "SoftmaxActivation")(p, ins, outs)


(register_op("SoftmaxActivation")
    .describe("Softmax over each instance (``mode='instance'``, all axes but the first) or "
              "over the channel axis 1 at each position (``mode='channel'``). Deprecated in "
              "MXNet in favour of ``softmax``.")
    .set_attr_parser(SoftmaxActivationParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _activation_shape)
    .set_attr("FInferType", FloatOnly(ElemwiseType(1, 1, "SoftmaxActivation")))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _activation_forward)
    .set_attr("FGradient", ElemwiseGradUseOut("_backward_SoftmaxActivation"))
    .set_attr("TExamples", [
        {"inputs": [(3, 5)], "ref": lambda x, **k: _softmax_ref()(x, axis=1)},
        {"inputs": [(2, 3, 4)],
         "ref": lambda x, **k: _softmax_ref()(x.reshape(2, -1), axis=1).reshape(x.shape)},
        {"inputs": [(2, 3, 2, 2)], "params": {"mode": "channel"},
         "ref": lambda x, **k: _softmax_ref()(x, axis=1)}])
    .add_argument("data", "NDArray-or-Symbol", "The input array."))
(register_op("_backward_SoftmaxActivation")
    .describe("Gradient of SoftmaxActivation from the output gradient and the output.")
    .set_attr_parser(SoftmaxActivationParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("TIsBackward", True)
    .set_attr("FInferShape", ElemwiseShape(2, 1, "_backward_SoftmaxActivation"))
    .set_attr("FInferType", ElemwiseType(2, 1, "_backward_SoftmaxActivation"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _activation_backward)
    .set_attr("TExamples", [{"inputs": [(2, 3), (2, 3)], "domain": [(-1, 1), (0, 1)]}]))
