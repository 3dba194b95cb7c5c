"""Cumulative ops: ``cumsum`` (MXNet 1.9's ``mx.nd.cumsum``; ``axis=None`` scans the
flattened input)."""

from __future__ import annotations

from math import prod
from typing import Optional

from opsdk import DType, Field, Param, register_op

from ._common import put
from ._layout import backward_shape, data_grad, merge, norm_axis, same_type


class CumsumParam(Param):
    axis: Optional[int] = Field(None, description="Axis to scan; None: the flattened input")
    dtype: Optional[DType] = Field(None, description="Output dtype; None: the input's")


def _axis(p, ndim):
    return None if p.axis is None else norm_axis("cumsum", p.axis, ndim)


def _shape(p, ins, outs):
    x = ins[0]
    if x is None:
        return list(ins), list(outs)
    x = tuple(x)
    return [x], merge("cumsum", outs, [x if _axis(p, len(x)) is not None else (prod(x),)])


def _type(p, ins, outs):
    if p.dtype is not None:
        return list(ins), [p.dtype]
    return same_type("cumsum")(p, ins, outs)


def _cumsum(ctx, inputs, req, outputs, params):
    x = inputs[0]
    axis = _axis(params, x.ndim)
    src = x.reshape(-1) if axis is None else x
    put(outputs[0], req[0], src.cumsum(axis=0 if axis is None else axis, dtype=outputs[0].dtype))


def _cumsum_backward(ctx, inputs, req, outputs, params):
    """Each input element adds to every later output: the gradient is the reversed scan
    of the output gradient."""
    og, x = inputs
    axis = _axis(params, x.ndim)
    axis = 0 if axis is None else axis
    flipped = ctx.xp.flip(og, axis)
    put(outputs[0], req[0], ctx.xp.flip(flipped.cumsum(axis=axis), axis).reshape(x.shape))


(register_op("cumsum").add_alias("_np_cumsum")
    .describe("Running totals along axis (over the flattened input when axis is None).")
    .set_attr_parser(CumsumParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", _type)
    .set_attr("FCompute<cpu>", _cumsum)
    .set_attr("FGradient", data_grad("_backward_cumsum"))
    .set_attr("TExamples", [{"inputs": [(3, 4)]}, {"inputs": [(3, 4)], "params": {"axis": 1}},
                            {"inputs": [(2, 3, 4)], "params": {"axis": -1}},
                            {"inputs": [(2, 3)], "params": {"axis": 0, "dtype": "float64"},
                             "grad": False}])
    .add_argument("a", "NDArray-or-Symbol", "The input"))

(register_op("_backward_cumsum")
    .describe("Gradient of cumsum.")
    .set_attr_parser(CumsumParam).set_num_inputs(2).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_cumsum"))
    .set_attr("FInferType", lambda p, ins, outs: (list(ins), [ins[1]]) if ins[1] is not None
              else (list(ins), list(outs)))
    .set_attr("FCompute<cpu>", _cumsum_backward)
    .set_attr("TExamples", [{"inputs": [(12,), (3, 4)]},
                            {"inputs": [(3, 4), (3, 4)], "params": {"axis": 1}}]))
