"""SoftmaxOutput (alias Softmax) and softmax_cross_entropy.

SoftmaxOutput's forward is a softmax; its backward is MXNet's loss gradient
``(softmax(data) - onehot(label)) * grad_scale / normalizer``, which ignores
the head gradient (unless ``out_grad``); the label gets a zero gradient.

A class-index label should truncate to a class (or, with ``use_ignore``, to
``ignore_label``). An out-of-range one gets no target, as in MXNet (its row's gradient is
the softmax output: MXNet's own ``test_bucketing.py`` pads with such labels), with a
RuntimeWarning; a NaN one is an error; softmax_cross_entropy refuses both. Only host labels are checked
(see ``_bad_labels``).

With ``out_grad`` the gradient is multiplied by the head gradient, as documented;
MXNet 1.9.1's backward node is not given the head gradient and multiplies by the
softmax output instead.
"""

from __future__ import annotations

import math
import warnings
from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, MXNetError, NodeEntry, Param, ShapeError, register_op
from opsdk.shape import dims_prod, merge_shape

from ._infer import (assign_shape, backward_node, fail, grads_of, out_shapes, output_entry,
                     uniform_type)


class SoftmaxOutputParam(Param):
    grad_scale: float = Field(1.0, description="Multiplier of the data gradient.")
    ignore_label: float = Field(
        -1.0, description="Label value whose rows use_ignore drops from the gradient; 'valid' "
                          "normalization never counts it.")
    multi_output: bool = Field(
        False, description="Take the softmax over axis 1 of (batch, classes, ...) data, with "
                           "one label per position of the trailing axes.")
    use_ignore: bool = Field(
        False, description="Give rows labelled ignore_label a zero gradient.")
    preserve_shape: bool = Field(
        False, description="Take the softmax over the last axis, keeping all other axes.")
    normalization: Literal["null", "batch", "valid"] = Field(
        "null", description="Gradient divisor: 'null' none, 'batch' the label count, 'valid' "
                            "the count of labels other than ignore_label (multi_output also "
                            "divides 'null' and 'batch' by the positions per sample).")
    out_grad: bool = Field(False, description="Also multiply the gradient by the head "
                                              "gradient.")
    smooth_alpha: float = Field(
        0.0, ge=0.0, le=1.0,
        description="Label smoothing in the gradient: the true class's target becomes "
                    "1 - smooth_alpha and the other classes share smooth_alpha evenly.")


OP = "SoftmaxOutput"


def _rows(shape, p):
    """``shape`` as the 2-D (or, with multi_output, 3-D ``(n, k, rest)``) view the softmax
    runs on: over axis 1 of it."""
    if p.multi_output:
        return (shape[0], shape[1], math.prod(shape[2:]))
    if p.preserve_shape:
        return (math.prod(shape[:-1]), shape[-1] if shape else 1)
    return (shape[0], math.prod(shape[1:]))


def _softmax(xp, x, axis, out=None):
    """Softmax over ``axis`` in float32 or wider, into ``out`` when given (``x``'s type and
    shape; it may be ``x`` itself)."""
    z = x if out is not None else x.astype(np.result_type(x.dtype, np.float32))
    e = xp.subtract(z, z.max(axis=axis, keepdims=True), out=out)
    xp.exp(e, out=e)
    e /= e.sum(axis=axis, keepdims=True)
    return e


def _forward(ctx, inputs, req, outputs, params):
    x, out = inputs[0], outputs[0]
    rows = _rows(x.shape, params)
    if req[0] in (1, 2) and x.dtype == out.dtype and x.dtype.itemsize >= 4 and \
            out.flags.c_contiguous:
        _softmax(ctx.xp, x.reshape(rows), 1, out.reshape(rows))
        return
    _put(out, req[0], _softmax(ctx.xp, x.reshape(rows), 1).reshape(x.shape))


def _put(out, req, value):
    if req == 3:
        out += value.astype(out.dtype)
    elif req:
        out[...] = value


def _label_shapes(dshape, p):
    """Label shapes MXNet accepts for class-index labels (the first is the one it infers)."""
    if p.multi_output:
        n = dshape[0]
        return [(n, dims_prod(dshape[2:])), (n, *dshape[2:]),
                (n, 1, *dshape[2:])]
    return [tuple(dshape[:-1])]


