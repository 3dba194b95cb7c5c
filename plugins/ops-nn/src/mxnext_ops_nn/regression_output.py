"""LinearRegressionOutput, LogisticRegressionOutput and MAERegressionOutput.

Forward: identity (sigmoid for the logistic one). Backward, as MXNet's loss
layers do, ignores the head gradient: ``d(out, label) * grad_scale / m`` with
``m`` the number of outputs per example (``label.size / label.shape[0]``) and
``d`` = ``out - label`` (``sign(out - label)`` for MAE, with 0 mapped to -1);
the label gets a zero gradient.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op
from opsdk.shape import merge_shape, shape_known

from ._infer import backward_node, fail, grads_of, out_shapes, output_entry, uniform_type


class RegressionOutputParam(Param):
    grad_scale: float = Field(1.0, description="Multiplier of the data gradient.")


def _put(out, req, value):
    if req == 3:
        out += value.astype(out.dtype)
    elif req:
        out[...] = value


def _shape(op):
    def infer(p, ins, outs):
        ins = list(ins)
        given = ins[0] is not None
        if ins[0] is None and outs[0] is not None:
            ins[0] = tuple(outs[0])
        data, label = ins
        if not shape_known(data):        # MXNet waits for the whole data shape
            return ins, list(outs)
        if label is None:
            if given:   # a (n, 1) output takes a (n,) label by default
                ins[1] = (data[0],) if len(data) == 2 and data[1] == 1 else tuple(data)
        elif not shape_known(label):
            if len(label) == len(data):
                ins[1] = merge_shape(op, label, data, "input 'label'")
        elif (not label or not data or label[0] != data[0]
              or np.prod(label, dtype=np.int64) != np.prod(data, dtype=np.int64)):
            fail(op, f"input 'label' has shape {tuple(label)}, which does not fit data "
                     f"{tuple(data)} (same first axis and size needed)")
        return ins, out_shapes(op, outs, [data])
    return infer


def _backward_shape(op):
    def infer(p, ins, outs):
        ins, outs = list(ins), list(outs)
        for i, k in ((1, 0), (0, 1)):
            if ins[i] is None and outs[k] is not None:
                ins[i] = tuple(outs[k])
        if None in ins:
            return ins, outs
        return ins, out_shapes(op, outs, [ins[1], ins[0]])
    return infer


def _register(name, bwd, forward, diff, doc, ref):
    def compute(ctx, inputs, req, outputs, params):
        _put(outputs[0], req[0], forward(ctx.xp, inputs[0]))

    def backward(ctx, inputs, req, outputs, params):
        label, out = inputs
        if req[0]:
            per_example = label.size // label.shape[0] if label.ndim else 1
            g = diff(ctx.xp, out, label.reshape(out.shape)) * (params.grad_scale / per_example)
            _put(outputs[0], req[0], g)
        if req[1]:
            _put(outputs[1], req[1], ctx.xp.zeros(label.shape, outputs[1].dtype))

    def gradient(node, og):
        n = backward_node(bwd, node, [node.inputs[1], output_entry(node, 0)])
        return grads_of(n, 2)

    names = ["data", "label"]
    (register_op(name).describe(doc).set_attr_parser(RegressionOutputParam)
        .set_num_inputs(2).set_num_outputs(1)
        .set_attr("FListInputNames", lambda p: names)
        .set_attr("FInferShape", _shape(name))
        .set_attr("FInferType", FloatOnly(uniform_type(name, names)))
        .set_attr("FInplaceOption", lambda p: [(0, 0)])
        .set_attr("FCompute<cpu>", compute)
        .set_attr("FGradient", gradient)
        .set_attr("TExamples", [
            {"inputs": [(3, 4), (3, 4)], "grad": False, "ref": ref},
            {"inputs": [(3, 1), (3,)], "grad": False, "params": {"grad_scale": 2.0}, "ref": ref},
            {"inputs": [(2, 3, 2), (2, 6)], "grad": False, "ref": ref}])
        .add_argument("data", "NDArray-or-Symbol", "Predictions.")
        .add_argument("label", "NDArray-or-Symbol", "Targets, one per prediction."))
    (register_op(bwd).describe(f"Loss gradient of {name} from its label and output.")
        .set_attr_parser(RegressionOutputParam).set_attr("TIsBackward", True)
        .set_num_inputs(2).set_num_outputs(2)
        .set_attr("FListInputNames", lambda p: ["label", "output"])
        .set_attr("FInferShape", _backward_shape(bwd))
        .set_attr("FInferType", uniform_type(bwd, ["label", "output"]))
        .set_attr("FInplaceOption", lambda p: [(1, 0)])
        .set_attr("FCompute<cpu>", backward)
        .set_attr("TExamples", [{"inputs": [(3, 4), (3, 4)], "params": {"grad_scale": 0.5}},
                                {"inputs": [(3,), (3, 1)]}]))


def _sigmoid(xp, x):
    return 1 / (1 + xp.exp(-x))


_M = ("The data gradient is multiplied by ``grad_scale / m`` with ``m = label.size / "
      "label.shape[0]``, and ignores any head gradient.")
_register("LinearRegressionOutput", "_backward_linear_reg_out", lambda xp, x: x.copy(),
          lambda xp, out, label: out - label,
          "Identity forward; backward gives ``out - label``, the squared-error gradient. " + _M,
          lambda x, label, **k: x)
_register("MAERegressionOutput", "_backward_mae_reg_out", lambda xp, x: x.copy(),
          lambda xp, out, label: xp.where(out - label > 0, 1, -1).astype(out.dtype),
          "Identity forward; backward gives ``sign(out - label)``, the absolute-error gradient. "
          + _M, lambda x, label, **k: x)
_register("LogisticRegressionOutput", "_backward_logistic_reg_out", _sigmoid,
          lambda xp, out, label: out - label,
          "Sigmoid forward; backward gives ``sigmoid(data) - label``, the gradient of binary "
          "cross-entropy. " + _M,
          lambda x, label, **k: (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype))
