"""MXNet 1.9's quantized elementwise ops: _contrib_quantized_elemwise_add (oneDNN's scaled
sum, ``mkldnn/mkldnn_quantized_elemwise_add.cc``) and _contrib_quantized_elemwise_mul
(``quantized_elemwise_mul.cc``). Without a calibration range both give int32 steps of the
range they report; with one, the result is requantized to it."""

from __future__ import annotations

import numpy as np
from opsdk import Field, Param, ShapeError, TypeInferError, assign, register_op

from ._common import check_outs
from ._quantized import (F32, INT32_RANGE, INT8_RANGE, ONE, RANGE_OUTPUTS, UINT8_RANGE,
                         check_quantized, host_kernel, max_abs, product_range, quantized_op,
                         range_shapes, range_types, scalar, write_range)

_ADD = "_contrib_quantized_elemwise_add"
_MUL = "_contrib_quantized_elemwise_mul"
_NAMES = ["lhs", "rhs", "lhs_min", "lhs_max", "rhs_min", "rhs_max"]
_STEPS = {np.dtype(np.int8): INT8_RANGE, np.dtype(np.uint8): UINT8_RANGE,
          np.dtype(np.int32): INT32_RANGE}


class QuantizedElemwiseAddParam(Param):
    min_calib_range: float | None = Field(None, description="The minimum scalar value in the "
                                          "form of float32 obtained through calibration. If "
                                          "present, it will be used to requantize the int8 "
                                          "output data.")
    max_calib_range: float | None = Field(None, description="The maximum scalar value in the "
                                          "form of float32 obtained through calibration. If "
                                          "present, it will be used to requantize the int8 "
                                          "output data.")

    def calib(self):
        """(min, max) of the calibration, or None unless both are set."""
        if self.min_calib_range is None or self.max_calib_range is None:
            return None
        return F32(self.min_calib_range), F32(self.max_calib_range)


class QuantizedElemwiseMulParam(QuantizedElemwiseAddParam):
    enable_float_output: bool = Field(False, description="Whether to enable float32 output")


def _same_shapes(op, ins, outs, n_out):
    ins = range_shapes(op, ins, 2)
    a, b = ins[0], ins[1]
    if a is None or b is None:
        return ins, list(outs)
    if tuple(a) != tuple(b):
        raise ShapeError(f"Operator {op!r}: lhs has shape {tuple(a)} and rhs {tuple(b)}, "
                         f"expected equal shapes (no broadcasting)")
    return ins, check_outs(op, outs, [tuple(a), ONE, ONE][:n_out])


# -- _contrib_quantized_elemwise_add -------------------------------------------------------
def _add_type(p, ins, outs):
    for i, what in ((0, "lhs"), (1, "rhs")):
        check_quantized(_ADD, ins[i], what)
    out = np.int32
    if p.calib() is not None:
        if ins[0] is None or ins[1] is None:
            out = None
        else:
            out = ins[0] if np.dtype(ins[0]) == np.dtype(ins[1]) else np.int8
    return range_types(_ADD, ins, outs, 2, out)


def _coefficient(x, r, total, out_steps, calib):
    """oneDNN's scale for one input: output steps per input step."""
    if calib is not None:
        return (out_steps / max_abs(*calib)) / (_STEPS[x.dtype] / r)
    return r * out_steps / (total * _STEPS[x.dtype])


def _sum_terms(a, b, ra, rb, out_steps, calib):
    """The two (values, scale) terms oneDNN sums. Data of mixed dtypes: the uint8 side is
    first reordered to int8 with its scale (rounded, saturated), then added as it is."""
    ka = _coefficient(a, ra, ra + rb, out_steps, calib)
    kb = _coefficient(b, rb, ra + rb, out_steps, calib)
    if a.dtype == b.dtype:
        return (a, ka), (b, kb)
    if a.dtype == np.uint8:
        return (_to_int8(a, ka), F32(1)), (b, kb)
    return (a, ka), (_to_int8(b, kb), F32(1))


def _to_int8(x, scale):
    return np.clip(np.rint(x.astype(F32) * scale), -128, 127)


def _elemwise_add(ctx, inputs, req, outputs, params):
    """oneDNN's sum: scale_a * a + scale_b * b in float32, rounded half to even, saturated to
    the output dtype; range (-(|a| + |b|), |a| + |b|) or the calibration's."""
    a, b, out = inputs[0], inputs[1], outputs[0]
    ra, rb = max_abs(scalar(inputs[2]), scalar(inputs[3])), max_abs(scalar(inputs[4]),
                                                                     scalar(inputs[5]))
    calib = params.calib()
    (va, ka), (vb, kb) = _sum_terms(a, b, ra, rb, _STEPS[out.dtype], calib)
    with np.errstate(invalid="ignore", over="ignore"):
        total = va.astype(F32) * F32(ka) + vb.astype(F32) * F32(kb)
    info = np.iinfo(out.dtype)
    res = np.clip(np.rint(total.astype(np.float64)), info.min, info.max)
    assign(out, req[0], res.astype(out.dtype))
    lo, hi = calib if calib is not None else (-(ra + rb), ra + rb)
    write_range(outputs, req, lo, hi)