def _merge_label(label, candidates):
    """``label`` merged with the first of the ``candidates`` it fits (None if none)."""
    for c in candidates:
        try:
            return merge_shape(OP, label, c)
        except ShapeError:
            pass
    return None


def _shape(p, ins, outs):
    ins = list(ins)
    given = ins[0] is not None          # the label shape is inferred from a given data shape
    if ins[0] is None and outs[0] is not None:
        ins[0] = tuple(outs[0])
    data = ins[0]
    if data is None:
        return ins, list(outs)
    if p.multi_output and len(data) < 2:
        fail(OP, f"multi_output needs data of at least 2 dims, got {data}")
    label = ins[1]
    if (label is None and given) or (label is not None and tuple(label) != tuple(data)):
        allowed = _label_shapes(data, p)
        if label is None:
            ins[1] = allowed[0]
        else:
            ins[1] = _merge_label(label, allowed + [tuple(data)])
            if ins[1] is None:
                fail(OP, f"input 'label' has shape {tuple(label)}, expected "
                         f"{' or '.join(map(str, allowed))} (class indices for data {data}) or "
                         f"{data} (probabilities)")
        if len(ins[1]) != len(data) and not (p.multi_output or p.preserve_shape) \
                and len(data) < 2:
            fail(OP, f"class-index labels need data of at least 2 dims, got {data} "
                     f"(set preserve_shape=True for one distribution)")
    return ins, out_shapes(OP, outs, [data])


def _count(p, batch, labels, ignore):
    """The gradient's divisor for ``p.normalization``; only "valid" reads the labels (a
    device-to-host read, which waits for the device)."""
    if p.normalization == "null":
        return 1
    if p.normalization == "batch":
        return batch
    return max(int((labels != ignore).sum()), 1)


def _bad_labels(op, xp, labels, k, ignore=None):
    """What is wrong, unless every label truncates to a class index in [0, k) (or to
    ``ignore``): MXNet gives an out-of-range or NaN label no target or a clipped one. Host
    labels only
    (a vectorised min/max); reading device labels would wait for the device every step, so
    those go unchecked."""
    if xp is not np or not labels.size:
        return None
    t = np.trunc(labels)
    if t.min() >= 0 and t.max() < k:                     # NaN fails both
        return None
    bad = ~((t >= 0) & (t < k))
    if ignore is not None:
        bad &= t != ignore
    if not bad.any():
        return None
    also = f" or ignore_label={ignore}" if ignore is not None else ""
    return f"Operator {op!r}: label {labels[np.argmax(bad)]} is not a class index in [0, {k}){also}"


def _loss_grad(xp, out, label, p):
    """MXNet's SoftmaxOutput data gradient for the softmax output ``out`` (before out_grad)."""
    if label.shape == out.shape:                        # probabilities as labels
        return (out - label) * p.grad_scale
    rows = _rows(out.shape, p)
    o = out.reshape(rows).astype(np.result_type(out.dtype, np.float32))
    k = rows[1]
    raw = label.reshape(-1)
    # the labels read: with data of more than 2 dims and neither flag, MXNet reads the
    # first ``n`` entries of the flattened label
    read = raw if p.multi_output else raw[:rows[0]]
    if xp is np and read.size and np.isnan(read.min()):   # no class, whatever the padding
        raise MXNetError(f"Operator {OP!r}: a label is NaN (label {read.shape}); labels are "
                         f"class indices in [0, {k})")
    bad = _bad_labels(OP, xp, read, k, int(p.ignore_label) if p.use_ignore else None)
    if bad is not None:
        warnings.warn(f"{bad}; such rows get no target, as in MXNet", RuntimeWarning)
    flat = xp.trunc(raw).astype(np.int64)
    ignore = int(p.ignore_label)
    if p.multi_output:
        idx = flat.reshape(rows[0], rows[2])
        hot = xp.arange(k)[None, :, None] == idx[:, None, :]
        g = o - hot
        if p.use_ignore:
            g = g * (idx != ignore)[:, None, :]
        count = _count(p, rows[0], idx, ignore)
        return g * (p.grad_scale / (1 if p.normalization == "valid" else rows[2]) / count)
    idx = flat[:rows[0]]                                  # one class index per row
    hot = xp.arange(k)[None, :] == idx[:, None]
    if p.smooth_alpha:
        g = o - xp.where(hot, 1.0 - p.smooth_alpha, p.smooth_alpha / (k - 1))
    else:
        g = o - hot
    if p.use_ignore:
        g = g * (idx != ignore)[:, None]
    count = _count(p, flat.size, flat, ignore)
    return g * (p.grad_scale / count)


