"""MXNet 1.9's int8 products with an int32 result: _contrib_quantized_fully_connected and
_contrib_quantized_conv (``quantization/quantized_fully_connected.cc``, ``quantized_conv.cc``
and their oneDNN kernels). Products are summed exactly (``exact_matmul``: float32 BLAS over
chunks short enough to stay exact); the int32 output stands for ``x * max_output / 2^31``."""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, Param, ShapeError, assign, register_op
from opsdk.shape import dims_prod, merge_shape

from ._common import check_outs
from ._exact_gemm import exact_matmul, magnitude
from ._quantized import (F32, INT8_RANGE, ONE, RANGE_OUTPUTS, UINT8_RANGE, check_quantized,
                         host_kernel, max_abs, product_range, quantized_op, range_shapes,
                         range_types, scalar, set_type, write_range)

_I32 = np.iinfo(np.int32)


def _names(p):
    """data, weight[, bias], then a min/max pair for each, as MXNet names them."""
    base = ["data", "weight"] + ([] if p.no_bias else ["bias"])
    return base + [f"{m}_{n}" for n in base for m in ("min", "max")]


def _int32(acc):
    """int64 sums saturated to int32 (``acc`` is clipped in place)."""
    return np.clip(acc, _I32.min, _I32.max, out=acc).astype(np.int32)


def _fix_types(op, p, ins, outs):
    n = 2 if p.no_bias else 3
    ins = list(ins)
    check_quantized(op, ins[0])
    for i in range(1, n):
        set_type(op, ins, i, np.int8, f"input {i} ({'weight' if i == 1 else 'bias'})")
    return range_types(op, ins, outs, n, np.int32)


# -- _contrib_quantized_fully_connected ----------------------------------------------------
class QuantizedFullyConnectedParam(Param):
    """FullyConnected's parameters (MXNet reuses FullyConnectedParam)."""
    num_hidden: int = Field(ge=1, description="Number of hidden nodes of the output.")
    no_bias: bool = Field(False, description="Whether to disable bias parameter.")
    flatten: bool = Field(True, description="Whether to collapse all but the first axis of "
                                            "the input data tensor.")


_FC = "_contrib_quantized_fully_connected"


def _fc_shape(p, ins, outs):
    """MXNet's QuantizedFullyConnectedShape: the weight (and bias) from the data's feature
    size, then the data's batch size back from a known output (an RNN's begin state
    ``_zeros((0, H))`` learns it from the sum it feeds)."""
    n = 2 if p.no_bias else 3
    ins = range_shapes(_FC, ins, n)
    d = ins[0]
    if d is None or not d:
        return ins, list(outs)
    k = dims_prod(d[1:]) if p.flatten else d[-1]
    ins[1] = merge_shape(_FC, ins[1], (p.num_hidden, k), "input 1 (weight)")
    if not p.no_bias:
        ins[2] = merge_shape(_FC, ins[2], (p.num_hidden,), "input 2 (bias)")
    out = (d[0], p.num_hidden) if p.flatten else tuple(d[:-1]) + (p.num_hidden,)
    outs = check_outs(_FC, outs, [out, ONE, ONE])
    ins[0] = merge_shape(_FC, d, (outs[0][0],) + tuple(d[1:]), "input 0 (data)")
    return ins, outs


def _bias_int32(bias, data_dtype, ranges):
    """oneDNN's int32 bias: each int8 bias times data_scale * weight_scale * |bias| / 127.5
    in float32, truncated."""
    d_lo, d_hi, w_lo, w_hi, b_lo, b_hi = ranges
    data_scale = (INT8_RANGE if data_dtype == np.int8 else UINT8_RANGE) / max_abs(d_lo, d_hi)
    rescale = data_scale * (INT8_RANGE / max_abs(w_lo, w_hi)) * max_abs(b_lo, b_hi) / INT8_RANGE
    with np.errstate(invalid="ignore", over="ignore"):
        scaled = bias.astype(F32) * rescale
    return np.trunc(np.nan_to_num(scaled)).astype(np.int64)


def _fully_connected(ctx, inputs, req, outputs, params):
    n = 2 if params.no_bias else 3
    x, w = inputs[0], inputs[1]
    ranges = [scalar(r) for r in inputs[n:]]
    rows = x.reshape(x.shape[0], -1) if params.flatten else x.reshape(-1, x.shape[-1])
    bound = magnitude(x.dtype) * magnitude(w.dtype)
    acc = exact_matmul(rows.astype(F32), w.astype(F32).T, bound)
    if not params.no_bias:
        acc += _bias_int32(inputs[2], x.dtype, ranges)
    assign(outputs[0], req[0], _int32(acc).reshape(outputs[0].shape))
    write_range(outputs, req, *product_range(*ranges[:4], unsigned=x.dtype == np.uint8))


