"""MXNet 1.9's quantized ops that keep the data's steps: _contrib_quantized_pooling (max / avg)
and _contrib_quantized_act (relu) (``quantization/quantized_pooling.cc``,
``quantized_activation.cc`` and their oneDNN kernels). The (min, max) range passes on."""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from opsdk import Field, Param, ShapeError, TypeInferError, assign, register_op

from ._common import check_outs
from ._quantized import (ONE, RANGE_OUTPUTS, check_quantized, host_kernel, pass_range,
                         quantized_op, range_shapes, range_types)
from .quantized_conv_fc import windows

_POOL = "_contrib_quantized_pooling"
_ACT = "_contrib_quantized_act"


# -- _contrib_quantized_pooling ------------------------------------------------------------
class QuantizedPoolingParam(Param):
    """Pooling's parameters (MXNet reuses PoolingParam); only max and avg are quantized."""
    kernel: tuple[int, ...] = Field((), description="Pooling kernel size: (y, x) or (d, y, x).")
    pool_type: Literal["max", "avg", "sum", "lp"] = Field("max", description="Pooling type.")
    global_pool: bool = Field(False, description="Pool over each whole feature map, ignoring "
                                                 "kernel, stride and pad.")
    cudnn_off: bool = Field(False, description="Turn off cudnn pooling (ignored).")
    pooling_convention: Literal["full", "valid", "same"] = Field(
        "valid", description="Output size rule: valid rounds down, full rounds up.")
    stride: tuple[int, ...] = Field((), description="Stride; empty means 1.")
    pad: tuple[int, ...] = Field((), description="Pad on both sides; empty means 0.")
    p_value: int | None = Field(None, description="Value of p for Lp pooling (not quantized).")
    count_include_pad: bool | None = Field(
        None, description="avg: divide by the whole window, padding included (None: True).")
    layout: Literal["NCW", "NCHW", "NCDHW", "NWC", "NHWC", "NDHWC"] | None = Field(
        None, description="Data layout: only NCHW / NCDHW, as MXNet's oneDNN quantized pooling.")


def _pool_quantizable(attrs):
    """MXNet's Pooling FQuantizedOp: only max and avg pooling have a quantized form."""
    return attrs.get("pool_type", "max") in ("max", "avg")