def _backward(ctx, inputs, req, outputs, params):
    out, label = inputs[0], inputs[1]
    if req[0]:
        g = _loss_grad(ctx.xp, out, label, params).reshape(out.shape)
        if params.out_grad:
            g = g * inputs[2]
        _put(outputs[0], req[0], g)
    if req[1]:
        _put(outputs[1], req[1], ctx.xp.zeros(label.shape, outputs[1].dtype))


def _gradient(node, og):
    """Reads the output and the label (and the head gradient only with ``out_grad``)."""
    ins = [output_entry(node, 0), node.inputs[1]] + ([og[0]] if node.params.out_grad else [])
    return grads_of(backward_node("_backward_SoftmaxOutput", node, ins), 2)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    for i, k in ((0, 0), (1, 1)):
        if ins[i] is None and outs[k] is not None:
            ins[i] = tuple(outs[k])
    if p.out_grad and ins[0] is not None:
        assign_shape("_backward_SoftmaxOutput", ins, 2, ins[0], "input 'ograd'")
    new = [ins[0], ins[1]]
    if None in new:
        return ins, outs
    return ins, out_shapes("_backward_SoftmaxOutput", outs, new)


def _sm_ref(rows_of):
    def ref(x, label, **kw):
        p = SoftmaxOutputParam(**kw)
        z = x.reshape(rows_of(x.shape, p)).astype(np.float64)
        e = np.exp(z - z.max(1, keepdims=True))
        return (e / e.sum(1, keepdims=True)).reshape(x.shape).astype(x.dtype)
    return ref


_NAMES = ["data", "label"]
(register_op(OP).add_alias("Softmax")
    .describe("Softmax forward; backward gives the cross-entropy gradient "
              "``(softmax(data) - label) * grad_scale / normalizer`` with label class indices "
              "(or probabilities when label has data's shape), ignoring the head gradient "
              "unless ``out_grad``. ``multi_output``: softmax over axis 1; ``preserve_shape``: "
              "over the last axis; otherwise over all axes but the first.")
    .set_attr_parser(SoftmaxOutputParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FListOutputNames", lambda p: ["output"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(uniform_type(OP, _NAMES)))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _gradient)
    .set_attr("TExamples", [
        {"inputs": [(4, 5), (4,)], "domain": [(-2, 2), (0, 5)], "grad": False,
         "ref": _sm_ref(_rows)},
        {"inputs": [(2, 3, 4), (2, 4)], "domain": [(-2, 2), (0, 3)], "grad": False,
         "params": {"multi_output": True, "use_ignore": True, "normalization": "valid"},
         "ref": _sm_ref(_rows)},
        {"inputs": [(2, 3, 4), (2, 3)], "domain": [(-2, 2), (0, 4)], "grad": False,
         "params": {"preserve_shape": True, "smooth_alpha": 0.1}, "ref": _sm_ref(_rows)},
        {"inputs": [(3, 4), (3, 4)], "domain": [(-2, 2), (0, 1)], "grad": False,
         "params": {"grad_scale": 2.0}, "ref": _sm_ref(_rows)}])
    .add_argument("data", "NDArray-or-Symbol", "Scores to normalize.")
    .add_argument("label", "NDArray-or-Symbol",
                  "Class indices, or probabilities shaped like data."))
(register_op("_backward_SoftmaxOutput")
    .describe("SoftmaxOutput's loss gradient from its output and label (and head gradient "
              "with out_grad).")
    .set_attr_parser(SoftmaxOutputParam).set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: 3 if p.out_grad else 2).set_num_outputs(2)
    .set_attr("FListInputNames",
              lambda p: ["output", "label", "ograd"] if p.out_grad else ["output", "label"])
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", uniform_type("_backward_SoftmaxOutput",
                                         ["output", "label", "ograd"]))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(4, 5), (4,)], "domain": [(0, 1), (-1, 5)],
         "params": {"use_ignore": True, "normalization": "batch"}},
        {"inputs": [(2, 3, 4), (2, 4), (2, 3, 4)], "domain": [(0, 1), (0, 3), (-1, 1)],
         "params": {"multi_output": True, "out_grad": True}}]))


