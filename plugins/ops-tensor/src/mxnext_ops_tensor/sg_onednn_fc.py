"""``_sg_mkldnn_fully_connected``: MXNet 1.9.1's fused oneDNN FullyConnected [+ relu], float
or quantized (per-tensor int8 weight and bias with their ranges, as ``quantize_model_mkldnn``
writes it), the fused ops read from the node's body graph.

Quantized: the int8 bias is rescaled to the int32 steps of ``data_scale * weight_scale``
(rounded half away from zero, as ``std::round``; where that would pass INT32_MAX / 2 the
weights are rescaled first, as MXNet does), the sums are exact, then in float32
``acc * output_scale``, relu, times the eltwise scale, rounded half to even and saturated:
uint8 / int8 (calibrated), float32 (``enable_float_output``) or int32 with the product
range."""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from opsdk import Field, MakeZeroGradNodes, ShapeError, assign, register_op

from ._onednn_int8 import int8_products
from ._quantized import (F32, ONE, check_quantized, host_kernel, max_abs, product_range,
                         quantize_scale, range_shapes, saturate, scalar, set_type, write_range)
from ._sg_body import UNSIGNED_ACTS, FusedParam, activate

_OP = "_sg_mkldnn_fully_connected"


class SgFCParam(FusedParam):
    """MXNet's MKLDNNFCParam; FullyConnected's own parameters are its body's."""
    op_name: ClassVar[str] = _OP
    fuses: ClassVar[str] = "FullyConnected"
    renamed: ClassVar[dict] = {"with_relu": "with_eltwise"}
    enable_float_output: bool = Field(False, description="Whether to output float32.")
    with_eltwise: bool = Field(False, description="A fused activation after the product.")
    channel_wise_quantize: bool | None = Field(None, description="Channel-wise weight "
                                               "quantization (not supported).")


def _layout(p):
    base = ["data", "weight"] + ([] if p.main.no_bias else ["bias"])
    if not p.quantized:
        return base
    return base + [f"{m}_{n}" for n in base for m in ("min", "max")]


def _out_dtype(p):
    if not p.quantized or p.enable_float_output:
        return np.dtype(F32)
    if not p.calibrated:
        return np.dtype(np.int32)
    act = p.fused_act(p.with_eltwise)
    return np.dtype(np.uint8 if act is not None and act[0] in UNSIGNED_ACTS else np.int8)


def _outputs(p):
    return ["output"] if _out_dtype(p) == F32 else ["output", "min_output", "max_output"]


def _rows(p, d):
    """(rows, K) of the data's shape, as FullyConnected flattens it."""
    if p.main.flatten:
        return d[0], int(np.prod(d[1:], dtype=np.int64))
    return int(np.prod(d[:-1], dtype=np.int64)), d[-1]


def _shape(p, ins, outs):
    names, m = _layout(p), p.main
    if p.channel_wise_quantize:
        raise ShapeError(f"Operator {_OP!r}: channel_wise_quantize is not supported")
    n = 2 if m.no_bias else 3
    ins = range_shapes(_OP, ins, n) if p.quantized else list(ins)
    d = ins[0]
    if d is None:
        return ins, list(outs)
    k = _rows(p, d)[1]
    for i, shape in ((1, (m.num_hidden, k)), (2, (m.num_hidden,)))[:n - 1]:
        if ins[i] is not None and tuple(ins[i]) != shape:
            raise ShapeError(f"Operator {_OP!r}: input {i} ({names[i]}) has shape "
                             f"{tuple(ins[i])}, expected {shape}")
        ins[i] = shape
    out = (d[0], m.num_hidden) if m.flatten else tuple(d[:-1]) + (m.num_hidden,)
    return ins, [out] + [ONE] * (len(_outputs(p)) - 1)


def _types(p, ins, outs):
    ins, outs = list(ins), list(outs)
    n = 2 if p.main.no_bias else 3
    for i in range(len(ins)):
        if i == 0 and p.quantized:
            check_quantized(_OP, ins[0])
        elif i == 0 or not p.quantized or i >= n:
            set_type(_OP, ins, i, F32, f"input {i}")
        else:
            set_type(_OP, ins, i, np.int8, f"input {i}")
    set_type(_OP, outs, 0, _out_dtype(p), "output 0")
    for i in range(1, len(outs)):
        set_type(_OP, outs, i, F32, f"output {i}")
    return ins, outs