quantized_op(
    register_op(_FC)
    .describe("FullyConnected on int8/uint8 data with an int8 weight (and int8 bias), summed "
              "in int32. Each argument comes with its (min, max) float range; the output "
              "range is (-m, m), m = |data|/127 * |weight|/127 * 2^31 (uint8 data: the "
              "weight's divisor is 255, as MXNet's S8U8 form). The bias is rescaled to the "
              "output's int32 steps. Returns (output, min_output, max_output). Inference only.")
    .set_attr_parser(QuantizedFullyConnectedParam)
    .set_num_inputs(lambda p: 6 if p.no_bias else 9).set_num_outputs(3)
    .set_attr("FListInputNames", _names)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FInferShape", _fc_shape)
    .set_attr("FInferType", lambda p, i, o: _fix_types(_FC, p, i, o))
    .set_attr("FCompute<cpu>", host_kernel(_fully_connected))
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 2), (4, 6), np.array([-1.0], F32), np.array([2.0], F32),
                    np.array([-0.5], F32), np.array([0.5], F32)],
         "params": {"num_hidden": 4, "no_bias": True},
         "dtype": ["int8", "int8"] + ["float32"] * 4,
         "domain": [(-128, 128), (-128, 128)] + [(0, 1)] * 4, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input data (int8 or uint8).")
    .add_argument("weight", "NDArray-or-Symbol", "weight (int8).")
    .add_argument("bias", "NDArray-or-Symbol", "bias (int8).")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_argument("min_weight", "NDArray-or-Symbol", "Minimum value of weight.")
    .add_argument("max_weight", "NDArray-or-Symbol", "Maximum value of weight.")
    .add_argument("min_bias", "NDArray-or-Symbol", "Minimum value of bias.")
    .add_argument("max_bias", "NDArray-or-Symbol", "Maximum value of bias."),
    "FullyConnected", need_requantize=True)


# -- _contrib_quantized_conv ---------------------------------------------------------------
class QuantizedConvParam(Param):
    """Convolution's parameters (MXNet reuses ConvolutionParam)."""
    kernel: tuple[int, ...] = Field(description="Convolution kernel size: (h, w) or (d, h, w).")
    stride: tuple[int, ...] = Field((), description="Convolution stride; empty means 1.")
    dilate: tuple[int, ...] = Field((), description="Convolution dilation; empty means 1.")
    pad: tuple[int, ...] = Field((), description="Zero pad on both sides; empty means 0.")
    num_filter: int = Field(ge=1, description="Convolution filter (channel) number.")
    num_group: int = Field(1, ge=1, description="Number of group partitions (only 1, as "
                                                "MXNet's quantized_conv).")
    workspace: int = Field(1024, ge=0, description="Workspace limit in MB (ignored).")
    no_bias: bool = Field(False, description="Whether to disable bias parameter.")
    cudnn_tune: Literal["off", "limited_workspace", "fastest"] | None = Field(
        None, description="cuDNN tuning (ignored).")
    cudnn_off: bool = Field(False, description="Turn off cudnn (ignored).")
    layout: Literal["NCW", "NCHW", "NCDHW", "NHWC", "NDHWC"] | None = Field(
        None, description="Data layout: only NCHW / NCDHW, as MXNet's oneDNN quantized_conv.")


_CONV = "_contrib_quantized_conv"


def geometry(p):
    n = len(p.kernel)
    fill = lambda v, d: tuple(v) if v else (d,) * n       # noqa: E731
    stride, dilate, pad = fill(p.stride, 1), fill(p.dilate, 1), fill(p.pad, 0)
    for name, v in (("stride", stride), ("dilate", dilate), ("pad", pad)):
        if len(v) != n:
            raise ShapeError(f"Operator {_CONV!r}: {name} {v} must have {n} entries like "
                             f"kernel {p.kernel}")
    return stride, dilate, pad


def _check_conv(p, d):
    if p.num_group != 1:
        raise ShapeError(f"Operator {_CONV!r}: num_group must be 1 (as MXNet's "
                         f"quantized_conv), got {p.num_group}")
    if p.layout not in (None, "NCHW", "NCDHW"):
        raise ShapeError(f"Operator {_CONV!r}: layout must be NCHW or NCDHW, got {p.layout!r}")
    if len(p.kernel) not in (2, 3) or len(d) != len(p.kernel) + 2:
        raise ShapeError(f"Operator {_CONV!r}: needs a 2-d or 3-d kernel and 4-d or 5-d data "
                         f"to match (as MXNet's oneDNN build), got kernel {p.kernel} and "
                         f"data {tuple(d)}")


def _conv_shape(p, ins, outs):
    n = 2 if p.no_bias else 3
    ins = range_shapes(_CONV, ins, n)
    d = ins[0]
    if d is None:
        return ins, list(outs)
    _check_conv(p, d)
    stride, dilate, pad = geometry(p)
    ins[1] = merge_shape(_CONV, ins[1], (p.num_filter, d[1]) + tuple(p.kernel),
                         "input 1 (weight)")
    if not p.no_bias:
        ins[2] = merge_shape(_CONV, ins[2], (p.num_filter,), "input 2 (bias)")
    spatial = tuple((x + 2 * q - (dl * (k - 1) + 1)) // s + 1 for x, k, s, dl, q in
                    zip(d[2:], p.kernel, stride, dilate, pad))
    if any(v <= 0 for v in spatial):
        raise ShapeError(f"Operator {_CONV!r}: kernel {p.kernel} (dilate {dilate}) is larger "
                         f"than data {tuple(d)} padded by {pad}")
    return ins, check_outs(_CONV, outs, [(d[0], p.num_filter) + spatial, ONE, ONE])