# -- softmax_cross_entropy -------------------------------------------------------------------
CE = "softmax_cross_entropy"


def _ce_shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if data is None:
        return ins, list(outs)
    if len(data) != 2:
        fail(CE, f"input 'data' must be 2-D, got shape {tuple(data)}")
    assign_shape(CE, ins, 1, (data[0],), "input 'label'")
    return ins, out_shapes(CE, outs, [(1,)])


def _ce_pick(xp, data, label):
    bad = _bad_labels(CE, xp, label, data.shape[1])
    if bad is not None:
        raise MXNetError(bad)
    prob = _softmax(xp, data, 1)
    # device labels go unchecked and are clipped
    idx = xp.clip(xp.trunc(label).astype(np.int64), 0, data.shape[1] - 1)
    return prob, idx


def _ce_forward(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    prob, idx = _ce_pick(xp, *inputs)
    chosen = prob[xp.arange(prob.shape[0]), idx]
    _put(outputs[0], req[0], -xp.log(xp.maximum(chosen, 1e-8)).sum(keepdims=True))


def _ce_backward(ctx, inputs, req, outputs, params):
    xp = ctx.xp
    og, data, label = inputs
    if req[0]:
        prob, idx = _ce_pick(xp, data, label)
        prob[xp.arange(prob.shape[0]), idx] -= 1
        _put(outputs[0], req[0], prob * og.reshape(()))
    if req[1]:
        _put(outputs[1], req[1], xp.zeros(label.shape, outputs[1].dtype))


def _ce_ref(x, label):
    z = x.astype(np.float64)
    logp = z - z.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    return np.array([-logp[np.arange(len(x)), label.astype(int)].sum()], x.dtype)


def _ce_gradient(node, og):
    n = backward_node("_backward_softmax_cross_entropy", node, [og[0], *node.inputs])
    return [NodeEntry(n, 0, 0), NodeEntry(n, 1, 0)]


(register_op(CE)
    .describe("Cross entropy of softmax(data) and class-index labels, summed over the batch: "
              "``-sum_i log(softmax(data)[i, label[i]])`` (a shape (1,) output).")
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FInferShape", _ce_shape)
    .set_attr("FInferType", FloatOnly(uniform_type(CE, _NAMES)))
    .set_attr("FCompute<cpu>", _ce_forward)
    .set_attr("FGradient", _ce_gradient)
    .set_attr("TExamples", [{"inputs": [(4, 3), (4,)], "domain": [(-2, 2), (0, 3)],
                             "grad": [0], "ref": _ce_ref}])
    .add_argument("data", "NDArray-or-Symbol", "Scores, (batch, classes).")
    .add_argument("label", "NDArray-or-Symbol", "Class index per row, (batch,)."))
(register_op("_backward_softmax_cross_entropy")
    .describe("Gradient of softmax_cross_entropy: head * (softmax(data) - onehot(label)).")
    .set_attr("TIsBackward", True).set_num_inputs(3).set_num_outputs(2)
    .set_attr("FInferShape", lambda p, ins, outs: (
        list(ins), out_shapes("_backward_softmax_cross_entropy", outs, ins[1:])
        if None not in ins[1:] else list(outs)))
    .set_attr("FInferType", uniform_type("_backward_softmax_cross_entropy",
                                         ["ograd", "data", "label"]))
    .set_attr("FCompute<cpu>", _ce_backward)
    .set_attr("TExamples", [{"inputs": [(1,), (4, 3), (4,)],
                             "domain": [(-1, 1), (-2, 2), (0, 3)]}]))
