"""``_sg_mkldnn_conv``: MXNet 1.9.1's fused oneDNN convolution (conv [+ BatchNorm] [+ relu]
[+ sum [+ relu]]), float or quantized, as ``quantize_model_mkldnn`` and
``optimize_for('MKLDNN')`` write it; the fused ops come from the node's body graph.

Quantized, it computes what MXNet's oneDNN primitive does: BatchNorm folded into float32
weights and bias, the weights quantized per output channel (calibrated) or per tensor
(``127.5 / |w|``, rounded half to even), the bias to int32 at ``data_scale * w_scale``,
exact int32 sums, then in float32 ``acc * requantize_scale``, relu, ``+ sum_scale * sum``,
relu, rounded half to even and saturated to uint8 / int8 (calibrated) or int32."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from opsdk import Field, MakeZeroGradNodes, ShapeError, assign, register_op

from ._onednn_int8 import int8_products, weight_adjust
from ._quantized import (F32, ONE, check_quantized, host_kernel, product_range, quantize_scale,
                         range_shapes, saturate, scalar, set_type, write_range)
from ._sg_body import UNSIGNED_ACTS, FusedParam, activate
from .quantized_conv_fc import columns, geometry

_OP = "_sg_mkldnn_conv"
_INT32_MAX = F32(2 ** 31)                     # static_cast<float>(INT32_MAX)


class SgConvParam(FusedParam):
    """MXNet's MKLDNNConvParam; the convolution's own parameters are its body's."""
    op_name: ClassVar[str] = _OP
    fuses: ClassVar[str] = "Convolution"
    renamed: ClassVar[dict] = {"with_relu": "with_act", "with_postsum_relu": "with_postsum_act"}
    with_bn: bool = Field(False, description="Add post batchnorm.")
    with_act: bool = Field(False, description="Add post activation.")
    with_sum: bool = Field(False, description="Add post sum.")
    with_postsum_act: bool = Field(False, description="Add post activation after sum.")


def _layout(p):
    """Indices of each input: weight, bias, bn (4), sum, then the ranges."""
    names = ["data", "weight"] + ([] if p.main.no_bias else ["bias"])
    if p.with_bn:
        names += ["gamma", "beta", "moving_mean", "moving_var"]
    if p.with_sum:
        names.append("sum")
    if p.quantized:
        names += ["min_data", "max_data"] + (["min_sum", "max_sum"] if p.with_sum else [])
    return names


def _out_dtype(p):
    if not p.quantized:
        return np.dtype(F32)
    if not p.calibrated:
        return np.dtype(np.int32)
    last = p.fused_act(p.with_postsum_act, True) if p.with_sum else p.fused_act(p.with_act)
    return np.dtype(np.uint8 if last is not None and last[0] in UNSIGNED_ACTS else np.int8)


