"""CTCLoss (aliases ctc_loss, _contrib_CTCLoss, _contrib_ctc_loss): connectionist temporal
classification loss of activations ``(seq_len, batch, alphabet)`` against padded labels.

The forward computes the loss per example and, as MXNet's (warp-ctc) kernel does,
the gradient with respect to the activations into a hidden second output; the
backward scales that by the head gradient. The alpha/beta recursions run in log
space, vectorised over the batch and the extended label positions, one loop
over time steps. An example whose labels cannot fit its sequence (labels plus
repeats longer than it) has loss 0, as in MXNet, and a zero gradient.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, MXNetError, NodeEntry, Param, assign, register_op

from ._infer import assign_shape, assign_type, backward_node, fail, out_shapes, uniform_type

OP = "CTCLoss"


class CTCLossParam(Param):
    use_data_lengths: bool = Field(
        False, description="Take each example's sequence length from the data_lengths input; "
                           "otherwise every example spans the whole sequence axis.")
    use_label_lengths: bool = Field(
        False, description="Take each example's label length from the label_lengths input; "
                           "otherwise a label ends where its padding value first appears (0 "
                           "with blank_label='first', -1 with 'last').")
    blank_label: Literal["first", "last"] = Field(
        "first", description="Which alphabet entry is the blank. 'first': entry 0, real "
                             "labels are 1 to alphabet_size-1 and padding is 0. 'last': entry "
                             "alphabet_size-1, real labels are 0 to alphabet_size-2 and padding "
                             "is -1.")


def _input_names(p):
    return (["data", "label"] + (["data_lengths"] if p.use_data_lengths else [])
            + (["label_lengths"] if p.use_label_lengths else []))


def _shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and outs[1] is not None:
        ins[0] = tuple(outs[1])
    data, label = ins[0], ins[1]
    if data is None or label is None:
        return ins, list(outs)
    if len(data) != 3:
        fail(OP, f"input 'data' must be 3-D (sequence, batch, alphabet), got {tuple(data)}")
    if len(label) != 2:
        fail(OP, f"input 'label' must be 2-D (batch, label length), got {tuple(label)}")
    if label[0] != data[1]:
        fail(OP, f"input 'label' has batch size {label[0]} ({tuple(label)}), data has "
                 f"{data[1]} ({tuple(data)})")
    if label[1] > data[0]:
        fail(OP, f"labels of length {label[1]} ({tuple(label)}) cannot exceed the sequence "
                 f"length {data[0]} of data {tuple(data)}")
    for k, name in enumerate(_input_names(p)[2:], start=2):
        assign_shape(OP, ins, k, (data[1],), f"input {name!r}")
    return ins, out_shapes(OP, outs, [(data[1],), tuple(data)])


def _type(p, ins, outs):
    ins, outs = list(ins), list(outs)
    t = ins[0] if ins[0] is not None else next((o for o in outs if o is not None), None)
    if t is not None:
        assign_type(OP, ins, 0, t, "input 'data'")
        assign_type(OP, outs, 0, t, "output 0")
        assign_type(OP, outs, 1, t, "output 1")
    return ins, outs


def _labels(xp, p, inputs, alphabet):
    """``(labels (B, L) int64, lengths (B,))``: packed labels as warp-ctc reads them."""
    label = xp.trunc(inputs[1]).astype(np.int64)
    batch, width = label.shape
    if p.use_label_lengths:
        lengths = xp.clip(xp.trunc(inputs[-1]).astype(np.int64), 0, width)
    else:                  # up to the first padding value
        pad = label == (0 if p.blank_label == "first" else -1)
        lengths = xp.where(pad.any(axis=1), pad.argmax(axis=1), width)
    used = xp.arange(width)[None, :] < lengths[:, None]
    if bool(((label < 0) | (label >= alphabet))[used].any()):
        raise MXNetError(f"Operator {OP!r}: label values must lie in [0, {alphabet}) for an "
                         f"alphabet of size {alphabet}")
    return xp.where(used, label, 0), lengths


def _logaddexp3(xp, a, b, c):
    return xp.logaddexp(xp.logaddexp(a, b), c)


def _shift(xp, a, k):
    """``a`` moved ``k`` places right (k > 0) or left (k < 0) along axis 1, -inf filled."""
    out = xp.full_like(a, -xp.inf)
    if k > 0:
        out[:, k:] = a[:, :-k]
    else:
        out[:, :k] = a[:, -k:]
    return out


def ctc_loss_and_grad(xp, data, labels, label_len, data_len, blank, need_grad):
    """Loss (B,) and, if ``need_grad``, its gradient wrt ``data`` (T, B, A), in float64."""
    steps, batch, alphabet = data.shape
    x = data.astype(np.float64)
    m = x.max(axis=2, keepdims=True)
    logp = x - m - xp.log(xp.exp(x - m).sum(axis=2, keepdims=True))
    width = 2 * (int(label_len.max()) if batch else 0) + 1
    ext = xp.full((batch, width), blank, np.int64)          # blank, l1, blank, l2, ..., blank
    ext[:, 1::2] = labels[:, :width // 2]
    n_ext = 2 * label_len + 1
    valid = xp.arange(width)[None, :] < n_ext[:, None]
    ext = xp.where(valid, ext, blank)
    skip = xp.zeros((batch, width), bool)                    # s-2 -> s allowed
    skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
    bidx = xp.arange(batch)[:, None]
    lp = xp.where(valid[None], logp[:, bidx, ext], -xp.inf)  # (T, B, S) emission log-probs
    repeats = (labels[:, 1:] == labels[:, :-1]) & (xp.arange(1, labels.shape[1])[None, :]
                                                   < label_len[:, None])
    feasible = (label_len + repeats.sum(axis=1) <= data_len) & (data_len > 0)
    last_t = xp.maximum(data_len - 1, 0)

    alpha = xp.full((steps, batch, width), -xp.inf)
    alpha[0, :, 0] = lp[0, :, 0]
    if width > 1:
        alpha[0, :, 1] = lp[0, :, 1]
    for t in range(1, steps):
        prev = alpha[t - 1]
        two = xp.where(skip, _shift(xp, prev, 2), -xp.inf)
        alpha[t] = _logaddexp3(xp, prev, _shift(xp, prev, 1), two) + lp[t]
    final = alpha[last_t, xp.arange(batch)]                  # (B, S) at each example's end
    end = n_ext - 1
    log_z = xp.logaddexp(final[xp.arange(batch), end],
                         xp.where(end > 0, final[xp.arange(batch), xp.maximum(end - 1, 0)],
                                  -xp.inf))
    loss = xp.where(feasible, -log_z, 0.0)
    if not need_grad:
        return loss, None

    beta = xp.full((steps, batch, width), -xp.inf)
    skip_from = _shift(xp, skip.astype(np.float64), -2) > 0  # s -> s+2 allowed
    ends = xp.full((batch, width), -xp.inf)
    cur = ends
    for t in range(steps - 1, -1, -1):
        two = xp.where(skip_from, _shift(xp, cur, -2), -xp.inf)
        rec = _logaddexp3(xp, cur, _shift(xp, cur, -1), two) + lp[t]
        start = ends.copy()
        start[xp.arange(batch), end] = lp[t, xp.arange(batch), end]
        prev_end = xp.maximum(end - 1, 0)
        start[xp.arange(batch), prev_end] = xp.where(end > 0, lp[t, xp.arange(batch), prev_end],
                                                     start[xp.arange(batch), prev_end])
        cur = xp.where((t == last_t)[:, None], start, xp.where((t < last_t)[:, None], rec, -xp.inf))
        beta[t] = cur
    # occupation probability of each extended label position, then summed per alphabet entry
    gamma = xp.where(xp.isfinite(lp), alpha + beta - lp - log_z[None, :, None], -xp.inf)
    gamma = xp.exp(xp.where(feasible[None, :, None], gamma, -xp.inf))
    flat = ((xp.arange(steps)[:, None, None] * batch + bidx[None]) * alphabet + ext[None])
    occ = xp.bincount(flat.reshape(-1), weights=gamma.reshape(-1),
                      minlength=steps * batch * alphabet).reshape(steps, batch, alphabet)
    inside = (xp.arange(steps)[:, None] < data_len[None, :]) & feasible[None, :]
    grad = xp.where(inside[:, :, None], xp.exp(logp) - occ, 0.0)
    return loss, grad


def _forward(ctx, inputs, req, outputs, params):
    xp, data = ctx.xp, inputs[0]
    steps, batch, alphabet = data.shape
    labels, label_len = _labels(xp, params, inputs, alphabet)
    if params.use_data_lengths:
        data_len = xp.clip(xp.trunc(inputs[2]).astype(np.int64), 0, steps)
    else:
        data_len = xp.full(batch, steps, np.int64)
    blank = 0 if params.blank_label == "first" else alphabet - 1
    loss, grad = ctc_loss_and_grad(xp, data, labels, label_len, data_len, blank, bool(req[1]))
    assign(outputs[0], req[0], loss.astype(outputs[0].dtype))
    if req[1]:
        assign(outputs[1], req[1], grad.astype(outputs[1].dtype))


def _gradient(node, og):
    """The data gradient reads the loss's head gradient and the hidden gradient output only;
    labels and lengths get none."""
    n = backward_node("_backward_ctc_loss", node, [og[0], NodeEntry(node, 1, 0)])
    return [NodeEntry(n, 0, 0)] + [None] * (len(node.inputs) - 1)


def _backward(ctx, inputs, req, outputs, params):
    og, grad = inputs
    assign(outputs[0], req[0], og[None, :, None] * grad)


def _backward_shape(p, ins, outs):
    ins = list(ins)
    if ins[1] is None and outs[0] is not None:
        ins[1] = tuple(outs[0])
    if ins[1] is None:
        return ins, list(outs)
    assign_shape("_backward_ctc_loss", ins, 0, (ins[1][1],), "input 'ograd'")
    return ins, out_shapes("_backward_ctc_loss", outs, [ins[1]])


def _label_examples():
    first = np.array([[1, 2, 2], [3, 0, 0], [2, 1, 3]], np.float32)
    last = np.array([[0, 1, -1], [2, 2, 1], [1, -1, -1]], np.float32)
    return [
        {"inputs": [(6, 3, 4), first]},
        {"inputs": [(5, 3, 4), last], "params": {"blank_label": "last"}},
        {"inputs": [(6, 3, 4), first, np.array([6, 2, 5], np.float32),
                    np.array([2, 1, 3], np.int32)],
         "params": {"use_data_lengths": True, "use_label_lengths": True}},
        {"inputs": [(3, 3, 4), first]},     # [1, 2, 2] needs 4 steps: loss 0, gradient 0
    ]


(register_op(OP).add_alias("ctc_loss").add_alias("_contrib_CTCLoss")
    .add_alias("_contrib_ctc_loss")
    .describe("Connectionist Temporal Classification loss (Graves et al.) per example of "
              "unnormalised activations ``data`` (sequence_length, batch_size, alphabet_size) "
              "against ``label`` (batch_size, label_sequence_length), padded with 0 "
              "(``blank_label='first'``, channel 0 is the blank) or -1 (``'last'``, channel "
              "alphabet_size-1 is the blank). ``data_lengths``/``label_lengths`` inputs give "
              "per-example lengths when ``use_data_lengths``/``use_label_lengths``.")
    .set_attr_parser(CTCLossParam)
    .set_num_inputs(lambda p: len(_input_names(p))).set_num_outputs(2)
    .set_attr("FNumVisibleOutputs", 1)
    .set_attr("FListInputNames", _input_names)
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(_type, inputs=(0,)))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _gradient)
    .set_attr("TExamples", [dict(e, grad=[0], domain=(-2, 2)) for e in _label_examples()])
    .add_argument("data", "NDArray-or-Symbol",
                  "Unnormalised activations, (sequence_length, batch_size, alphabet_size).")
    .add_argument("label", "NDArray-or-Symbol",
                  "Padded target sequences, (batch_size, label_sequence_length).")
    .add_argument("data_lengths", "NDArray-or-Symbol",
                  "Sequence length of each example, (batch_size,); an input only with "
                  "use_data_lengths.")
    .add_argument("label_lengths", "NDArray-or-Symbol",
                  "Target length of each example, (batch_size,); an input only with "
                  "use_label_lengths."))
(register_op("_backward_ctc_loss")
    .describe("CTCLoss's data gradient: the forward's gradient output scaled per example by the "
              "head gradient of the loss.")
    .set_attr_parser(CTCLossParam).set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["ograd", "grad"])
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", uniform_type("_backward_ctc_loss", ["ograd", "grad"]))
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [(3,), (4, 3, 5)]}]))
