"""SVMOutput: identity forward; backward is the gradient of a one-vs-all hinge loss (L2-SVM by
default, L1-SVM with ``use_linear``) over the last axis, ignoring the head gradient as MXNet's
loss layers do. With ``m`` the margin, ``c`` the regularization coefficient and ``y`` the
label's class, the data gradient at class ``k`` of a row ``x`` is

- L1: ``-c * [m > x_k]`` for ``k == y``, ``c * [m > -x_k]`` otherwise;
- L2: ``-2c * max(m - x_k, 0)`` for ``k == y``, ``2c * max(m + x_k, 0)`` otherwise.

The label gets a zero gradient.
"""

from __future__ import annotations

import numpy as np
from opsdk import Field, FloatOnly, Param, register_op

from ._infer import backward_node, fail, grads_of, out_shapes, output_entry, uniform_type
from ._layer_rules import put, set_shape

OP = "SVMOutput"


class SVMOutputParam(Param):
    margin: float = Field(1.0, description="Outputs inside this margin of the wrong side are "
                                           "penalised.")
    regularization_coefficient: float = Field(
        1.0, description="Multiplier of the loss gradient (the trade-off between weight size "
                         "and error).")
    use_linear: bool = Field(False, description="Use the L1-SVM objective instead of L2-SVM.")


def _shape(p, ins, outs):
    ins = list(ins)
    if ins[0] is None and outs[0] is not None:
        ins[0] = tuple(outs[0])
    data = ins[0]
    if data is None:
        return ins, list(outs)
    if not data:
        fail(OP, "input 'data' must have at least 1 dim, got a scalar")
    set_shape(OP, ins, 1, tuple(data[:-1]), "input 'label'")
    return ins, out_shapes(OP, outs, [tuple(data)])


def _forward(ctx, inputs, req, outputs, p):
    put(outputs[0], req[0], inputs[0])


def _backward(ctx, inputs, req, outputs, p):
    xp = ctx.xp
    label, out = inputs
    if req[0]:
        x = out.reshape(-1, out.shape[-1])
        target = xp.arange(x.shape[1]) == label.reshape(-1, 1).astype(np.int64)
        m, c = x.dtype.type(p.margin), x.dtype.type(p.regularization_coefficient)
        if p.use_linear:
            g = xp.where(target, -(m > x).astype(x.dtype), (m > -x).astype(x.dtype)) * c
        else:
            g = xp.where(target, -2 * xp.maximum(m - x, 0), 2 * xp.maximum(m + x, 0)) * c
        put(outputs[0], req[0], g.reshape(outputs[0].shape))
    put(outputs[1], req[1], xp.zeros(label.shape, outputs[1].dtype))


def _grad(node, og):
    return grads_of(backward_node(f"_backward_{OP}", node,
                                  [node.inputs[1], output_entry(node, 0)]), 2)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    op = f"_backward_{OP}"
    for i, k in ((1, 0), (0, 1)):
        if ins[i] is not None:
            set_shape(op, outs, k, tuple(ins[i]), f"output {k}")
        elif outs[k] is not None:
            ins[i] = tuple(outs[k])
    return ins, outs


def _ref(data, label, **kwargs):
    return data


_LABEL = np.array([0, 2, 1, 3], np.float32)

(register_op(OP)
    .describe("Support vector machine output layer: passes data through unchanged; its "
              "gradient is that of a one-vs-all hinge loss on the last axis (squared hinge by "
              "default, plain hinge with use_linear), whatever the head gradient. label holds "
              "the class of each row (data.shape[:-1]).")
    .set_attr_parser(SVMOutputParam)
    .set_num_inputs(2).set_num_outputs(1)
    .set_attr("FListInputNames", lambda p: ["data", "label"])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(uniform_type(OP, ["data", "label"])))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", [
        {"inputs": [(4, 5), _LABEL], "domain": (-2, 2), "grad": False, "ref": _ref},
        {"inputs": [(2, 2, 3), _LABEL.reshape(2, 2)], "grad": False, "ref": _ref,
         "params": {"margin": "0.5", "regularization_coefficient": "2", "use_linear": "True"}}])
    .add_argument("data", "NDArray-or-Symbol", "Scores, classes along the last axis.")
    .add_argument("label", "NDArray-or-Symbol", "Class index of each row, shape "
                  "data.shape[:-1]."))

(register_op(f"_backward_{OP}")
    .describe("Hinge-loss gradient of SVMOutput from its label and output.")
    .set_attr_parser(SVMOutputParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(2).set_num_outputs(2)
    .set_attr("FListInputNames", lambda p: ["label", "output"])
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", uniform_type(f"_backward_{OP}", ["label", "output"]))
    .set_attr("FInplaceOption", lambda p: [(1, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [_LABEL, (4, 5)], "domain": [(0, 1), (-2, 2)]},
        {"inputs": [_LABEL.reshape(2, 2), (2, 2, 3)], "domain": [(0, 1), (-2, 2)],
         "params": {"margin": 0.5, "use_linear": True}}]))