quantized_op(
    register_op(_ADD)
    .describe("elemwise_add of int8/uint8 data, each with its (min, max) range. Without a "
              "calibration range the output is int32 over (-(|a|+|b|), |a|+|b|) (|a| the "
              "larger magnitude of a's range); with one, it is requantized to it (int8, or "
              "uint8 when both inputs are uint8). Returns (output, min_output, max_output). "
              "Inference only.")
    .set_attr_parser(QuantizedElemwiseAddParam).set_num_inputs(6).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FInferShape", lambda p, i, o: _same_shapes(_ADD, i, o, 3))
    .set_attr("FInferType", _add_type)
    .set_attr("FCompute<cpu>", host_kernel(_elemwise_add))
    .set_attr("TExamples", [
        {"inputs": [(3, 4), (3, 4)] + [np.array([v], F32) for v in (-1.0, 1.0, -2.0, 0.5)],
         "dtype": ["int8", "int8"] + ["float32"] * 4,
         "domain": [(-128, 128), (-128, 128)] + [(0, 1)] * 4, "grad": False}])
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "3rd input")
    .add_argument("lhs_max", "NDArray-or-Symbol", "4th input")
    .add_argument("rhs_min", "NDArray-or-Symbol", "5th input")
    .add_argument("rhs_max", "NDArray-or-Symbol", "6th input"),
    "elemwise_add", need_requantize=True)


# -- _contrib_quantized_elemwise_mul -------------------------------------------------------
def _mul_outputs(p):
    return 1 if p.enable_float_output else 3


def _mul_type(p, ins, outs):
    ins = list(ins)
    for i, what in ((0, "lhs"), (1, "rhs")):
        if ins[i] is not None and np.dtype(ins[i]) != np.int8:
            raise TypeInferError(f"Operator {_MUL!r}: {what} has dtype {np.dtype(ins[i])}, "
                                 f"expected int8")
        ins[i] = np.dtype(np.int8)
    if p.enable_float_output:
        ins, _ = range_types(_MUL, ins, [None, None, None], 2, None)
        return ins, [np.dtype(F32)]
    return range_types(_MUL, ins, outs, 2, np.int8 if p.calib() is not None else np.int32)


def _elemwise_mul(ctx, inputs, req, outputs, params):
    """a * b times one float32 scale, truncated toward zero (C's cast), as MXNet's loop: 1
    without calibration (range: the product range of fully connected), the calibration's
    steps over the inputs' otherwise; float output: the product in float."""
    a, b = inputs[0].astype(np.int32), inputs[1].astype(np.int32)
    ra, rb = (max_abs(scalar(inputs[2]), scalar(inputs[3])),
              max_abs(scalar(inputs[4]), scalar(inputs[5])))
    calib = params.calib()
    if params.enable_float_output:
        scale = F32(1.0 / np.float64(INT8_RANGE / ra) / np.float64(INT8_RANGE / rb))
        assign(outputs[0], req[0], (a * b).astype(F32) * scale)
        return
    if calib is None:
        assign(outputs[0], req[0], a * b)
        write_range(outputs, req, *product_range(scalar(inputs[2]), scalar(inputs[3]),
                                                 scalar(inputs[4]), scalar(inputs[5])))
        return
    scale = INT8_RANGE / max_abs(*calib) / (INT8_RANGE / ra) / (INT8_RANGE / rb)
    res = np.trunc((a * b).astype(F32) * scale)
    assign(outputs[0], req[0], np.clip(res, -128, 127).astype(np.int8))
    write_range(outputs, req, *calib)


quantized_op(
    register_op(_MUL)
    .describe("elemwise_mul of int8 data, each with its (min, max) range. Without a "
              "calibration range: int32 products over the range (-m, m), m = |a|/127 * "
              "|b|/127 * 2^31; with one: int8 over it; enable_float_output: the float32 "
              "product alone. Returns (output, min_output, max_output) or (output,). "
              "Inference only.")
    .set_attr_parser(QuantizedElemwiseMulParam).set_num_inputs(6)
    .set_num_outputs(_mul_outputs)
    .set_attr("FListInputNames", lambda p: _NAMES)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS[:_mul_outputs(p)])
    .set_attr("FInferShape", lambda p, i, o: _same_shapes(_MUL, i, o, _mul_outputs(p)))
    .set_attr("FInferType", _mul_type)
    .set_attr("FCompute<cpu>", host_kernel(_elemwise_mul))
    .set_attr("TExamples", [
        {"inputs": [(3, 4), (3, 4)] + [np.array([v], F32) for v in (-1.0, 1.0, -2.0, 0.5)],
         "dtype": ["int8", "int8"] + ["float32"] * 4,
         "domain": [(-128, 128), (-128, 128)] + [(0, 1)] * 4, "grad": False}])
    .add_argument("lhs", "NDArray-or-Symbol", "first input")
    .add_argument("rhs", "NDArray-or-Symbol", "second input")
    .add_argument("lhs_min", "NDArray-or-Symbol", "Minimum value of first input.")
    .add_argument("lhs_max", "NDArray-or-Symbol", "Maximum value of first input.")
    .add_argument("rhs_min", "NDArray-or-Symbol", "Minimum value of second input.")
    .add_argument("rhs_max", "NDArray-or-Symbol", "Maximum value of second input."),
    "elemwise_mul", need_requantize=True)
