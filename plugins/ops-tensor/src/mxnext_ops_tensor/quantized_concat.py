"""MXNet 1.9's _contrib_quantized_concat (``quantization/quantized_concat.cc`` and its oneDNN
kernel): int8/uint8 arrays joined along ``dim`` on one common range, each input rescaled to
it unless its scale already matches."""

from __future__ import annotations

import numpy as np
from opsdk import ShapeError, assign, register_op

from ._quantized import (F32, INT8_RANGE, RANGE_OUTPUTS, UINT8_RANGE, check_quantized,
                         host_kernel, max_abs, quantized_op, range_shapes, range_types, scalar,
                         write_range)
from .join import ConcatParam, _concat_infer

_OP = "_contrib_quantized_concat"


def _names(p):
    data = [f"arg{i}" for i in range(p.num_args)]
    return data + [f"{a}_{m}" for a in data for m in ("min", "max")]


def _shape(p, ins, outs):
    n = p.num_args
    ins = range_shapes(_OP, ins, n)
    try:
        data, main = _concat_infer(p, ins[:n], outs[:1])
    except ShapeError as exc:
        raise ShapeError(f"Operator {_OP!r}: {exc}") from exc
    return list(data) + ins[n:], list(main) + [(1,), (1,)]


def _type(p, ins, outs):
    """int8 output when any input is int8, else uint8."""
    n = p.num_args
    for i in range(n):
        check_quantized(_OP, ins[i], f"input {i}")
    known = [np.dtype(t) for t in ins[:n] if t is not None]
    out = np.int8 if np.dtype(np.int8) in known else (np.uint8 if len(known) == n else None)
    return range_types(_OP, ins, outs, n, out)


def _steps(dtype):
    return INT8_RANGE if dtype == np.int8 else UINT8_RANGE


def _concat(ctx, inputs, req, outputs, params):
    """Output range (min(0, mins), max(0, maxes)); an input whose scale differs from the
    output's is reordered with out_scale / in_scale (rounded half to even, saturated)."""
    n, out = params.num_args, outputs[0]
    lows = [scalar(inputs[n + 2 * i]) for i in range(n)]
    highs = [scalar(inputs[n + 2 * i + 1]) for i in range(n)]
    lo, hi = min([F32(0)] + lows), max([F32(0)] + highs)
    out_scale = _steps(out.dtype) / max_abs(lo, hi)
    info = np.iinfo(out.dtype)
    parts = []
    for x, a, b in zip(inputs[:n], lows, highs):
        in_scale = _steps(x.dtype) / max_abs(a, b)
        if in_scale == out_scale:
            parts.append(x.astype(out.dtype))
        else:
            y = np.rint(x.astype(F32) * (out_scale / in_scale))
            parts.append(np.clip(y, info.min, info.max).astype(out.dtype))
    assign(out, req[0], np.concatenate(parts, axis=params.dim))
    write_range(outputs, req, lo, hi)


quantized_op(
    register_op(_OP)
    .describe("Concat of int8/uint8 arrays, each with its (min, max) range, along dim: the "
              "output (int8 if any input is int8, else uint8) covers (min(0, mins), max(0, "
              "maxes)) and each input is rescaled to it. Returns (output, min_output, "
              "max_output). Inference only.")
    .set_attr_parser(ConcatParam)
    .set_num_inputs(lambda p: 3 * p.num_args).set_num_outputs(3)
    .set_attr("FListInputNames", _names)
    .set_attr("FListOutputNames", lambda p: RANGE_OUTPUTS)
    .set_attr("key_var_num_args", "num_args")
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", host_kernel(_concat))
    .set_attr("TExamples", [
        {"inputs": [(2, 3), (2, 2)] + [np.array([v], F32) for v in (-1.0, 1.0, -0.5, 2.0)],
         "params": {"num_args": 2, "dim": 1},
         "dtype": ["int8", "int8"] + ["float32"] * 4,
         "domain": [(-128, 128), (-128, 128)] + [(0, 1)] * 4, "grad": False}])
    .add_argument("data", "NDArray-or-Symbol[]", "List of arrays to concatenate"),
    "Concat", FQuantizable=lambda attrs: int(attrs.get("dim", 1)) > 0)