def _int8_weight_bias(p, x, data_scale):
    """The int8 weight, the int32 bias (or None) and the weight's scale, as MXNet's
    per-tensor path rescales them."""
    n = 2 if p.main.no_bias else 3
    ranges = [scalar(r) for r in x[n + 2:]]
    w, w_scale = x[1], quantize_scale(np.int8, *ranges[:2])
    if p.main.no_bias:
        return w, None, w_scale
    b_scale = quantize_scale(np.int8, *ranges[2:])
    rescale = data_scale * w_scale / b_scale
    bound = F32(2 ** 31 // 2 - 1) / max_abs(*ranges[2:]) / b_scale
    if rescale > bound:
        w_rescale = bound * b_scale / data_scale / w_scale
        w = _round_away(w.astype(F32) * w_rescale).astype(np.int8)
        w_scale, rescale = w_scale * w_rescale, bound
    return w, _round_away(x[2].astype(F32) * rescale).astype(np.int64), w_scale


def _round_away(v):
    return np.trunc(v + np.copysign(F32(0.5), v))


def _quantized(p, x, outputs, req):
    data = x[0]
    n = 2 if p.main.no_bias else 3
    lo, hi = scalar(x[n]), scalar(x[n + 1])
    data_scale = quantize_scale(data.dtype, lo, hi)
    w, b, w_scale = _int8_weight_bias(p, x, data_scale)
    rows = data.reshape(_rows(p, data.shape)).astype(F32)
    acc = int8_products(rows, w.astype(F32).T, data.dtype, rows.shape[1])
    if b is not None:
        acc += b
    dtype, shape = _out_dtype(p), outputs[0].shape
    if dtype == np.int32:
        y = activate(acc.astype(np.float64), p.fused_act(p.with_eltwise))
        assign(outputs[0], req[0], saturate(y, np.int32).reshape(shape))
        write_range(outputs, req, *product_range(lo, hi, *(scalar(r) for r in x[n + 2:n + 4]),
                                                 unsigned=data.dtype == np.uint8))
        return
    out_scale = quantize_scale(dtype, p.min_calib_range, p.max_calib_range) \
        if dtype != F32 else F32(1)
    if p.with_eltwise:
        y = activate(acc.astype(F32) * (F32(1) / data_scale / w_scale),
                     p.fused_act(True)) * out_scale
    else:
        y = acc.astype(F32) * (out_scale / data_scale / w_scale)
    if dtype == F32:
        assign(outputs[0], req[0], y.reshape(shape))
        return
    assign(outputs[0], req[0], saturate(y, dtype).reshape(shape))
    write_range(outputs, req, F32(p.min_calib_range), F32(p.max_calib_range))


def _compute(ctx, inputs, req, outputs, params):
    if params.quantized:
        _quantized(params, inputs, outputs, req)
        return
    x = inputs[0].reshape(_rows(params, inputs[0].shape))
    y = x @ inputs[1].T
    if not params.main.no_bias:
        y = y + inputs[2]
    y = activate(y.astype(F32), params.fused_act(params.with_eltwise))
    assign(outputs[0], req[0], y.reshape(outputs[0].shape))


(register_op(_OP)
 .describe("MXNet 1.9.1's fused oneDNN FullyConnected with an optional relu, its body graph "
           "in subgraphs; float32, or quantized (int8/uint8 data, int8 weight and bias, each "
           "with its range) returning (output, min_output, max_output), or float32 with "
           "enable_float_output. Inference only.")
 .set_attr_parser(SgFCParam)
 .set_num_inputs(lambda p: len(_layout(p)))
 .set_num_outputs(lambda p: len(_outputs(p)))
 .set_attr("FListInputNames", _layout)
 .set_attr("FListOutputNames", _outputs)
 .set_attr("FInferShape", _shape)
 .set_attr("FInferType", _types)
 .set_attr("FGradient", MakeZeroGradNodes)
 .set_attr("FCompute<cpu>", host_kernel(_compute)))
