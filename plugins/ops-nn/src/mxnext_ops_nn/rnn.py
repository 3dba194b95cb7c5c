"""RNN: multi-layer, optionally bidirectional vanilla RNN (relu/tanh), LSTM and GRU over data
``(seq_len, batch, input_size)``, with MXNet's packed parameter vector.

Parameter layout (MXNet's cuDNN-compatible one): all weights first, for each
layer and then each direction ``W_x (gates*H, input)`` then ``W_h (gates*H, H)``
(an LSTM with ``projection_size`` P: ``W_h (4H, P)`` then ``W_r (P, H)``, and the
layer passes on and feeds back ``r = W_r h``); then all biases in the same order,
``b_x (gates*H)`` then ``b_h (gates*H)``.
Gate order: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_xn x + b_xn + r * (W_hn h + b_hn))``. Dropout ``p`` applies to the
output of every layer but the last, in training.

Like MXNet's CPU kernel, the forward keeps what backward needs (gate
activations, cell states, inner layer outputs, dropout masks) in a reserve
space: here a hidden last output, read by ``_backward_RNN``. The LSTM cell-state
clip (``lstm_state_clip_min/max``) bounds every new cell state, as cuDNN does (MXNet's
CPU build ignores it); its gradient passes where the state was inside the bounds.
``use_sequence_length`` is accepted (MXNet writes it into symbol files) but, as on
MXNet's CPU, using it raises an error.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, MXNetError, Param, ResourceRequest, assign, register_op
from opsdk.shape import dim_op

from ._infer import (assign_shape, backward_node, fail, grads_of, out_shapes, output_entry,
                     uniform_type)

OP = "RNN"
_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}


class RNNParam(Param):
    state_size: int = Field(ge=1, description="Hidden state length of every layer.")
    num_layers: int = Field(ge=1, description="How many recurrent layers are stacked.")
    bidirectional: bool = Field(False, description="Run every layer in both time directions "
                                                   "and concatenate the two.")
    mode: Literal["rnn_relu", "rnn_tanh", "lstm", "gru"] = Field(
        description="Cell kind: plain RNN with relu or tanh, LSTM or GRU.")
    p: float = Field(0.0, ge=0.0, le=1.0, description="Dropout probability applied, in "
                                                      "training, to what each layer but the last "
                                                      "passes on.")
    state_outputs: bool = Field(False, description="Also return the final hidden state (and "
                                                   "the final cell state for LSTM).")
    projection_size: int | None = Field(None, description="LSTM only: the hidden state is "
                                                          "projected to this length (at most "
                                                          "state_size).")
    lstm_state_clip_min: float | None = Field(
        None, description="Lower bound for LSTM cell states, set together with "
                          "lstm_state_clip_max.")
    lstm_state_clip_max: float | None = Field(
        None, description="Upper bound for LSTM cell states, set together with "
                          "lstm_state_clip_min.")
    lstm_state_clip_nan: bool = Field(
        False, description="Replace NaN cell states by the clip bounds; meaningless without "
                           "them.")
    use_sequence_length: bool = Field(
        False, description="Add a sequence_length input giving each example's valid length "
                           "(cuDNN only in MXNet 1.9; an error here).")


def _lstm(p):
    return p.mode == "lstm"


def _dirs(p):
    return 2 if p.bidirectional else 1


def _input_names(p):
    return (["data", "parameters", "state"] + (["state_cell"] if _lstm(p) else [])
            + (["sequence_length"] if p.use_sequence_length else []))


def _visible_names(p):
    if not p.state_outputs:
        return ["output"]
    return ["output", "state_output"] + (["statecell_output"] if _lstm(p) else [])


def _out_size(p):
    """Length of what a layer direction feeds back and passes on: h, or its projection."""
    return p.projection_size or p.state_size


def _clips(p):
    return p.lstm_state_clip_min is not None


def _check(p):
    lstm_only = {"projection_size": p.projection_size is not None,
                 "lstm_state_clip_min": _clips(p) or p.lstm_state_clip_max is not None}
    for name, used in lstm_only.items():
        if used and not _lstm(p):
            raise MXNetError(f"Operator {OP!r}: {name} is for mode 'lstm' only, got mode "
                             f"{p.mode!r}")
    if p.projection_size is not None and not 0 < p.projection_size <= p.state_size:
        raise MXNetError(f"Operator {OP!r}: projection_size must be in 1..state_size "
                         f"({p.state_size}), got {p.projection_size}")
    if (p.lstm_state_clip_min is None) != (p.lstm_state_clip_max is None) or (
            _clips(p) and p.lstm_state_clip_min > p.lstm_state_clip_max):
        raise MXNetError(f"Operator {OP!r}: lstm_state_clip_min and lstm_state_clip_max are "
                         f"set together with min <= max, got {p.lstm_state_clip_min} and "
                         f"{p.lstm_state_clip_max}")
    if p.use_sequence_length:
        raise MXNetError(f"Operator {OP!r}: use_sequence_length=True is not supported (MXNet "
                         f"1.9 offers it only with cuDNN on GPU)")


def param_size(p, input_size):
    """Length of the packed parameter vector (MXNet's GetRnnParamSize)."""
    h, d, r = p.state_size, _dirs(p), _out_size(p)
    size = h * d * _GATES[p.mode]
    projections = p.num_layers * d * r * h if p.projection_size else 0
    return ((input_size + r + 2) * size
            + (p.num_layers - 1) * (r * d + r + 2) * size + projections)


def _weights(p, flat, input_size):
    """Views ``[layer][direction] = (W_x, W_h, b_x, b_h, W_r or None)`` into the packed
    vector ``flat``."""
    h, d, g, r = p.state_size, _dirs(p), _GATES[p.mode], _out_size(p)
    views, off = [], 0
    for layer in range(p.num_layers):
        n_in = input_size if layer == 0 else r * d
        row = []
        for _ in range(d):
            wx = flat[off:off + g * h * n_in].reshape(g * h, n_in)
            off += g * h * n_in
            wh = flat[off:off + g * h * r].reshape(g * h, r)
            off += g * h * r
            wr = None
            if p.projection_size:
                wr = flat[off:off + r * h].reshape(r, h)
                off += r * h
            row.append([wx, wh, wr])
        views.append(row)
    for row in views:
        for views_of in row:
            views_of[2:2] = [flat[off:off + g * h], flat[off + g * h:off + 2 * g * h]]
            off += 2 * g * h
    return views


def _reserve_layout(p, steps, batch):
    """``[(key, shape)]`` of what the forward keeps for backward, in reserve order."""
    h, d = p.state_size, _dirs(p)
    per_dir = {"lstm": [("gates", 4 * h), ("c", h)], "gru": [("gates", 3 * h), ("hn", h)]}
    h = _out_size(p)
    parts = []
    for layer in range(p.num_layers):
        for k in range(d):
            parts += [((name, layer, k), (steps, batch, width))
                      for name, width in per_dir.get(p.mode, [])]
        if layer < p.num_layers - 1:
            parts.append((("y", layer), (steps, batch, d * h)))
            if p.p > 0:
                parts.append((("mask", layer), (steps, batch, d * h)))
    return parts


def _reserve_size(p, steps, batch):
    """At least 1: an empty reserve would read as an unknown shape outside np_shape."""
    return max(1, sum(int(np.prod(s)) for _, s in _reserve_layout(p, steps, batch)))


def _unpack(p, flat, steps, batch):
    views, off = {}, 0
    for key, shape in _reserve_layout(p, steps, batch):
        n = int(np.prod(shape))
        views[key] = flat[off:off + n].reshape(shape)
        off += n
    return views


# -- inference ---------------------------------------------------------------------------------
def _shape(p, ins, outs):
    ins = list(ins)
    data = ins[0]
    if data is None:
        return ins, list(outs)
    _check(p)
    if len(data) != 3:
        fail(OP, f"input 'data' must be 3-D (sequence length, batch size, input size), got "
                 f"{tuple(data)}")
    steps, batch, size = data
    h, r, layers = p.state_size, _out_size(p), p.num_layers * _dirs(p)
    assign_shape(OP, ins, 1, (dim_op(lambda n: param_size(p, n), size),), "input 'parameters'")
    assign_shape(OP, ins, 2, (layers, batch, r), "input 'state'")
    if _lstm(p):
        assign_shape(OP, ins, 3, (layers, batch, h), "input 'state_cell'")
    new = [(steps, batch, _dirs(p) * r)]
    if p.state_outputs:
        new += [(layers, batch, r)] + ([(layers, batch, h)] if _lstm(p) else [])
    new.append((dim_op(lambda t, n: _reserve_size(p, t, n), steps, batch),))
    return ins, out_shapes(OP, outs, new, _visible_names(p) + ["reserve"])


def _n_outputs(p):
    return len(_visible_names(p)) + 1


# -- forward -----------------------------------------------------------------------------------
def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


def _direction_forward(xp, p, x, wx, wh, bx, bh, wr, h, c, reverse):
    """One layer direction: returns ``(h sequence (T, N, H or P), h_last, c_last, kept)``
    with ``kept`` the arrays backward needs (gates, cells / GRU's ``W_hn h + b_hn``)."""
    steps, batch, _ = x.shape
    n = p.state_size
    gru = p.mode == "gru"
    xw = (x.reshape(steps * batch, -1) @ wx.T + (bx if gru else bx + bh)).reshape(steps, batch, -1)
    hs = xp.empty((steps, batch, _out_size(p)), x.dtype)
    kept = {}
    if p.mode == "lstm":
        gates, cells = xp.empty_like(xw), xp.empty((steps, batch, n), x.dtype)
        kept = {"gates": gates, "c": cells}
    elif gru:
        gates, hn = xp.empty_like(xw), xp.empty_like(hs)
        kept = {"gates": gates, "hn": hn}
    for t in (range(steps - 1, -1, -1) if reverse else range(steps)):
        if p.mode == "lstm":
            pre = xw[t] + h @ wh.T
            sig = _sigmoid(xp, pre)
            g = xp.tanh(pre[:, 2 * n:3 * n])
            c = sig[:, n:2 * n] * c + sig[:, :n] * g
            if _clips(p):
                c = xp.clip(c, p.lstm_state_clip_min, p.lstm_state_clip_max)
            h = sig[:, 3 * n:] * xp.tanh(c)
            if wr is not None:
                h = h @ wr.T
            gates[t] = sig
            gates[t, :, 2 * n:3 * n] = g
            cells[t] = c
        elif gru:
            hh = h @ wh.T + bh
            rz = _sigmoid(xp, xw[t, :, :2 * n] + hh[:, :2 * n])
            r, z = rz[:, :n], rz[:, n:]
            cand = xp.tanh(xw[t, :, 2 * n:] + r * hh[:, 2 * n:])
            h = (1 - z) * cand + z * h
            gates[t, :, :2 * n] = rz
            gates[t, :, 2 * n:] = cand
            hn[t] = hh[:, 2 * n:]
        else:
            pre = xw[t] + h @ wh.T
            h = xp.maximum(pre, 0) if p.mode == "rnn_relu" else xp.tanh(pre)
        hs[t] = h
    return hs, h, c, kept


def _acc(dtype):
    return np.result_type(dtype, np.float32)


def _forward(ctx, inputs, req, outputs, params):
    xp, p = ctx.xp, params
    data = inputs[0]
    acc = _acc(data.dtype)
    steps, batch, size = data.shape
    n, dirs = _out_size(p), _dirs(p)
    weights = _weights(p, inputs[1].astype(acc), size)
    h0 = inputs[2].astype(acc)
    c0 = inputs[3].astype(acc) if _lstm(p) else [None] * len(h0)
    dropout = ctx.is_train and p.p > 0
    kept, hy, cy = {}, [], []
    x = data.astype(acc)
    for layer in range(p.num_layers):
        y = xp.empty((steps, batch, dirs * n), acc)
        for k in range(dirs):
            s = layer * dirs + k
            hs, h_last, c_last, parts = _direction_forward(
                xp, p, x, *weights[layer][k], h0[s], c0[s], reverse=k == 1)
            y[:, :, k * n:(k + 1) * n] = hs
            hy.append(h_last)
            cy.append(c_last)
            kept.update({(name, layer, k): v for name, v in parts.items()})
        if layer < p.num_layers - 1:
            kept[("y", layer)] = y
            if p.p > 0:
                if dropout:
                    keep = ctx.requested[0].get_random().random(y.shape) >= p.p
                    mask = keep.astype(acc) / (1 - p.p)
                else:
                    mask = xp.ones_like(y)
                kept[("mask", layer)] = mask
                x = y * mask
            else:
                x = y
    assign(outputs[0], req[0], y.astype(outputs[0].dtype, copy=False))
    if p.state_outputs:
        assign(outputs[1], req[1], xp.stack(hy).astype(outputs[1].dtype, copy=False))
        if _lstm(p):
            assign(outputs[2], req[2], xp.stack(cy).astype(outputs[2].dtype, copy=False))
    if req[-1]:
        layout = _reserve_layout(p, steps, batch)
        flat = xp.concatenate([kept[key].reshape(-1) for key, _ in layout] or [xp.zeros(1, acc)])
        assign(outputs[-1][:flat.size], req[-1], flat.astype(outputs[-1].dtype, copy=False))


# -- backward ----------------------------------------------------------------------------------
def _previous(xp, seq, first, reverse):
    """The state each step started from: ``seq`` shifted one step back in processing order."""
    prev = xp.empty_like(seq)
    if reverse:
        prev[:-1], prev[-1] = seq[1:], first
    else:
        prev[1:], prev[0] = seq[:-1], first
    return prev


def _direction_backward(xp, p, x, hs, w, dw, h0, c0, dy, dh, dc, kept, reverse):
    """Gradients of one layer direction: accumulates weight gradients into ``dw`` views and
    returns ``(dx, dh0, dc0)``."""
    wx, wh, _, _, wr = w
    steps = x.shape[0]
    n = p.state_size
    h_prev = _previous(xp, hs, h0, reverse)
    order = range(steps) if reverse else range(steps - 1, -1, -1)
    d_xw = xp.empty((steps,) + dy.shape[1:-1] + (wx.shape[0],), x.dtype)
    d_hh = d_xw
    if p.mode == "lstm":
        gates, cells = kept["gates"], kept["c"]
        c_prev = _previous(xp, cells, c0, reverse)
        inside = ((cells > p.lstm_state_clip_min) & (cells < p.lstm_state_clip_max)
                  if _clips(p) else None)
        for t in order:
            i, f, g, o = (gates[t, :, j * n:(j + 1) * n] for j in range(4))
            tc = xp.tanh(cells[t])
            dht = dy[t] + dh
            if wr is not None:
                dw[4][...] += dht.T @ (o * tc)
                dht = dht @ wr
            dct = dht * o * (1 - tc * tc) + dc
            if inside is not None:
                dct = dct * inside[t]
            d_xw[t] = xp.concatenate([dct * g * i * (1 - i), dct * c_prev[t] * f * (1 - f),
                                      dct * i * (1 - g * g), dht * tc * o * (1 - o)], axis=1)
            dh = d_xw[t] @ wh
            dc = dct * f
    elif p.mode == "gru":
        gates, hn = kept["gates"], kept["hn"]
        d_hh = xp.empty_like(d_xw)
        for t in order:
            r, z, cand = (gates[t, :, j * n:(j + 1) * n] for j in range(3))
            dht = dy[t] + dh
            dn = dht * (1 - z) * (1 - cand * cand)
            dz = dht * (h_prev[t] - cand) * z * (1 - z)
            dr = dn * hn[t] * r * (1 - r)
            d_xw[t] = xp.concatenate([dr, dz, dn], axis=1)
            d_hh[t] = xp.concatenate([dr, dz, dn * r], axis=1)
            dh = dht * z + d_hh[t] @ wh
    else:
        slope = (hs > 0).astype(x.dtype) if p.mode == "rnn_relu" else 1 - hs * hs
        for t in order:
            d_xw[t] = (dy[t] + dh) * slope[t]
            dh = d_xw[t] @ wh
    flat_x = d_xw.reshape(-1, d_xw.shape[-1])
    flat_h = d_hh.reshape(-1, d_hh.shape[-1])
    dw[0][...] = flat_x.T @ x.reshape(flat_x.shape[0], -1)
    dw[1][...] = flat_h.T @ h_prev.reshape(flat_h.shape[0], -1)
    dw[2][...] = flat_x.sum(axis=0)
    dw[3][...] = flat_h.sum(axis=0)
    return d_xw @ wx, dh, dc


def _backward_layout(p):
    """Indices of the backward inputs: data, parameters, state, [state_cell], out, reserve,
    then the head gradients of the visible outputs."""
    names = ["data", "parameters", "state"] + (["state_cell"] if _lstm(p) else [])
    names += ["out", "reserve"] + [f"ograd_{v}" for v in _visible_names(p)]
    return names


def _backward(ctx, inputs, req, outputs, params):
    xp, p = ctx.xp, params
    at = dict(zip(_backward_layout(p), inputs))
    data = at["data"]
    acc = _acc(data.dtype)
    steps, batch, size = data.shape
    n, dirs = _out_size(p), _dirs(p)
    weights = _weights(p, at["parameters"].astype(acc), size)
    d_flat = xp.zeros(at["parameters"].shape, acc)
    d_weights = _weights(p, d_flat, size)
    h0 = at["state"].astype(acc)
    c0 = at["state_cell"].astype(acc) if _lstm(p) else [None] * len(h0)
    kept = _unpack(p, at["reserve"].astype(acc, copy=False), steps, batch)
    dhy = at["ograd_state_output"].astype(acc) if p.state_outputs else xp.zeros_like(h0)
    dcy = (at["ograd_statecell_output"].astype(acc) if p.state_outputs and _lstm(p)
           else xp.zeros((len(h0),) + h0.shape[1:-1] + (p.state_size,), acc))
    d_h0, d_c0 = xp.zeros_like(h0), xp.zeros_like(dcy)
    dy = at["ograd_output"].astype(acc)
    for layer in range(p.num_layers - 1, -1, -1):
        if layer == 0:
            x = data.astype(acc)
        else:
            x = kept[("y", layer - 1)]
            if p.p > 0:
                x = x * kept[("mask", layer - 1)]
        y = at["out"].astype(acc) if layer == p.num_layers - 1 else kept[("y", layer)]
        dx = xp.zeros(x.shape, acc)
        for k in range(dirs):
            s = layer * dirs + k
            part = {name: kept[(name, layer, k)] for name in ("gates", "c", "hn")
                    if (name, layer, k) in kept}
            cols = slice(k * n, (k + 1) * n)
            ddx, d_h0[s], dc = _direction_backward(
                xp, p, x, y[:, :, cols], weights[layer][k], d_weights[layer][k], h0[s], c0[s],
                dy[:, :, cols], dhy[s], dcy[s], part, reverse=k == 1)
            if _lstm(p):
                d_c0[s] = dc
            dx += ddx
        dy = dx * kept[("mask", layer - 1)] if layer > 0 and p.p > 0 else dx
    grads = [dy, d_flat, d_h0] + ([d_c0] if _lstm(p) else [])
    for k, g in enumerate(grads):
        assign(outputs[k], req[k], g.astype(outputs[k].dtype, copy=False))


def _gradient(node, og):
    p = node.params
    n_in = 4 if _lstm(p) else 3
    ins = list(node.inputs[:n_in]) + [output_entry(node, 0), output_entry(node, _n_outputs(p) - 1)]
    ins += list(og[:len(_visible_names(p))])
    return grads_of(backward_node("_backward_RNN", node, ins), n_in)


def _backward_shape(p, ins, outs):
    ins = list(ins)
    n_in = 4 if _lstm(p) else 3
    known = ins[:n_in]
    if any(s is None for s in known):
        return ins, list(outs)
    return ins, out_shapes("_backward_RNN", outs, known)


def _examples():
    rng = np.random.default_rng(0)

    def case(mode, layers=1, bidirectional=False, state_outputs=False, p=0.0, steps=3, batch=2,
             size=2, hidden=2, **lstm_only):
        params = {"mode": mode, "state_size": hidden, "num_layers": layers,
                  "bidirectional": bidirectional, "state_outputs": state_outputs, "p": p,
                  **lstm_only}
        prm = RNNParam(**params)
        dirs = 2 if bidirectional else 1
        shapes = [(steps, batch, size), (param_size(prm, size),),
                  (layers * dirs, batch, _out_size(prm))]
        if mode == "lstm":
            shapes.append((layers * dirs, batch, hidden))
        inputs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        return {"inputs": inputs, "params": params, "atol": 2e-3}

    return [case("lstm", state_outputs=True), case("gru", layers=2, bidirectional=True),
            case("rnn_tanh", bidirectional=True, state_outputs=True),
            case("rnn_relu", layers=2, p=0.4, state_outputs=True),
            case("lstm", layers=2, bidirectional=True, p=0.5),
            case("lstm", layers=2, bidirectional=True, state_outputs=True, hidden=3,
                 projection_size=2),
            case("lstm", state_outputs=True, lstm_state_clip_min=-0.3,
                 lstm_state_clip_max=0.3)]


def _backward_example():
    params = {"mode": "gru", "state_size": 2, "num_layers": 2, "bidirectional": True,
              "state_outputs": True}
    prm = RNNParam(**params)
    steps, batch, size = 3, 2, 2
    shapes = [(steps, batch, size), (param_size(prm, size),), (4, batch, 2), (steps, batch, 4),
              (_reserve_size(prm, steps, batch),), (steps, batch, 4), (4, batch, 2)]
    return [{"inputs": shapes, "params": params, "domain": (0.1, 0.9)}]


(register_op(OP)
    .describe("Recurrent layers over ``data`` (sequence_length, batch_size, input_size): "
              "vanilla RNN with relu or tanh, LSTM (gates i, f, g, o) or GRU (r, z, n; "
              "cuDNN-compatible), stacked ``num_layers`` deep and optionally bidirectional. "
              "``parameters`` is the packed vector of all weights then all biases; ``state`` "
              "(and ``state_cell`` for LSTM) the initial states (layers*directions, batch, "
              "state_size). With ``state_outputs`` the final states are outputs too.")
    .set_attr_parser(RNNParam)
    .set_num_inputs(lambda p: len(_input_names(p)))
    .set_num_outputs(_n_outputs)
    .set_attr("FNumVisibleOutputs", lambda p: len(_visible_names(p)))
    .set_attr("FListInputNames", _input_names)
    .set_attr("FListOutputNames", lambda p: _visible_names(p) + ["reserve"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(uniform_type(OP, _input_names)))
    .set_attr("FResourceRequest", lambda p: [ResourceRequest.RANDOM] if p.p > 0 else [])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _gradient)
    .set_attr("TExamples", _examples())
    .add_argument("data", "NDArray-or-Symbol",
                  "Input sequence, (sequence_length, batch_size, input_size).")
    .add_argument("parameters", "NDArray-or-Symbol",
                  "Every weight then every bias, packed into one vector.")
    .add_argument("state", "NDArray-or-Symbol", "Hidden state at the first step.")
    .add_argument("state_cell", "NDArray-or-Symbol", "Cell state at the first step (LSTM only).")
    .add_argument("sequence_length", "NDArray-or-Symbol",
                  "Valid length of each example, (batch_size,); an input only with "
                  "use_sequence_length."))
(register_op("_backward_RNN")
    .describe("Gradients of RNN wrt data, parameters and initial states, from the forward's "
              "inputs, output, reserve space and head gradients.")
    .set_attr_parser(RNNParam).set_attr("TIsBackward", True)
    .set_num_inputs(lambda p: len(_backward_layout(p)))
    .set_num_outputs(lambda p: 4 if _lstm(p) else 3)
    .set_attr("FListInputNames", _backward_layout)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", uniform_type("_backward_RNN", _backward_layout))
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", _backward_example()))
