"""MXNet 1.9's _contrib_quantized_rnn (``quantization/quantized_rnn.cc`` and its oneDNN kernel):
an LSTM over uint8 data quantized asymmetrically (``q = x * scale + shift``), with int8
weights. It follows oneDNN's int8 LSTM: weights quantized per gate row (one scale per row,
shared by every layer and direction), int32 products, gates and the cell state in float32,
and the hidden state requantized to uint8 with the data's scale and shift after every step
(the outputs are those uint8 states read back as float32). Not bit-exact with oneDNN: its
weight scales and rounding inside the kernel are close, not equal (see docs)."""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, Param, ShapeError, TypeInferError, assign, register_op
from opsdk.shape import merge_shape

from ._common import check_outs
from ._quantized import F32, ONE, host_kernel, quantized_op, scalar, set_type

_OP = "_contrib_quantized_rnn"
_NAMES = ["data", "parameters", "state", "state_cell", "min_data", "max_data"]


class QuantizedRnnParam(Param):
    """RNN's parameters (MXNet reuses RNNParam); only LSTM is quantized."""
    state_size: int = Field(ge=1, description="size of the state for each layer")
    num_layers: int = Field(ge=1, description="number of stacked layers")
    bidirectional: bool = Field(False, description="whether to use bidirectional recurrent "
                                                   "layers")
    mode: Literal["rnn_relu", "rnn_tanh", "lstm", "gru"] = Field(
        description="the type of RNN to compute (only lstm is quantized)")
    p: float = Field(0.0, ge=0.0, le=1.0, description="drop rate of the dropout on the "
                                                      "outputs of each RNN layer (inference: "
                                                      "unused)")
    state_outputs: bool = Field(False, description="Whether to have the states as symbol "
                                                   "outputs.")
    projection_size: int | None = Field(None, description="size of project size (not "
                                                          "supported here)")
    lstm_state_clip_min: float | None = Field(None, description="Minimum clip value of LSTM "
                                                                "states (not supported here).")
    lstm_state_clip_max: float | None = Field(None, description="Maximum clip value of LSTM "
                                                                "states (not supported here).")
    lstm_state_clip_nan: bool = Field(False, description="Whether to stop NaN from "
                                                         "propagating in state by clipping it.")
    use_sequence_length: bool = Field(False, description="not supported here")
    quantized: str = Field("true", description="Set to \"true\" on every node, as MXNet's "
                                               "parser of this op writes it.")

    @classmethod
    def parse(cls, kwargs, op="?"):
        """MXNet's QuantizedRnnParamParser: the parameters always hold ``quantized="true"``,
        so every node of this op carries it among its attributes (and in its JSON)."""
        return super().parse({**kwargs, "quantized": "true"}, op)


def _check(p):
    if p.mode != "lstm":
        raise ShapeError(f"Operator {_OP!r}: mode must be lstm, got {p.mode!r}")
    unsupported = {"projection_size": p.projection_size, "use_sequence_length":
                   p.use_sequence_length or None, "lstm_state_clip_min": p.lstm_state_clip_min,
                   "lstm_state_clip_max": p.lstm_state_clip_max}
    for name, value in unsupported.items():
        if value is not None:
            raise ShapeError(f"Operator {_OP!r}: {name} is not supported, got {value}")


def _num_outputs(p):
    return 3 if p.state_outputs else 1


def _layer_inputs(p, input_size):
    d = 2 if p.bidirectional else 1
    return [input_size] + [d * p.state_size] * (p.num_layers - 1)


def _param_size(p, input_size):
    h, d = p.state_size, 2 if p.bidirectional else 1
    return sum(d * (4 * h * n + 4 * h * h + 8 * h) for n in _layer_inputs(p, input_size))