def _pool_geometry(p, shape):
    """(kernel, stride, pad, output spatial size) for data of ``shape``."""
    nd = len(shape) - 2
    if p.global_pool:
        return tuple(shape[2:]), (1,) * nd, (0,) * nd, (1,) * nd
    fill = lambda v, d: tuple(v[:nd]) if v else (d,) * nd     # noqa: E731
    kernel, stride, pad = tuple(p.kernel), fill(p.stride, 1), fill(p.pad, 0)
    full = p.pooling_convention == "full"
    out = []
    for x, k, s, q in zip(shape[2:], kernel, stride, pad):
        if k > x + 2 * q:
            raise ShapeError(f"Operator {_POOL!r}: kernel size ({k}) exceeds input ({x} "
                             f"padded to {x + 2 * q})")
        out.append(1 + (math.ceil((x + 2 * q - k) / s) if full else (x + 2 * q - k) // s))
    return kernel, stride, pad, tuple(out)


def _check_pool(p, d):
    if p.pool_type not in ("max", "avg"):
        raise ShapeError(f"Operator {_POOL!r}: pool_type must be max or avg, got "
                         f"{p.pool_type!r}")
    if p.layout not in (None, "NCHW", "NCDHW") or len(d) not in (4, 5):
        raise ShapeError(f"Operator {_POOL!r}: needs 4-d NCHW or 5-d NCDHW data (as MXNet's "
                         f"oneDNN build), got shape {tuple(d)} layout {p.layout!r}")
    if not p.global_pool and len(p.kernel) != len(d) - 2:
        raise ShapeError(f"Operator {_POOL!r}: kernel {p.kernel} does not fit data of shape "
                         f"{tuple(d)}")


def _pool_shape(p, ins, outs):
    ins = range_shapes(_POOL, ins, 1)
    d = ins[0]
    if d is None:
        return ins, list(outs)
    _check_pool(p, d)
    out = tuple(d[:2]) + _pool_geometry(p, d)[3]
    return ins, check_outs(_POOL, outs, [out, ONE, ONE])


def _pool_type(p, ins, outs):
    check_quantized(_POOL, ins[0])
    return range_types(_POOL, ins, outs, 1, ins[0])


def _padded(x, pad, extra, fill):
    """``x`` padded by ``pad`` before and ``pad + extra`` after each spatial axis."""
    widths = [(0, 0), (0, 0)] + [(q, q + e) for q, e in zip(pad, extra)]
    return np.pad(x, widths, constant_values=fill)


def _over_taps(win, nd, ufunc):
    """``ufunc`` reduced over the last ``nd`` (kernel) axes of a window view, one
    elementwise step per kernel tap: several times faster than numpy's reduce over strided
    axes. Sums are of integers (float64), so their order does not change them."""
    taps = np.ndindex(*win.shape[-nd:])
    res = np.array(win[(Ellipsis,) + next(taps)])
    for tap in taps:
        ufunc(res, win[(Ellipsis,) + tap], out=res)
    return res


def _pooling(ctx, inputs, req, outputs, params):
    """max: the window's largest value; avg: the window's sum over its size (padding
    included unless count_include_pad is False), rounded half to even as oneDNN does."""
    x = inputs[0]
    kernel, stride, pad, out = _pool_geometry(params, x.shape)
    nd = len(kernel)
    # full convention: oneDNN extends the right padding so the last window fits
    extra = [max(0, (o - 1) * s + k - (n + 2 * q)) for o, s, k, n, q in
             zip(out, stride, kernel, x.shape[2:], pad)]
    if params.pool_type == "max":
        low = np.iinfo(x.dtype).min
        res = _over_taps(windows(_padded(x, pad, extra, low), kernel, stride, (1,) * nd),
                         nd, np.maximum)
    else:
        total = _over_taps(windows(_padded(x.astype(np.float64), pad, extra, 0), kernel,
                                   stride, (1,) * nd), nd, np.add)
        res = np.rint(total / _avg_count(params, x.shape, kernel, stride, pad, extra))
    assign(outputs[0], req[0], res.astype(x.dtype))
    pass_range(inputs, req, outputs, 1)


def _avg_count(params, shape, kernel, stride, pad, extra):
    """The divisor of each window: the kernel's size, or with count_include_pad False the
    number of real elements in it (counted by pooling a block of ones)."""
    if params.count_include_pad is not False:
        return float(math.prod(kernel))
    ones = _padded(np.ones((1, 1) + tuple(shape[2:])), pad, extra, 0)
    return windows(ones, kernel, stride, (1,) * len(kernel)).sum(
        axis=tuple(range(2 + len(kernel), 2 + 2 * len(kernel))))


quantized_op(
    register_op(_POOL)
    .describe("Pooling (max or avg, 2-d NCHW or 3-d NCDHW, valid or full convention, "
              "global_pool) of int8/uint8 data, output in the data's dtype, its (min, max) "
              "range passed on. Returns (output, min_output, max_output). Inference only.")
    .set_attr_parser(QuantizedPoolingParam).set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "min_data", "max_data"])
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FInferShape", _pool_shape)
    .set_attr("FInferType", _pool_type)
    .set_attr("FCompute<cpu>", host_kernel(_pooling))
    .set_attr("TExamples", [
        {"inputs": [(1, 2, 5, 5), np.array([-1.0], np.float32), np.array([1.0], np.float32)],
         "params": {"kernel": (3, 3), "stride": (2, 2), "pool_type": "avg",
                    "pooling_convention": "full"},
         "dtype": ["int8", "float32", "float32"], "domain": [(-128, 128), (0, 1), (0, 1)],
         "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input data (int8 or uint8).")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data."),
    "Pooling", FQuantizable=_pool_quantizable)


# -- _contrib_quantized_act ----------------------------------------------------------------
class QuantizedActParam(Param):
    """Activation's parameters (MXNet reuses ActivationParam); only relu is quantized."""
    act_type: Literal["relu", "sigmoid", "tanh", "softrelu", "softsign"] = Field(
        description="Activation function to be applied (only relu).")


def _act_type(p, ins, outs):
    if p.act_type != "relu":
        raise TypeInferError(f"Operator {_ACT!r}: act_type must be relu, got {p.act_type!r}")
    check_quantized(_ACT, ins[0])
    return range_types(_ACT, ins, outs, 1, np.int8)


def _act_shape(p, ins, outs):
    ins = range_shapes(_ACT, ins, 1)
    if ins[0] is None:
        return ins, list(outs)
    return ins, check_outs(_ACT, outs, [tuple(ins[0]), ONE, ONE])


def _act(ctx, inputs, req, outputs, params):
    """relu in the data's dtype; the output is int8 as MXNet declares it, so relu of uint8
    data above 127 reads as negative int8 (its bytes, as MXNet's oneDNN kernel leaves them)."""
    x = inputs[0]
    assign(outputs[0], req[0], np.maximum(x, np.zeros((), x.dtype)).view(np.int8))
    pass_range(inputs, req, outputs, 1)


quantized_op(
    register_op(_ACT)
    .describe("relu of int8/uint8 data, output int8 (uint8 data: its bytes, as in MXNet), "
              "the (min, max) range passed on. Returns (output, min_output, max_output). "
              "Inference only.")
    .set_attr_parser(QuantizedActParam).set_num_inputs(3).set_num_outputs(3)
    .set_attr("FListInputNames", lambda p: ["data", "min_data", "max_data"])
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("FInferShape", _act_shape)
    .set_attr("FInferType", _act_type)
    .set_attr("FCompute<cpu>", host_kernel(_act))
    .set_attr("TExamples", [
        {"inputs": [(3, 4), np.array([-1.0], np.float32), np.array([1.0], np.float32)],
         "params": {"act_type": "relu"},
         "dtype": ["int8", "float32", "float32"], "domain": [(-128, 128), (0, 1), (0, 1)],
         "ref": lambda x, lo, hi, **p: [np.maximum(x, 0), lo, hi], "grad": False}])
    .add_argument("data", "NDArray-or-Symbol", "Input data (int8 or uint8).")
    .add_argument("min_data", "NDArray-or-Symbol", "Minimum value of data.")
    .add_argument("max_data", "NDArray-or-Symbol", "Maximum value of data."),
    "Activation", FQuantizable=lambda attrs: attrs.get("act_type") == "relu")
