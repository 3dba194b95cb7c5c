"""Shared pieces of the quantized compute ops: the (min, max) range arithmetic of MXNet's
``quantization_utils.h``, dtype and shape rules, and the graph-pass protocol attributes."""

from __future__ import annotations

import numpy as np
import functools

from opsdk import MakeZeroGradNodes, OpReqType, TypeInferError, assign
from opsdk.shape import merge_shape

F32 = np.float32
ONE = (1,)                                  # the shape of every min/max range
INT8_RANGE, UINT8_RANGE = F32(127.5), F32(255.5)
INT32_RANGE = F32(2 ** 31)                  # MinAbs(INT32_MIN, INT32_MAX) as a float
QUANTIZED = (np.dtype(np.int8), np.dtype(np.uint8))
RANGE_OUTPUTS = ["output", "min_output", "max_output"]


def scalar(x) -> np.float32:
    """A host float32 from a one-element array (a min or a max)."""
    return F32(float(x.reshape(-1)[0]))


def max_abs(lo, hi) -> np.float32:
    """The larger magnitude of two numbers or 0-d arrays of any device, as a host float32."""
    return max(abs(F32(float(lo))), abs(F32(float(hi))))


def product_range(data_lo, data_hi, w_lo, w_hi, unsigned=False):
    """MXNet's QuantizationRangeForMultiplication into int32: the float one int32 step
    stands for is (|data| / 127) * (|weight| / 127) (unsigned data: MXNet's S8U8 form divides
    the data's magnitude by 127 and the weight's by 255), times 2^31; returns (-m, m)."""
    a = max_abs(data_lo, data_hi) / F32(127)
    b = max_abs(w_lo, w_hi) / (F32(255) if unsigned else F32(127))
    top = a * b * INT32_RANGE
    return -top, top


def host_kernel(kernel):
    """``kernel`` (numpy arithmetic: exact chunks, strided windows) for any device: a
    device's inputs are copied to the host, the kernel fills host outputs, and those are
    copied back (as the other host-side kernels do). On the cpu it runs as it is."""
    @functools.wraps(kernel)
    def compute(ctx, inputs, req, outputs, params):
        xp = ctx.xp
        if xp is np:
            kernel(ctx, inputs, req, outputs, params)
            return
        host = [xp.asnumpy(o) if r == OpReqType.ADD_TO else np.empty(o.shape, o.dtype)
                for o, r in zip(outputs, req)]
        kernel(ctx, [xp.asnumpy(x) for x in inputs], req, host, params)
        for out, value, r in zip(outputs, host, req):
            if r:
                assign(out, OpReqType.WRITE_TO, xp.asarray(value))
    return compute


def write_range(outputs, req, lo, hi, xp=np):
    """Outputs 1 and 2: the (1,) float32 arrays ``lo`` and ``hi`` (``xp``: the outputs'
    array namespace)."""
    assign(outputs[1], req[1], xp.full(ONE, lo, F32))
    assign(outputs[2], req[2], xp.full(ONE, hi, F32))


def pass_range(inputs, req, outputs, first):
    """Outputs 1 and 2 are the range inputs ``first`` and ``first + 1``, passed on."""
    assign(outputs[1], req[1], inputs[first])
    assign(outputs[2], req[2], inputs[first + 1])


def set_type(op, types, i, want, what):
    """MXNet's TYPE_ASSIGN_CHECK of entry ``i``."""
    if types[i] is not None and np.dtype(types[i]) != np.dtype(want):
        raise TypeInferError(f"Operator {op!r}: {what} has dtype {np.dtype(types[i])}, "
                             f"expected {np.dtype(want)}")
    types[i] = np.dtype(want)


def check_quantized(op, t, what="data"):
    """int8 or uint8 (None: not known yet)."""
    if t is not None and np.dtype(t) not in QUANTIZED:
        raise TypeInferError(f"Operator {op!r}: {what} has dtype {np.dtype(t)}, expected "
                             f"int8 or uint8")


def range_types(op, ins, outs, first, out_dtype):
    """Inputs from ``first`` on are float32 ranges; outputs: ``out_dtype`` (None: left as
    is), then two float32."""
    ins, outs = list(ins), list(outs)
    for i in range(first, len(ins)):
        set_type(op, ins, i, F32, f"input {i} (a range)")
    if out_dtype is not None:
        set_type(op, outs, 0, out_dtype, "output 0")
    for i in (1, 2):
        set_type(op, outs, i, F32, f"output {i}")
    return ins, outs


def range_shapes(op, ins, first):
    """Every input from ``first`` on is a (1,) range."""
    ins = list(ins)
    for i in range(first, len(ins)):
        ins[i] = merge_shape(op, ins[i], ONE, f"input {i} (a range)")
    return ins


def quantized_op(builder, quantizes, need_requantize=False, **protocol):
    """The attributes every quantized op carries: zero gradient, output names and the graph
    pass's protocol (``FQuantizes``, ``FNeedRequantize`` and any of ``FQuantizable``,
    ``FAvoidQuantizeInput``, ``FNeedCalibrateInput``, ``FNeedCalibrateOutput``)."""
    builder = (builder.set_attr("FGradient", MakeZeroGradNodes)
               .set_attr("FQuantizes", quantizes)
               .set_attr("FNeedRequantize", need_requantize))
    for key, value in protocol.items():
        builder = builder.set_attr(key, value)
    return builder


def quantize_scale(dtype, lo, hi) -> np.float32:
    """MXNet's GetQuantizeScale: steps per unit of a (lo, hi) range held as ``dtype`` (int8:
    127.5, uint8: 255.5 steps over the larger magnitude); a zero range gives INT32_MAX."""
    r = max_abs(lo, hi)
    steps = INT8_RANGE if np.dtype(dtype) == np.int8 else UINT8_RANGE
    return steps / r if r else INT32_RANGE


def saturate(y, dtype):
    """``y`` rounded half to even and clipped to ``dtype`` (oneDNN's float-to-int store)."""
    info = np.iinfo(dtype)
    return np.clip(np.rint(y), info.min, info.max).astype(dtype)
