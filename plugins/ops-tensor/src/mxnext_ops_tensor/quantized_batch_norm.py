"""MXNet 1.9's _contrib_quantized_batch_norm (``quantization/quantized_batch_norm.cc`` and its
oneDNN kernel): inference BatchNorm from int8/uint8 data to int8 over the calibrated output
range; gamma, beta and the moving statistics stay float32."""

from __future__ import annotations

import numpy as np
from opsdk import Field, Param, ShapeError, TypeInferError, assign, register_op
from opsdk.shape import merge_shape

from ._common import check_outs
from ._quantized import (F32, INT8_RANGE, ONE, RANGE_OUTPUTS, UINT8_RANGE, check_quantized,
                         host_kernel, max_abs, quantized_op, range_shapes, range_types, scalar,
                         set_type, write_range)

_OP = "_contrib_quantized_batch_norm"
_NAMES = ["data", "gamma", "beta", "moving_mean", "moving_var", "min_data", "max_data"]


class QuantizedBatchNormParam(Param):
    """BatchNorm's parameters (MXNet reuses BatchNormParam)."""
    eps: float = Field(1e-3, description="Epsilon to prevent div 0.")
    momentum: float = Field(0.9, description="Momentum for moving average (unused here).")
    fix_gamma: bool = Field(True, description="Fix gamma while training (unused: gamma is "
                                              "read as given, as MXNet's quantized kernel).")
    use_global_stats: bool = Field(False, description="Whether use global moving statistics "
                                                      "(always, in inference).")
    output_mean_var: bool = Field(False, description="Output the mean and inverse std (not "
                                                     "by the quantized op).")
    axis: int = Field(1, description="Specify which shape axis the channel is specified.")
    cudnn_off: bool = Field(False, description="Do not select CUDNN operator (ignored).")
    min_calib_range: float | None = Field(None, description="The minimum scalar value in the "
                                          "form of float32 obtained through calibration.")
    max_calib_range: float | None = Field(None, description="The maximum scalar value in the "
                                          "form of float32 obtained through calibration.")


def _axis(p, ndim):
    a = p.axis + ndim if p.axis < 0 else p.axis
    if not 0 <= a < ndim:
        raise ShapeError(f"Operator {_OP!r}: axis {p.axis} is out of range for {ndim}-d data")
    return a


def _shape(p, ins, outs):
    ins = range_shapes(_OP, ins, 5)
    d = ins[0]
    if d is None:
        return ins, list(outs)
    c = d[_axis(p, len(d))]
    for i in range(1, 5):
        ins[i] = merge_shape(_OP, ins[i], (c,), f"input {i} ({_NAMES[i]})")
    return ins, check_outs(_OP, outs, [tuple(d), ONE, ONE])


def _type(p, ins, outs):
    ins = list(ins)
    check_quantized(_OP, ins[0])
    for i in range(1, 5):
        set_type(_OP, ins, i, F32, f"input {i} ({_NAMES[i]})")
    return range_types(_OP, ins, outs, 5, np.int8)


def _batch_norm(ctx, inputs, req, outputs, params):
    """uint8 data is first rescaled to int8 steps (x * 127.5 / 255.5, rounded); then, per
    channel, y = x / sqrt(1 + eps) * w + s in float32 with w = gamma * invstd * |data| /
    |out| and s = (beta - mean * gamma * invstd) * 127.5 / |out|, invstd = 1 / sqrt(var +
    eps): oneDNN's batch norm over the folded scale and shift with mean 0 and variance 1."""
    if params.min_calib_range is None or params.max_calib_range is None:
        raise TypeInferError(f"Operator {_OP!r}: min_calib_range and max_calib_range are "
                             f"required (as MXNet's oneDNN kernel: no calib_mode=None)")
    x, gamma, beta, mean, var = inputs[:5]
    if x.dtype == np.uint8:
        x = np.clip(np.rint(x.astype(F32) * (INT8_RANGE / UINT8_RANGE)), -128, 127)
    data_abs = max_abs(scalar(inputs[5]), scalar(inputs[6]))
    lo, hi = F32(params.min_calib_range), F32(params.max_calib_range)
    out_abs = max_abs(lo, hi)
    invstd = (1.0 / np.sqrt(var.astype(np.float64) + params.eps)).astype(F32)
    w = gamma * invstd * data_abs / out_abs
    s = (beta - mean * gamma * invstd) * INT8_RANGE / out_abs
    shape = [1] * x.ndim
    shape[_axis(params, x.ndim)] = -1
    norm = F32(1 / np.sqrt(np.float64(F32(1) + F32(params.eps))))
    y = (x.astype(F32) * norm) * w.reshape(shape) + s.reshape(shape)
    assign(outputs[0], req[0], np.clip(np.rint(y), -128, 127).astype(np.int8))
    write_range(outputs, req, lo, hi)


quantized_op(
    register_op(_OP)
    .describe("BatchNorm (inference, moving statistics) of int8/uint8 data with its (min, "
              "max) range to int8 over the calibrated range (min_calib_range and "
              "max_calib_range are required). Returns (output, min_output, max_output). "
              "Inference only.")
    .set_attr_parser(QuantizedBatchNormParam).set_num_inputs(7).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FMutateInputs", lambda p: [3, 4])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", host_kernel(_batch_norm))
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 2), (3,), (3,), (3,), (3,), np.array([-1.0], F32),
                    np.array([1.0], F32)],
         "params": {"min_calib_range": -2.0, "max_calib_range": 2.0},
         "dtype": ["int8"] + ["float32"] * 6,
         "domain": [(-128, 128), (0.5, 2), (-1, 1), (-1, 1), (0.5, 2), (0, 1), (0, 1)],
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input data.")
    .add_argument("gamma", "NDArray-or-Symbol", "gamma.")
    .add_argument("beta", "NDArray-or-Symbol", "beta.")
    .add_argument("moving_mean", "NDArray-or-Symbol", "moving_mean.")
    .add_argument("moving_var", "NDArray-or-Symbol", "moving_var.")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data."),
    "BatchNorm", FAvoidQuantizeInput=lambda attrs, index: index != 0,
    FNeedCalibrateOutput=lambda attrs: [0])
