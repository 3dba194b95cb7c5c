"""SequenceMask, SequenceLast, SequenceReverse over data laid out ``(seq, batch, ...)``
(``axis=0``) or ``(batch, seq, ...)`` (``axis=1``), with optional per-example lengths.

Lengths are truncated to integers and clipped to ``[0, seq]`` (MXNet reads out of
bounds for lengths beyond the sequence); SequenceLast takes the last step for a
length of 0 or less as step 0.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, Param, register_op

from ._infer import assign_shape, assign_type, backward_node, fail, grads_of, out_shapes


class SequenceMaskParam(Param):
    use_sequence_length: bool = Field(
        False, description="Add a sequence_length input giving each example's valid "
                           "number of steps; otherwise every step counts.")
    value: float = Field(0.0, description="What masked steps are set to.")
    axis: int = Field(0, ge=0, le=1, description="Axis holding the steps: 0 (steps first) or "
                                                 "1 (batch first).")


class SequenceLastParam(Param):
    use_sequence_length: bool = Field(
        False, description="Add a sequence_length input giving each example's valid "
                           "number of steps; otherwise every step counts.")
    axis: int = Field(0, ge=0, le=1, description="Axis holding the steps: 0 (steps first) or "
                                                 "1 (batch first).")


class SequenceReverseParam(Param):
    use_sequence_length: bool = Field(
        False, description="Add a sequence_length input giving each example's valid "
                           "number of steps; otherwise every step counts.")
    axis: int = Field(0, ge=0, le=0, description="Axis holding the steps; only 0 (steps "
                                                 "first) is supported.")


def _input_names(p):
    return ["data", "sequence_length"] if p.use_sequence_length else ["data"]


def _put(out, req, value):
    if req == 3:
        out += value
    elif req:
        out[...] = value


def _lengths(xp, p, inputs, steps, batch):
    """Per-example lengths as int64 in ``[0, steps]`` (all ``steps`` without the input)."""
    if not p.use_sequence_length:
        return xp.full(batch, steps, np.int64)
    return xp.clip(xp.trunc(inputs[-1]).astype(np.int64), 0, steps)


def _dims(shape, axis):
    """``(steps, batch)`` of a data shape."""
    return (shape[0], shape[1]) if axis == 0 else (shape[1], shape[0])


def _step_index(xp, shape, axis):
    """Step number of every (step, batch) position, shaped to broadcast against data."""
    t = xp.arange(shape[axis]).reshape((-1, 1) if axis == 0 else (1, -1))
    return t.reshape(t.shape + (1,) * (len(shape) - 2))


def _per_batch(xp, values, shape, axis):
    v = values.reshape((1, -1) if axis == 0 else (-1, 1))
    return v.reshape(v.shape + (1,) * (len(shape) - 2))


def _forward_shape(op, out_of):
    def infer(p, ins, outs):
        ins = list(ins)
        data = ins[0]
        if data is None:
            return ins, list(outs)
        if len(data) < 2:
            fail(op, f"input 'data' must have at least 2 dims, got {tuple(data)}")
        batch = data[1] if p.axis == 0 else data[0]
        if p.use_sequence_length:
            assign_shape(op, ins, 1, (batch,), "input 'sequence_length'")
        return ins, out_shapes(op, outs, [out_of(data, p)])
    return infer


def _forward_type(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        given = ins[0]
        t = ins[0] if ins[0] is not None else outs[0]
        if t is not None:
            assign_type(op, ins, 0, t, "input 'data'")
            assign_type(op, outs, 0, t, "output 0")
        if p.use_sequence_length and ins[1] is None and given is not None:
            ins[1] = np.dtype(given)    # as MXNet; a known length dtype is left as is
        return ins, outs
    return infer


def _backward_type(op, grad_like):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        if ins[grad_like] is not None:
            assign_type(op, outs, 0, ins[grad_like], "output 0")
        if p.use_sequence_length and ins[-1] is not None:
            assign_type(op, outs, 1, ins[-1], "output 1")
        return ins, outs
    return infer


def _backward_shape(op, grad_like):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        new = [ins[grad_like]] + ([ins[-1]] if p.use_sequence_length else [])
        if any(s is None for s in new):
            return ins, outs
        return ins, out_shapes(op, outs, new)
    return infer


def _zero_length_grad(xp, p, req, outputs):
    if p.use_sequence_length and req[1]:
        _put(outputs[1], req[1], xp.zeros(outputs[1].shape, outputs[1].dtype))


def _register(name, param, doc, forward, backward, out_of, bwd_reads_data, inplace, examples,
              bwd_examples):
    bwd = f"_backward_{name}"

    def gradient(node, og):
        extra = [node.inputs[0]] if bwd_reads_data else []
        length = [node.inputs[1]] if node.params.use_sequence_length else []
        return grads_of(backward_node(bwd, node, [og[0], *extra, *length]), len(node.inputs))

    def bwd_names(p):
        return ["ograd"] + (["data"] if bwd_reads_data else []) + \
            (["sequence_length"] if p.use_sequence_length else [])

    grad_like = 1 if bwd_reads_data else 0
    fwd = (register_op(name).describe(doc).set_attr_parser(param)
           .set_num_inputs(lambda p: 2 if p.use_sequence_length else 1).set_num_outputs(1)
           .set_attr("FListInputNames", _input_names)
           .set_attr("FListOutputNames", lambda p: ["output"])
           .set_attr("FInferShape", _forward_shape(name, out_of))
           .set_attr("FInferType", _forward_type(name))
           .set_attr("FCompute<cpu>", forward)
           .set_attr("FGradient", gradient)
           .set_attr("TExamples", examples)
           .add_argument("data", "NDArray-or-Symbol",
                         "Sequences, (steps, batch, ...) with axis=0 or (batch, steps, ...) "
                         "with axis=1.")
           .add_argument("sequence_length", "NDArray-or-Symbol",
                         "Valid number of steps of each example, (batch,)."))
    bw = (register_op(bwd).describe(f"Gradient of {name}.").set_attr_parser(param)
          .set_attr("TIsBackward", True)
          .set_num_inputs(lambda p: len(bwd_names(p)))
          .set_num_outputs(lambda p: 2 if p.use_sequence_length else 1)
          .set_attr("FListInputNames", bwd_names)
          .set_attr("FInferShape", _backward_shape(bwd, grad_like))
          .set_attr("FInferType", _backward_type(bwd, grad_like))
          .set_attr("FCompute<cpu>", backward)
          .set_attr("TExamples", bwd_examples))
    if inplace:
        fwd.set_attr("FInplaceOption", lambda p: [(0, 0)])
        bw.set_attr("FInplaceOption", lambda p: [(0, 0)])


# -- SequenceMask ------------------------------------------------------------------------------
def _mask(xp, x, p, inputs):
    steps, batch = _dims(x.shape, p.axis)
    n = _lengths(xp, p, inputs, steps, batch)
    return _step_index(xp, x.shape, p.axis) < _per_batch(xp, n, x.shape, p.axis)


def _mask_forward(ctx, inputs, req, outputs, params):
    x = inputs[0]
    value = x.dtype.type(params.value)
    _put(outputs[0], req[0], ctx.xp.where(_mask(ctx.xp, x, params, inputs), x, value))


def _mask_backward(ctx, inputs, req, outputs, params):
    og = inputs[0]
    if req[0]:
        _put(outputs[0], req[0], ctx.xp.where(_mask(ctx.xp, og, params, inputs), og, 0))
    _zero_length_grad(ctx.xp, params, req, outputs)


def _mask_ref(x, lengths=None, axis=0, value=0.0, **_):
    out = np.array(x)
    for b in range(x.shape[1 - axis] if lengths is not None else 0):
        n = int(lengths[b])
        if axis == 0:
            out[n:, b] = value
        else:
            out[b, n:] = value
    return out


_register(
    "SequenceMask", SequenceMaskParam,
    "Sets the steps of each sequence at or beyond its length (``sequence_length``) to "
    "``value``; without lengths the input is returned unchanged.",
    _mask_forward, _mask_backward, lambda d, p: tuple(d), False, True,
    [{"inputs": [(4, 3, 2), np.array([1, 4, 0], np.float32)],
      "params": {"use_sequence_length": True, "value": -1.5}, "grad": [0], "ref": _mask_ref},
     {"inputs": [(3, 5), np.array([2, 3, 5], np.int32)],
      "params": {"use_sequence_length": True, "axis": 1}, "grad": [0], "ref": _mask_ref},
     {"inputs": [(3, 2)], "ref": lambda x, **k: x}],
    [{"inputs": [(4, 3, 2), (3,)], "domain": [(-1, 1), (0, 5)],
      "params": {"use_sequence_length": True}}])


# -- SequenceLast ------------------------------------------------------------------------------
def _last_index(xp, p, inputs, shape):
    steps, batch = _dims(shape, p.axis)
    n = _lengths(xp, p, inputs, steps, batch)
    return xp.maximum(n - 1, 0), xp.arange(batch)


def _last_forward(ctx, inputs, req, outputs, params):
    x = inputs[0]
    t, b = _last_index(ctx.xp, params, inputs, x.shape)
    _put(outputs[0], req[0], x[t, b] if params.axis == 0 else x[b, t])


def _last_backward(ctx, inputs, req, outputs, params):
    og, x = inputs[0], inputs[1]
    if req[0]:
        g = ctx.xp.zeros(x.shape, og.dtype)
        t, b = _last_index(ctx.xp, params, inputs, x.shape)
        if params.axis == 0:
            g[t, b] = og
        else:
            g[b, t] = og
        _put(outputs[0], req[0], g)
    _zero_length_grad(ctx.xp, params, req, outputs)


def _last_ref(x, lengths=None, axis=0, **_):
    steps = x.shape[axis]
    rows = []
    for b in range(x.shape[1 - axis]):
        t = steps - 1 if lengths is None else max(int(lengths[b]) - 1, 0)
        rows.append(x[t, b] if axis == 0 else x[b, t])
    return np.stack(rows)


_register(
    "SequenceLast", SequenceLastParam,
    "The last step of each sequence: step ``sequence_length - 1`` (the last one without "
    "lengths), giving shape ``(batch, ...)``.",
    _last_forward, _last_backward,
    lambda d, p: ((d[1] if p.axis == 0 else d[0]),) + tuple(d[2:]), True, False,
    [{"inputs": [(4, 3, 2), np.array([1, 4, 2], np.float32)],
      "params": {"use_sequence_length": True}, "grad": [0], "ref": _last_ref},
     {"inputs": [(3, 5, 2), np.array([5, 1, 3], np.int64)],
      "params": {"use_sequence_length": True, "axis": 1}, "grad": [0], "ref": _last_ref},
     {"inputs": [(3, 4)], "ref": _last_ref}],
    [{"inputs": [(3, 2), (4, 3, 2), (3,)], "domain": [(-1, 1), (-1, 1), (0, 5)],
      "params": {"use_sequence_length": True}},
     {"inputs": [(3,), (3, 2)], "params": {"axis": 1}}])


# -- SequenceReverse ---------------------------------------------------------------------------
def _reversed(xp, x, p, inputs):
    """``x`` with the first ``length`` steps of each sequence reversed (the rest in place)."""
    steps, batch = x.shape[0], x.shape[1]
    n = _lengths(xp, p, inputs, steps, batch)
    t = xp.arange(steps)[:, None]
    src = xp.where(t < n[None, :], n[None, :] - 1 - t, t)
    src = src.reshape(src.shape + (1,) * (x.ndim - 2))
    return xp.take_along_axis(x, xp.broadcast_to(src, x.shape), axis=0)


def _reverse_forward(ctx, inputs, req, outputs, params):
    _put(outputs[0], req[0], _reversed(ctx.xp, inputs[0], params, inputs))


def _reverse_backward(ctx, inputs, req, outputs, params):
    if req[0]:      # the permutation is its own inverse (and transpose)
        _put(outputs[0], req[0], _reversed(ctx.xp, inputs[0], params, inputs))
    _zero_length_grad(ctx.xp, params, req, outputs)


def _reverse_ref(x, lengths=None, **_):
    out = np.array(x)
    for b in range(x.shape[1]):
        n = x.shape[0] if lengths is None else int(lengths[b])
        out[:n, b] = x[:n, b][::-1]
    return out


_register(
    "SequenceReverse", SequenceReverseParam,
    "Reverses the first ``sequence_length`` steps of each sequence along axis 0 (the whole "
    "sequence without lengths); steps beyond the length stay in place.",
    _reverse_forward, _reverse_backward, lambda d, p: tuple(d), False, False,
    [{"inputs": [(4, 3, 2), np.array([1, 4, 3], np.float32)],
      "params": {"use_sequence_length": True}, "grad": [0], "ref": _reverse_ref},
     {"inputs": [(5, 2)], "ref": _reverse_ref}],
    [{"inputs": [(4, 3, 2), (3,)], "domain": [(-1, 1), (0, 5)],
      "params": {"use_sequence_length": True}}])