def windows(x, kernel, stride, dilate):
    """A strided view (N, C, *out, *kernel) of the (already padded) N-d data ``x``."""
    nd = len(kernel)
    out = tuple((x.shape[2 + i] - (dilate[i] * (kernel[i] - 1) + 1)) // stride[i] + 1
                for i in range(nd))
    st = x.strides
    strides = st[:2] + tuple(st[2 + i] * stride[i] for i in range(nd)) + \
        tuple(st[2 + i] * dilate[i] for i in range(nd))
    return np.lib.stride_tricks.as_strided(x, x.shape[:2] + out + tuple(kernel), strides,
                                           writeable=False)


def columns(x, params):
    """im2col, channels last: float32 rows (N * prod(out), prod(kernel) * C) of the padded
    data, one per output position, and the output's spatial shape."""
    stride, dilate, pad = geometry(params)
    kernel, nd = tuple(params.kernel), len(params.kernel)
    padded = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad])
    last = np.array(np.moveaxis(padded, 1, -1), dtype=F32, order="C")
    out = tuple((last.shape[1 + i] - (dilate[i] * (kernel[i] - 1) + 1)) // stride[i] + 1
                for i in range(nd))
    st = last.strides
    strides = st[:1] + tuple(st[1 + i] * stride[i] for i in range(nd)) + \
        tuple(st[1 + i] * dilate[i] for i in range(nd)) + st[-1:]
    win = np.lib.stride_tricks.as_strided(last, last.shape[:1] + out + kernel + last.shape[-1:],
                                          strides, writeable=False)
    return win.reshape(dims_prod(win.shape[:1 + nd]), -1), out


def _conv(ctx, inputs, req, outputs, params):
    """int32 sums of products, the bias and the output range as fully connected has them.
    MXNet's unfused oneDNN kernel adds the int8 bias unscaled and declares a uint8-data
    range with 127 for both scales (twice its step): a quantize_model graph then dequantizes
    wrong, so mxnext keeps the two consistent instead (docs/quantization.md)."""
    n = 2 if params.no_bias else 3
    x, w = inputs[0], inputs[1]
    ranges = [scalar(r) for r in inputs[n:]]
    cols, out = columns(x, params)
    taps = np.moveaxis(w, 1, -1).reshape(w.shape[0], -1).astype(F32).T    # (kernel..., C)
    acc = exact_matmul(cols, taps, magnitude(x.dtype) * magnitude(w.dtype))
    if not params.no_bias:
        acc += _bias_int32(inputs[2], x.dtype, ranges)
    acc = np.moveaxis(acc.reshape((x.shape[0],) + out + (-1,)), -1, 1)
    assign(outputs[0], req[0], _int32(acc))
    write_range(outputs, req, *product_range(*ranges[:4], unsigned=x.dtype == np.uint8))


quantized_op(
    register_op(_CONV)
    .describe("Convolution (2-d NCHW or 3-d NCDHW, num_group 1) of int8/uint8 data with an "
              "int8 weight (and int8 bias), summed in int32. Each argument comes with its "
              "(min, max) float range; the output range is (-m, m), m = |data|/127 * "
              "|weight|/127 * 2^31 (uint8 data: the weight's divisor is 255, as fully "
              "connected). The bias is rescaled to the output's int32 steps. Returns "
              "(output, min_output, max_output). Inference only.")
    .set_attr_parser(QuantizedConvParam)
    .set_num_inputs(lambda p: 6 if p.no_bias else 9).set_num_outputs(3)
    .set_attr("FListInputNames", _names)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FInferShape", _conv_shape)
    .set_attr("FInferType", lambda p, i, o: _fix_types(_CONV, p, i, o))
    .set_attr("FCompute<cpu>", host_kernel(_conv))
    .set_attr("TExamples", [
        {"inputs": [(1, 2, 4, 4), (3, 2, 2, 2), (3,)] + [np.array([v], F32) for v in
                                                         (0.0, 1.0, -1.0, 1.0, -1.0, 1.0)],
         "params": {"kernel": (2, 2), "num_filter": 3, "pad": (1, 0)},
         "dtype": ["uint8", "int8", "int8"] + ["float32"] * 6,
         "domain": [(0, 256), (-128, 128), (-128, 128)] + [(0, 1)] * 6, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input data (uint8 or int8).")
    .add_argument("weight", "NDArray-or-Symbol", "weight (int8).")
    .add_argument("bias", "NDArray-or-Symbol", "bias (int8).")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data.")
    .add_argument("min_weight", "NDArray-or-Symbol", "Minimum value of weight.")
    .add_argument("max_weight", "NDArray-or-Symbol", "Maximum value of weight.")
    .add_argument("min_bias", "NDArray-or-Symbol", "Minimum value of bias.")
    .add_argument("max_bias", "NDArray-or-Symbol", "Maximum value of bias."),
    "Convolution", need_requantize=True)