def _shape(p, ins, outs):
    _check(p)
    ins = list(ins)
    for i in (4, 5):
        ins[i] = merge_shape(_OP, ins[i], ONE, f"input {i} ({_NAMES[i]})")
    d = ins[0]
    if d is None:
        return ins, list(outs)
    if len(d) != 3:
        raise ShapeError(f"Operator {_OP!r}: data should be 3-d (steps, batch, input size), "
                         f"got shape {tuple(d)}")
    t, n, c = d
    dirs = 2 if p.bidirectional else 1
    states = (dirs * p.num_layers, n, p.state_size)
    ins[1] = merge_shape(_OP, ins[1], (_param_size(p, c),), "input 1 (parameters)")
    ins[2] = merge_shape(_OP, ins[2], states, "input 2 (state)")
    ins[3] = merge_shape(_OP, ins[3], states, "input 3 (state_cell)")
    return ins, check_outs(_OP, outs, [(t, n, dirs * p.state_size), states, states]
                           [:_num_outputs(p)])


def _type(p, ins, outs):
    ins = list(ins)
    if ins[0] is not None and np.dtype(ins[0]) != np.uint8:
        raise TypeInferError(f"Operator {_OP!r}: data has dtype {np.dtype(ins[0])}, expected "
                             f"uint8")
    for i in range(1, 6):
        set_type(_OP, ins, i, F32, f"input {i} ({_NAMES[i]})")
    return ins, [np.dtype(F32)] * _num_outputs(p)


def _unpack(p, flat, input_size):
    """Per (layer, direction): (Wx (4H, in), Wh (4H, H), bias bx + bh (4H,)); all weights
    come first in MXNet's flat vector, then all biases."""
    h, dirs = p.state_size, 2 if p.bidirectional else 1
    weights, pos = [], 0
    for n in _layer_inputs(p, input_size):
        for _ in range(dirs):
            wx = flat[pos:pos + 4 * h * n].reshape(4 * h, n)
            wh = flat[pos + 4 * h * n:pos + 4 * h * (n + h)].reshape(4 * h, h)
            weights.append([wx, wh])
            pos += 4 * h * (n + h)
    for w in weights:
        w.append(flat[pos:pos + 4 * h] + flat[pos + 4 * h:pos + 8 * h])
        pos += 8 * h
    return weights


def _fused_layers(p, input_size):
    """oneDNN's layer groups as MXNet builds them, as (layers, input size) pairs."""
    h, n = p.state_size, p.num_layers
    if p.bidirectional:
        return [(1, input_size)] + [(1, 2 * h)] * (n - 1)
    if input_size == h:
        return [(n, input_size)]
    return [(1, input_size)] + ([(n - 1, h)] if n > 1 else [])


def _gate_scales(p, flat, input_size):
    """127 / the largest |w| of each gate row, read from the flat parameters at the places
    MXNet's GetMKLDNNRnnWeightsQParams reads them: the first group's Wx and Wh (both
    directions), then for each later group the first 4H x H values at its Wx and at a
    position MXNet's pointer arithmetic reaches (not always that group's Wh)."""
    h, dirs = p.state_size, 2 if p.bidirectional else 1
    rows, block = 4 * h, 4 * h * h
    groups = _fused_layers(p, input_size)
    n0 = groups[0][1]
    single = rows * (n0 + h)
    wx, wh = np.abs(flat[:rows * n0]), np.abs(flat[rows * n0:single])
    if dirs == 2:
        wx = np.maximum(wx, np.abs(flat[single:single + rows * n0]))
        wh = np.maximum(wh, np.abs(flat[single + rows * n0:2 * single]))
    top = np.maximum(wx.reshape(rows, n0).max(axis=1), wh.reshape(rows, h).max(axis=1))
    x_pos, h_pos = single * dirs, rows * n0 + single * dirs
    for _, n in groups[1:]:
        part = np.maximum(np.abs(flat[x_pos:x_pos + block]), np.abs(flat[h_pos:h_pos + block]))
        top = np.maximum(top, part.reshape(rows, h).max(axis=1))
        x_pos += rows * (n + h) * dirs
        h_pos = x_pos + block
    return F32(127) / top


