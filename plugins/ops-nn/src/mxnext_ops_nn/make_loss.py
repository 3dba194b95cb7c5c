"""MakeLoss and make_loss: mark their input as a loss. Forward is the identity; the gradient is
a constant whatever the head gradient: MakeLoss's ``grad_scale`` (divided by the batch size or
the count of elements above ``valid_thresh``), make_loss's ones."""

from __future__ import annotations

from typing import Literal

from opsdk import (ElemwiseShape, ElemwiseType, Field, FloatOnly, NodeEntry, Param, make_node,
                   register_op)

from ._infer import backward_node, grads_of, output_entry


class MakeLossParam(Param):
    grad_scale: float = Field(1.0, description="The gradient value sent back, before "
                                               "normalization.")
    valid_thresh: float = Field(
        0.0, description="With normalization='valid', only elements above this value count "
                         "as valid.")
    normalization: Literal["null", "batch", "valid"] = Field(
        "null", description="Divisor of the gradient: none ('null'), the batch size "
                            "('batch': all axes but the last) or the count of valid elements "
                            "('valid').")


def _put(out, req, value):
    if req == 3:
        out += value
    elif req:
        out[...] = value


def _forward(ctx, inputs, req, outputs, params):
    if req[0] != 2:          # in place, the output already is the input
        _put(outputs[0], req[0], inputs[0])


def _backward(ctx, inputs, req, outputs, params):
    """Input 0 is the forward data (``valid``) or output (only its shape is used)."""
    x = inputs[0]
    if params.normalization == "valid":
        scale = params.grad_scale / max(int((x > params.valid_thresh).sum()), 1)
    elif params.normalization == "batch":   # MXNet's batch: all axes but the last (FlatTo2D)
        rows = x.size // x.shape[-1] if x.ndim and x.shape[-1] else 1
        scale = params.grad_scale / max(rows, 1)
    else:
        scale = params.grad_scale
    _put(outputs[0], req[0], outputs[0].dtype.type(scale))


def _gradient(node, og):
    """Reads the data with ``valid`` normalization, else only the output's shape: never
    the head gradient, so a bound MakeLoss output needs none (MXNet's backward
    dependencies)."""
    src = node.inputs[0] if node.params.normalization == "valid" else output_entry(node, 0)
    return grads_of(backward_node("_backward_MakeLoss", node, [src]), 1)


(register_op("MakeLoss")
    .describe("Identity forward that makes its input a loss: the gradient it sends back is "
              "``grad_scale`` (divided by the batch size with ``normalization='batch'``, or by "
              "the number of elements greater than ``valid_thresh`` with ``'valid'``), "
              "independent of any head gradient.")
    .set_attr_parser(MakeLossParam).set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1, "MakeLoss"))
    .set_attr("FInferType", FloatOnly(ElemwiseType(1, 1, "MakeLoss")))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _gradient)
    .set_attr("TExamples", [
        {"inputs": [(3, 4)], "grad": False, "ref": lambda x, **k: x},
        {"inputs": [(2, 3, 2)], "grad": False, "ref": lambda x, **k: x,
         "params": {"normalization": "valid", "valid_thresh": 0.3, "grad_scale": 2.0}}])
    .add_argument("data", "NDArray-or-Symbol", "Input array."))
(register_op("_backward_MakeLoss")
    .describe("MakeLoss's constant gradient, shaped like its input.")
    .set_attr_parser(MakeLossParam).set_attr("TIsBackward", True)
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", ElemwiseShape(1, 1, "_backward_MakeLoss"))
    .set_attr("FInferType", ElemwiseType(1, 1, "_backward_MakeLoss"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [{"inputs": [(3, 4)], "params": {"normalization": "batch"}},
                            {"inputs": [(3, 4)], "params": {"normalization": "valid"}}]))


(register_op("make_loss")
    .describe("Identity forward that makes its input a loss (output 'loss'): the gradient it "
              "sends back is ones, independent of any head gradient.")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FListOutputNames", lambda p: ["loss"])
    .set_attr("FInferShape", ElemwiseShape(1, 1, "make_loss"))
    .set_attr("FInferType", ElemwiseType(1, 1, "make_loss"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FInplaceIdentity", lambda p: [True])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", lambda node, og: [
        NodeEntry(make_node("ones_like", [node.inputs[0]], name=f"{node.name}_backward"), 0)])
    .set_attr("TExamples", [{"inputs": [(3, 4)], "grad": False, "ref": lambda x: x}])
    .add_argument("data", "NDArray-or-Symbol", "Input array."))