def _shape(p, ins, outs):
    names, c = _layout(p), p.main
    ins = list(ins)
    if p.quantized:
        ins = range_shapes(_OP, ins, names.index("min_data"))
    d = ins[0]
    if d is None:
        return ins, list(outs)
    if d[1] % c.num_group or c.num_filter % c.num_group or len(c.kernel) != 2 or \
            len(d) != 4 or c.layout not in (None, "NCHW"):
        raise ShapeError(f"Operator {_OP!r}: supports 2-d NCHW convolution, num_group "
                         f"dividing the channels and filters, "
                         f"got kernel {c.kernel}, num_group {c.num_group}, layout {c.layout}, "
                         f"data {tuple(d)}")
    stride, dilate, pad = geometry(c)
    spatial = tuple((x + 2 * q - (dl * (k - 1) + 1)) // s + 1 for x, k, s, dl, q in
                    zip(d[2:], c.kernel, stride, dilate, pad))
    out = (d[0], c.num_filter) + spatial
    want = {"weight": (c.num_filter, d[1] // c.num_group) + tuple(c.kernel), "sum": out}
    for i, name in enumerate(names[1:], 1):
        shape = want.get(name, (c.num_filter,) if not name.startswith(("min", "max")) else ONE)
        if ins[i] is not None and tuple(ins[i]) != shape:
            raise ShapeError(f"Operator {_OP!r}: input {i} ({name}) has shape "
                             f"{tuple(ins[i])}, expected {shape}")
        ins[i] = shape
    return ins, [out] + ([ONE, ONE] if p.quantized else [])


def _types(p, ins, outs):
    names, ins, outs = _layout(p), list(ins), list(outs)
    for i, name in enumerate(names):
        if name in ("data", "sum") and p.quantized:
            check_quantized(_OP, ins[i], name)
        else:
            set_type(_OP, ins, i, F32, f"input {i} ({name})")
    set_type(_OP, outs, 0, _out_dtype(p), "output 0")
    for i in range(1, len(outs)):
        set_type(_OP, outs, i, F32, f"output {i}")
    return ins, outs


def _folded(p, x):
    """Weight and bias (float32) with BatchNorm folded in, as MXNet's UpdateConvWeightBias."""
    names = _layout(p)
    w = x[1].astype(F32)
    b = x[2].astype(F32) if not p.main.no_bias else None
    if not p.with_bn:
        return w, b
    gamma, beta, mean, var = (x[names.index(k)].astype(F32) for k in
                              ("gamma", "beta", "moving_mean", "moving_var"))
    bn = p.subgraphs.bn
    if bn.fix_gamma:
        gamma = np.ones_like(gamma)
    # float32 var plus the double eps, square root and division in double, as MXNet
    alpha = (gamma / np.sqrt(var.astype(np.float64) + bn.eps)).astype(F32)
    bias = beta + alpha * (b - mean) if b is not None else beta - alpha * mean
    return w * alpha.reshape((-1,) + (1,) * (w.ndim - 1)), bias


def _taps(w):
    """(kernel..., C) rows by output channel columns, as ``columns`` orders the data."""
    return np.moveaxis(w, 1, -1).reshape(w.shape[0], -1).astype(F32).T


def _grouped(p, data, w, product):
    """``product(columns, taps, channels)`` of each group, joined as (N, F, *out)."""
    g = p.main.num_group
    ci, fo = data.shape[1] // g, w.shape[0] // g
    parts = []
    for i in range(g):
        cols, out = columns(data[:, i * ci:(i + 1) * ci], p.main)
        parts.append(product(cols, _taps(w[i * fo:(i + 1) * fo]), ci))
    y = np.concatenate(parts, axis=1) if g > 1 else parts[0]
    return np.moveaxis(y.reshape((data.shape[0],) + out + (-1,)), -1, 1)


def _float(p, x, w, b):
    y = _grouped(p, x[0], w, lambda cols, taps, _: cols @ taps)
    if b is not None:
        y = y + b.reshape(-1, 1, 1)
    y = activate(y.astype(F32), p.fused_act(p.with_act))
    if p.with_sum:
        y = activate(y + x[_layout(p).index("sum")], p.fused_act(p.with_postsum_act, True))
    return y


def _weight_scales(p, w, b, data_scale):
    """Per-channel scales (calibrated; bounded so the int32 bias stays within INT32_MAX/2)
    or one per-tensor scale, as MXNet's GetWeightScales."""
    flat = w.reshape(w.shape[0], -1)
    if not p.calibrated:
        return np.full(w.shape[0], quantize_scale(np.int8, flat.min(), flat.max()), F32)
    scales = np.array([quantize_scale(np.int8, r.min(), r.max()) for r in flat], F32)
    if b is not None:
        for c in np.nonzero(b)[0]:
            bound = (_INT32_MAX if b[c] > 0 else -_INT32_MAX) / F32(2) / b[c] / data_scale
            scales[c] = min(scales[c], bound)
    return scales


def _grouped_scales(p, ws):
    """The scale each weight row is quantized with. With groups MXNet hands oneDNN the
    per-channel scales for weights laid out (group, filter, ...), whose first axis is the
    group: filter j of group i gets scale ``ws[i]`` (the output is still rescaled per
    channel, so MXNet's numbers carry this)."""
    g = p.main.num_group
    if g == 1:
        return ws
    return ws[np.arange(ws.size) // (ws.size // g)]


def _accumulate(p, data, w, b, data_scale):
    """The sums plus the int32 bias as float32 (N, F, *out), the weights' scales and the
    weight adjustment (see _onednn_int8)."""
    ws = _weight_scales(p, w, b, data_scale)
    adj = weight_adjust(data.dtype)
    wq = saturate(w * (_grouped_scales(p, ws) * adj).reshape((-1,) + (1,) * (w.ndim - 1)),
                  np.int8)
    acc = _grouped(p, data, wq, lambda cols, taps, ci: int8_products(cols, taps, data.dtype, ci))
    acc = acc.astype(F32)
    if b is not None:
        acc += (saturate(b * (ws * data_scale), np.int32).astype(F32) * adj).reshape(-1, 1, 1)
    return acc, ws, adj


def _quantized_act(p, act, out_scale):
    """A fused activation in the output's steps: relu and leaky as they are (both commute
    with scaling), clip (relu6) bounded at ``a_max * out_scale``; without a sum MXNet drops
    the clip and lets the uint8 output's saturation cut it."""
    if act is None or act[0] in ("relu", "leaky"):
        return act
    if act[0] != "clip":
        raise ShapeError(f"Operator {_OP!r}: quantized with fused activation {act[0]!r}, "
                         f"expected relu, leaky or clip")
    return ("clip", F32(act[1]) * out_scale) if p.with_sum else None


def _quantized(p, x, w, b, outputs, req):
    names = _layout(p)
    data = x[0]
    lo, hi = scalar(x[names.index("min_data")]), scalar(x[names.index("max_data")])
    if lo < 0 and data.dtype != np.int8:
        raise ShapeError(f"Operator {_OP!r}: data range ({lo}, {hi}) is signed, expected int8 "
                         f"data, got {data.dtype}")
    data_scale = quantize_scale(data.dtype, lo, hi)
    acc, ws, adj = _accumulate(p, data, w, b, data_scale)
    dtype = store = _out_dtype(p)
    if p.calibrated:
        cal = (F32(p.min_calib_range), F32(p.max_calib_range))
        out_scale = quantize_scale(dtype, *cal)
        y = acc * (out_scale / data_scale / ws / adj).reshape(-1, 1, 1)
    else:
        flat = w.reshape(-1)
        cal = product_range(lo, hi, flat.min(), flat.max(), unsigned=data.dtype == np.uint8)
        out_scale = data_scale * ws[0]
        y = acc / adj
    y = activate(y, _quantized_act(p, p.fused_act(p.with_act), out_scale))
    if p.with_sum:
        s = x[names.index("sum")]
        s_scale = quantize_scale(s.dtype, scalar(x[names.index("min_sum")]),
                                 scalar(x[names.index("max_sum")]))
        y = activate(y + F32(out_scale / s_scale) * s.astype(F32),
                     _quantized_act(p, p.fused_act(p.with_postsum_act, True), out_scale))
        # MXNet writes into the sum's own buffer: stored as the sum's dtype, read as the
        # output's (an int8 sum under a uint8 output caps it at 127)
        store = s.dtype if dtype != np.int32 else dtype
    assign(outputs[0], req[0], saturate(y, store).view(dtype))
    write_range(outputs, req, *cal)


def _compute(ctx, inputs, req, outputs, params):
    w, b = _folded(params, inputs)
    if params.quantized:
        _quantized(params, inputs, w, b, outputs, req)
    else:
        assign(outputs[0], req[0], _float(params, inputs, w, b))


(register_op(_OP)
 .describe("MXNet 1.9.1's fused oneDNN convolution (2-d NCHW, grouped too) with optional "
           "BatchNorm, relu, sum and post-sum relu, its body graph in subgraphs; float32, "
           "or quantized (int8/uint8 data, float32 weights quantized per channel) returning "
           "(output, min_output, max_output). Inference only.")
 .set_attr_parser(SgConvParam)
 .set_num_inputs(lambda p: len(_layout(p)))
 .set_num_outputs(lambda p: 3 if p.quantized else 1)
 .set_attr("FListInputNames", _layout)
 .set_attr("FListOutputNames",
           lambda p: ["output", "min_output", "max_output"] if p.quantized else ["output"])
 .set_attr("FMutateInputs", lambda p: [_layout(p).index(k) for k in ("moving_mean",
                                                                    "moving_var")]
           if p.with_bn else [])
 .set_attr("FInferShape", _shape)
 .set_attr("FInferType", _types)
 .set_attr("FGradient", MakeZeroGradNodes)
 .set_attr("FCompute<cpu>", host_kernel(_compute)))