class _Quant:
    """The data's asymmetric uint8 quantization and the weights' per-row int8 one."""

    def __init__(self, scale, shift, w_scale):
        self.scale, self.shift, self.w_scale = scale, shift, w_scale

    def to_u8(self, x):
        return np.clip(np.rint(x * self.scale + self.shift), 0, 255)

    def from_u8(self, q):
        return ((q - self.shift) / self.scale).astype(F32)

    def weights(self, w):
        return np.clip(np.rint(w * self.w_scale[:, None]), -127, 127)

    def gates(self, q, wq):
        """(q - shift) . wq over the input, in float (the int32 sums oneDNN dequantizes)."""
        return ((q - self.shift) @ wq.T / (self.scale * self.w_scale)).astype(F32)


def _sigmoid(x):
    return F32(1) / (F32(1) + np.exp(-x))


def _direction(quant, seq, w, h0, c0, reverse):
    """One LSTM direction over the uint8 sequence ``seq`` (T, N, in); returns the uint8
    states (T, N, H), the last hidden state read back as float and the last cell state."""
    wxq, whq = quant.weights(w[0]), quant.weights(w[1])
    xg = quant.gates(seq, wxq) + w[2]
    h, c = quant.to_u8(h0), c0
    states = np.empty(seq.shape[:2] + (h0.shape[-1],), np.float64)
    for t in (range(seq.shape[0] - 1, -1, -1) if reverse else range(seq.shape[0])):
        i, f, g, o = np.split(xg[t] + quant.gates(h, whq), 4, axis=-1)
        c = _sigmoid(f) * c + _sigmoid(i) * np.tanh(g)
        h = quant.to_u8(_sigmoid(o) * np.tanh(c))
        states[t] = h
    return states, quant.from_u8(h), c


def _rnn(ctx, inputs, req, outputs, params):
    x, flat, h0, c0 = inputs[0], inputs[1], inputs[2], inputs[3]
    weights = _unpack(params, flat, x.shape[2])
    quant = _Quant(scalar(inputs[4]), scalar(inputs[5]), _gate_scales(params, flat, x.shape[2]))
    seq, hy, cy = x.astype(np.float64), [], []
    dirs = 2 if params.bidirectional else 1
    for layer in range(params.num_layers):
        outs = []
        for d in range(dirs):
            k = layer * dirs + d
            states, h, c = _direction(quant, seq, weights[k], h0[k], c0[k], d == 1)
            outs.append(states)
            hy.append(h)
            cy.append(c)
        seq = np.concatenate(outs, axis=-1)
    assign(outputs[0], req[0], quant.from_u8(seq))
    if params.state_outputs:
        assign(outputs[1], req[1], np.stack(hy))
        assign(outputs[2], req[2], np.stack(cy).astype(F32))


def _avoid_quantize(attrs, index):
    """The parameters and both states stay float32; only the data is quantized."""
    return index in (1, 2, 3)


quantized_op(
    register_op(_OP)
    .describe("LSTM (RNN mode lstm) over uint8 data quantized as q = x * scale + shift, the "
              "scale and shift given as min_data and max_data; float32 parameters (quantized "
              "per gate row to int8 inside), states and outputs. Inference only.")
    .set_attr_parser(QuantizedRnnParam).set_num_inputs(6).set_num_outputs(_num_outputs)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FListOutputNames", lambda p: ["output", "state_output",
                                             "statecell_ouput"][:_num_outputs(p)])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", host_kernel(_rnn))
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("parameters", "NDArray-or-Symbol", "weight.")
    .add_argument("state", "NDArray-or-Symbol", "initial hidden state of the RNN")
    .add_argument("state_cell", "NDArray-or-Symbol", "initial cell state for LSTM networks "
                                                     "(only for LSTM)")
    .add_argument("data_scale", "NDArray-or-Symbol", "quantization scale of data.")
    .add_argument("data_shift", "NDArray-or-Symbol", "quantization shift of data."),
    "RNN", FQuantizable=lambda attrs: attrs.get("mode") == "lstm",
    FAvoidQuantizeInput=_avoid_quantize,
    # beyond the shared protocol, MXNet's own two: the data is quantized asymmetrically
    # (quantize_asym's scale and shift) and the float outputs need no dequantize
    FNeedAsymQuantizeInput=lambda attrs, index: index == 0,
    FAvoidDequantizeOutput=lambda attrs, index: True)
