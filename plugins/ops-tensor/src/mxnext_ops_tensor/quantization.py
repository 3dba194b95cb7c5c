"""MXNet 1.9's basic quantization ops (``src/operator/quantization``): _contrib_quantize,
_contrib_quantize_v2, _contrib_dequantize, _contrib_requantize and _contrib_quantize_asym.

The numbers are those of MXNet 1.9.1's CPU build with oneDNN (the pip wheels): every kernel
is one scaling ``q = saturate(rint(x * scale))`` (quantize_asym: ``x * scale + shift``)
computed in float32, rounding half to even and saturating to the full int8/uint8 range
(-128 is reachable); quantize_v2 and dequantize use the 127.5/255.5 ranges of
``kInt8Range``/``kUint8Range``. They are inference ops: their gradient is zero, as MXNet's
``MakeZeroGradNodes``.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from opsdk import Field, MakeZeroGradNodes, Param, TypeInferError, assign, register_op
from opsdk.shape import merge_shape

from ._common import check_outs
from ._quantized import (F32, INT8_RANGE, INT32_RANGE, ONE, UINT8_RANGE, max_abs, scalar,
                         write_range)


def _f32(v):
    """A host float32 from a number or a 0-d array of any device."""
    return F32(float(v))


def _saturate(xp, x, scale, dtype):
    """``x * scale`` in float32, rounded half to even and clipped to ``dtype``'s range (a
    0 * inf of an all-zero range gives 0); in place on one float32 copy."""
    info = np.iinfo(dtype)
    y = x.astype(F32)
    with np.errstate(invalid="ignore", over="ignore"):
        xp.multiply(y, F32(scale), out=y)
    xp.rint(y, out=y)
    xp.clip(y, info.min, info.max, out=y)
    y[xp.isnan(y)] = 0
    return y.astype(dtype)


def _out_dtype(params):
    """MXNet's GetQuantizeOutputType: ``auto`` is uint8 when both calibration bounds are set
    and the lower one is >= 0, else int8."""
    if params.out_type != "auto":
        return np.dtype(params.out_type)
    calibrated = params.min_calib_range is not None and params.max_calib_range is not None
    return np.dtype(np.uint8 if calibrated and params.min_calib_range >= 0 else np.int8)


def _calib(params):
    """(min, max) of the calibration, or None unless both are set."""
    if params.min_calib_range is None or params.max_calib_range is None:
        return None
    return F32(params.min_calib_range), F32(params.max_calib_range)


def _assign_types(op, what, types, want):
    """MXNet's TYPE_ASSIGN_CHECK over the dtypes of the inputs or outputs (``what``);
    ``want[i]`` None leaves entry i as it is."""
    types = list(types)
    for i, t in enumerate(want):
        if t is None:
            continue
        if types[i] is not None and np.dtype(types[i]) != np.dtype(t):
            raise TypeInferError(f"Operator {op!r}: {what} {i} has "
                                 f"dtype {np.dtype(types[i])}, expected {np.dtype(t)}")
        types[i] = np.dtype(t)
    return types


def _range_shape(op, n_in, n_out):
    """QuantizeShape/DequantizeShape: the data shape passes to output 0, every min/max input
    and extra output is (1,)."""
    def infer(params, ins, outs):
        ins = list(ins)
        for i in range(1, n_in):
            ins[i] = merge_shape(op, ins[i], ONE, f"input {i} (a range)")
        data = ins[0] if outs[0] is None else merge_shape(op, ins[0], outs[0], "data")
        ins[0] = data
        return ins, check_outs(op, outs, [data] + [ONE] * (n_out - 1))
    return infer


def _range_type(op, data_dtypes, out_dtype):
    """Data must have one of ``data_dtypes`` (the first is assigned when it is unknown and
    the only one), the ranges are float32; outputs: ``out_dtype(params)`` then float32."""
    def infer(params, ins, outs):
        t = ins[0]
        if t is None and len(data_dtypes) == 1:
            t = data_dtypes[0]
        if t is not None and np.dtype(t) not in [np.dtype(d) for d in data_dtypes]:
            raise TypeInferError(f"Operator {op!r}: data has dtype {np.dtype(t)}, expected "
                                 f"one of {', '.join(data_dtypes)}")
        ins = _assign_types(op, "input", [t, *ins[1:]], [None] + [F32] * (len(ins) - 1))
        outs = _assign_types(op, "output", outs, [out_dtype(params)] + [F32] * (len(outs) - 1))
        return ins, outs
    return infer


# -- _contrib_quantize ---------------------------------------------------------------------
class QuantizeParam(Param):
    out_type: Literal["int8", "uint8"] = Field("uint8", description="Output data type.")


def _quantize(ctx, inputs, req, outputs, params):
    """int8: scale 127 / max(|min|, |max|), range out (-r, r); uint8: scale 255 / r, the
    input range passed on."""
    x, lo, hi = inputs[0], scalar(inputs[1]), scalar(inputs[2])
    real = max_abs(lo, hi)
    dtype = np.dtype(params.out_type)
    scale = (F32(127) if dtype == np.int8 else F32(255)) / real
    assign(outputs[0], req[0], _saturate(ctx.xp, x, scale, dtype))
    write_range(outputs, req, *((-real, real) if dtype == np.int8 else (lo, hi)), xp=ctx.xp)


(register_op("_contrib_quantize")
    .describe("Quantizes float32 data to out_type (int8 or uint8) with the given min_range and "
              "max_range: q = rint(x * 127 / max(|min|, |max|)) for int8 (output range "
              "symmetric), rint(x * 255 / max(|min|, |max|)) for uint8 (input range passed on), "
              "saturated. Returns (quantized, min, max). Inference only.")
    .set_attr_parser(QuantizeParam).set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "min_range", "max_range"])
    .set_attr("FListOutputNames", lambda p: ["output", "min_output", "max_output"])
    .set_attr("FInferShape", _range_shape("_contrib_quantize", 3, 3))
    .set_attr("FInferType", _range_type("_contrib_quantize", ["float32"],
                                        lambda p: np.dtype(p.out_type)))
    .set_attr("FCompute<cpu>", _quantize)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(3, 4), np.array([-1.0], F32), np.array([0.5], F32)],
         "params": {"out_type": "int8"}, "grad": False},
        {"inputs": [(2, 3), np.array([0.0], F32), np.array([1.0], F32)], "domain": (0, 1),
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`")
    .add_argument("min_range", "NDArray-or-Symbol", "The minimum scalar value possibly "
                                                    "produced for the input")
    .add_argument("max_range", "NDArray-or-Symbol", "The maximum scalar value possibly "
                                                    "produced for the input"))


# -- _contrib_quantize_v2 ------------------------------------------------------------------
class QuantizeV2Param(Param):
    out_type: Literal["auto", "int8", "uint8"] = Field(
        "int8", description="Output data type. `auto` can be specified to automatically "
                            "determine output type according to min_calib_range.")
    min_calib_range: float | None = Field(None, description="The minimum scalar value in the "
                                          "form of float32. If present, it will be used to "
                                          "quantize the fp32 data into int8 or uint8.")
    max_calib_range: float | None = Field(None, description="The maximum scalar value in the "
                                          "form of float32. If present, it will be used to "
                                          "quantize the fp32 data into int8 or uint8.")


def _quantize_v2(ctx, inputs, req, outputs, params):
    """float32 data: the calibration range, else the data's own min and max; int8 scales by
    127.5 / max(|min|, |max|) (range out (-r, r)), uint8 by 255.5 / r (range out as is).
    int8/uint8 data passes through, its bytes read as the output dtype, with the calibration
    range or the full one of its dtype (0, 255.5) / (-127.5, 127.5)."""
    x, dtype, calib = inputs[0], _out_dtype(params), _calib(params)
    if x.dtype != np.float32:
        assign(outputs[0], req[0], x.view(outputs[0].dtype))
        if calib is None:
            calib = (F32(0), UINT8_RANGE) if x.dtype == np.uint8 else (-INT8_RANGE,
                                                                          INT8_RANGE)
        write_range(outputs, req, *calib, xp=ctx.xp)
        return
    lo, hi = calib if calib is not None else (_f32(x.min()), _f32(x.max()))
    real = max_abs(lo, hi)
    scale = (INT8_RANGE if dtype == np.int8 else UINT8_RANGE) / real
    assign(outputs[0], req[0], _saturate(ctx.xp, x, scale, dtype))
    write_range(outputs, req, *((-real, real) if dtype == np.int8 else (lo, hi)), xp=ctx.xp)


(register_op("_contrib_quantize_v2")
    .describe("Quantizes float32 data to out_type with min_calib_range/max_calib_range, or "
              "the data's own range when they are not given: q = rint(x * 127.5 / r) for "
              "int8, rint(x * 255.5 / r) for uint8, r = max(|min|, |max|), saturated; `auto` "
              "picks uint8 when min_calib_range >= 0, else int8. int8/uint8 data passes "
              "through. Returns (quantized, min, max). Inference only.")
    .set_attr_parser(QuantizeV2Param).set_num_inputs(1).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "min_output", "max_output"])
    .set_attr("FInferShape", _range_shape("_contrib_quantize_v2", 1, 3))
    .set_attr("FInferType", _range_type("_contrib_quantize_v2", ["float32", "uint8", "int8"],
                                        _out_dtype))
    .set_attr("FCompute<cpu>", _quantize_v2)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(3, 4)], "grad": False},
        {"inputs": [(2, 3)], "params": {"out_type": "auto", "min_calib_range": 0.0,
                                        "max_calib_range": 0.5}, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`"))


# -- _contrib_dequantize -------------------------------------------------------------------
class DequantizeParam(Param):
    out_type: Literal["float32"] = Field("float32", description="Output data type.")


def _dequantize(ctx, inputs, req, outputs, params):
    """x * max(|min|, |max|) / 127.5 for int8 data, / 255.5 for uint8, in float32."""
    x = inputs[0]
    real = max_abs(scalar(inputs[1]), scalar(inputs[2]))
    scale = real / (INT8_RANGE if x.dtype == np.int8 else UINT8_RANGE)
    assign(outputs[0], req[0], x.astype(F32) * scale)


(register_op("_contrib_dequantize")
    .describe("Dequantizes int8 or uint8 data to float32 with the range (min_range, "
              "max_range) it was quantized with: x * max(|min|, |max|) / 127.5 (int8) or "
              "/ 255.5 (uint8). Inference only.")
    .set_attr_parser(DequantizeParam).set_num_inputs(3).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "min_range", "max_range"])
    .set_attr("FInferShape", _range_shape("_contrib_dequantize", 3, 1))
    .set_attr("FInferType", _range_type("_contrib_dequantize", ["uint8", "int8"],
                                        lambda p: np.dtype(np.float32)))
    .set_attr("FCompute<cpu>", _dequantize)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(3, 4), np.array([-1.0], F32), np.array([2.0], F32)],
         "dtype": ["int8", "float32", "float32"], "domain": [(-128, 128), (0, 1), (0, 1)],
         "grad": False},
        {"inputs": [(2, 3), np.array([0.0], F32), np.array([2.0], F32)],
         "dtype": ["uint8", "float32", "float32"], "domain": [(0, 256), (0, 1), (0, 1)],
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `uint8`")
    .add_argument("min_range", "NDArray-or-Symbol", "The minimum scalar value possibly "
                                                    "produced for the input in float32")
    .add_argument("max_range", "NDArray-or-Symbol", "The maximum scalar value possibly "
                                                    "produced for the input in float32"))


# -- _contrib_requantize -------------------------------------------------------------------
class RequantizeParam(QuantizeV2Param):
    pass


def _requantize(ctx, inputs, req, outputs, params):
    """int32 data quantized over (min_range, max_range) to int8 (uint8) over the calibration
    range, or over the range the data itself reaches: one scale
    (max(|min|, |max|) / 2^31) * (127 (255) / r), output range (-r, r) ((0, r))."""
    x, dtype, calib = inputs[0], _out_dtype(params), _calib(params)
    data_scale = max_abs(scalar(inputs[1]), scalar(inputs[2]))
    if calib is not None:
        real = max_abs(*calib)
    else:       # the data's largest magnitude, truncated to an int32 as MXNet stores it
        peak = np.int32(max_abs(x.min(), x.max()))
        real = F32(peak) * data_scale / INT32_RANGE
    first = data_scale / INT32_RANGE
    second = (F32(127) if dtype == np.int8 else F32(255)) / real
    assign(outputs[0], req[0], _saturate(ctx.xp, x, first * second, dtype))
    write_range(outputs, req, -real if dtype == np.int8 else F32(0), real, xp=ctx.xp)


(register_op("_contrib_requantize")
    .describe("Requantizes int32 data (with the float range it stands for) to int8, or "
              "uint8 with out_type uint8/auto, over min_calib_range/max_calib_range or, "
              "without them, the range the data reaches. Returns (quantized, min, max). "
              "Inference only.")
    .set_attr_parser(RequantizeParam).set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "min_range", "max_range"])
    .set_attr("FListOutputNames", lambda p: ["output", "min_output", "max_output"])
    .set_attr("FInferShape", _range_shape("_contrib_requantize", 3, 3))
    .set_attr("FInferType", _range_type("_contrib_requantize", ["int32"], _out_dtype))
    .set_attr("FCompute<cpu>", _requantize)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("TExamples", [
        {"inputs": [(3, 4), np.array([-5.0], F32), np.array([5.0], F32)],
         "dtype": ["int32", "float32", "float32"], "domain": [(-10 ** 9, 10 ** 9), (0, 1),
                                                              (0, 1)], "grad": False},
        {"inputs": [(2, 3), np.array([-5.0], F32), np.array([5.0], F32)],
         "dtype": ["int32", "float32", "float32"], "domain": [(-10 ** 9, 10 ** 9), (0, 1),
                                                              (0, 1)],
         "params": {"min_calib_range": -1e-3, "max_calib_range": 2e-3}, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `int32`")
    .add_argument("min_range", "NDArray-or-Symbol", "The original minimum scalar value in "
                  "the form of float32 used for quantizing data into int32.")
    .add_argument("max_range", "NDArray-or-Symbol", "The original maximum scalar value in "
                  "the form of float32 used for quantizing data into int32."))


# -- _contrib_quantize_asym ----------------------------------------------------------------
class QuantizeAsymParam(Param):
    min_calib_range: float | None = Field(None, description="The minimum scalar value in the "
                                          "form of float32. If present, it will be used to "
                                          "quantize the fp32 data.")
    max_calib_range: float | None = Field(None, description="The maximum scalar value in the "
                                          "form of float32. If present, it will be used to "
                                          "quantize the fp32 data.")


def _quantize_asym(ctx, inputs, req, outputs, params):
    """oneDNN's reorder with RNN data qparams: ``q = saturate(rint(x * scale + shift))``,
    ``scale = 255 / (max - min)`` and ``shift = 255 - max * scale`` in float32, over the
    calibration range or the data's own (NaN ignored, as MXNet's comparisons skip it)."""
    xp, x = ctx.xp, inputs[0]
    calib = _calib(params)
    if calib is None:
        calib = _f32(xp.nanmin(x)), _f32(xp.nanmax(x))
    lo, hi = calib
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        scale = F32(255) / (hi - lo)
        shift = F32(255) - hi * scale
        y = xp.rint(x.astype(F32) * scale + shift)
    y = xp.where(xp.isnan(y), F32(0), y)
    assign(outputs[0], req[0], xp.clip(y, 0, 255).astype(np.uint8))
    write_range(outputs, req, scale, shift, xp=ctx.xp)


(register_op("_contrib_quantize_asym")
    .describe("Quantizes float32 data to uint8 asymmetrically: q = rint(x * scale + shift), "
              "saturated, with scale = 255 / (max - min) and shift = 255 - max * scale over "
              "min_calib_range/max_calib_range or, without them, the data's own range. "
              "Returns (quantized, scale, shift). Inference only.")
    .set_attr_parser(QuantizeAsymParam).set_num_inputs(1).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data"])
    .set_attr("FListOutputNames", lambda p: ["output", "scale", "shift"])
    .set_attr("FInferShape", _range_shape("_contrib_quantize_asym", 1, 3))
    .set_attr("FInferType", _range_type("_contrib_quantize_asym", ["float32"],
                                        lambda p: np.dtype(np.uint8)))
    .set_attr("FCompute<cpu>", _quantize_asym)
    .set_attr("FGradient", MakeZeroGradNodes)
    .set_attr("FNeedCalibrateInput", lambda attrs: [0])
    .set_attr("TExamples", [
        {"inputs": [(2, 3, 4)], "grad": False},
        {"inputs": [(2, 3)], "params": {"min_calib_range": -0.5, "max_calib_range": 1.0},
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "A ndarray/symbol of type `float32`"))
