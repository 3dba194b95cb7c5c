"""_contrib_BatchNormWithReLU (MXNet 1.9's ``contrib/batch_norm_relu.cc``): BatchNorm with
a ReLU fused on its output, on BatchNorm's kernels.

Same parameters, inputs, auxiliary states and hidden outputs (mean, inverse standard
deviation) as BatchNorm, plus a fourth hidden output, ``workspace``, of the data's shape:
where MXNet's oneDNN kernel keeps its ReLU mask, this keeps 1 where the output is positive
and 0 elsewhere, and the backward op passes the output gradient only there before
BatchNorm's backward (which, in a training step, updates the moving statistics). MXNet runs
it only through oneDNN, on 4-d data with axis 1; here any rank and axis work, as BatchNorm.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from opsdk import AMP_FLOAT_DTYPES, FloatOnly, OpReqType, assign, register_op

from . import batch_norm as bn
from ._layer_rules import (backward_node, grad_entries, init_attrs, out_entry, put, set_shape,
                           set_type)

_OP = "_contrib_BatchNormWithReLU"
_BN_INPUTS = [0, 1, 2, 3, 4, 6, 7]    # the fused backward's inputs that BatchNorm's takes
_OVERWRITE = (OpReqType.WRITE_TO, OpReqType.WRITE_INPLACE)


class BatchNormWithReLUParam(bn.BatchNormParam):
    op_name: ClassVar[str] = _OP
    backward_op_name: ClassVar[str] = "_backward_contrib_BatchNormWithReLU"


def _shape(p, ins, outs):
    outs = list(outs) + [None] * (4 - len(outs))
    ins, head = bn._shape(p, ins, outs[:3])
    outs[:3] = head
    if ins[0] is not None:
        set_shape(_OP, outs, 3, tuple(ins[0]), "output 'workspace'")
    return ins, outs


def _type(p, ins, outs):
    outs = list(outs) + [None] * (4 - len(outs))
    ins, head = bn._type(p, ins, outs[:3])
    outs[:3] = head
    if ins[0] is not None:
        set_type(_OP, outs, 3, bn.param_dtype(ins[0]), "output 'workspace'")
    return ins, outs


def _forward(ctx, inputs, req, outputs, p):
    out = outputs[0] if req[0] in _OVERWRITE else np.empty(outputs[0].shape, outputs[0].dtype)
    bn._forward(ctx, inputs, [OpReqType.WRITE_TO, req[1], req[2]],
                [out, outputs[1], outputs[2]], p)
    np.maximum(out, 0, out=out)
    put(outputs[3], req[3], out > 0)
    if req[0] not in _OVERWRITE:
        assign(outputs[0], req[0], out)


def _backward(ctx, inputs, req, outputs, p):
    og, workspace = inputs[0], inputs[8]
    bn_inputs = [inputs[i] for i in _BN_INPUTS]
    bn_inputs[0] = og * (workspace > 0)
    bn._backward(ctx, bn_inputs, req, outputs, p)


def _grad(node, og):
    i = node.inputs
    n = backward_node(node.params.backward_op_name, node,
                      [og[0], out_entry(node, 1), out_entry(node, 2), *i,
                       out_entry(node, 3)])
    return grad_entries(n, 3) + [None, None]      # the auxiliary states get no gradient


def _on_bn_inputs(rule, p, ins, outs):
    """BatchNorm's backward ``rule`` on the inputs this backward shares with it, written
    back: (inputs, BatchNorm's view of them, outputs)."""
    ins = list(ins)
    picked, outs = rule(p, [ins[i] for i in _BN_INPUTS], outs)
    for k, i in enumerate(_BN_INPUTS):
        ins[i] = picked[k]
    return ins, picked, outs


def _backward_shape(p, ins, outs):
    ins, picked, outs = _on_bn_inputs(bn._backward_shape, p, ins, outs)
    if picked[3] is not None:
        set_shape(p.backward_op_name, ins, 5, picked[1], "input 5 (beta)")
        set_shape(p.backward_op_name, ins, 8, picked[3], "input 8 (workspace)")
    return ins, outs


def _backward_type(p, ins, outs):
    ins, picked, outs = _on_bn_inputs(bn._backward_type, p, ins, outs)
    if picked[1] is not None:
        for i, name in ((5, "beta"), (8, "workspace")):
            set_type(p.backward_op_name, ins, i, picked[1], f"input {i} ({name})")
    return ins, outs


# inputs whose normalised values stay clear of ReLU's kink, so finite differences hold
_X = np.array([[-2.0, 1.5, -0.4], [-1.0, 0.3, 0.9], [1.0, -1.2, 1.6], [2.0, -0.6, -2.1]],
              np.float32)
_ONES, _ZEROS = np.ones(3, np.float32), np.zeros(3, np.float32)
_EXAMPLES = [
    {"inputs": [_X, np.array([0.5, 1.0, 2.0], np.float32), np.array([0.1, -0.1, 0.2], np.float32),
                _ZEROS, _ONES],
     "params": {"fix_gamma": False}, "grad": [0, 1, 2]},
    {"inputs": [_X, _ONES, _ZEROS, _ZEROS, _ONES], "grad": [0, 2]},
    {"inputs": [_X, _ONES, np.array([0.05, -0.05, 0.0], np.float32), np.full(3, 0.05, np.float32),
                np.full(3, 1.5, np.float32)],
     "params": {"use_global_stats": True, "fix_gamma": False}, "grad": [0, 1, 2]},
    {"inputs": [(4, 3, 2), (3,), (3,), (3,), _ONES], "params": {"output_mean_var": True},
     "grad": False},
]

(register_op(_OP)
    .describe("BatchNorm followed by ReLU in one op: the BatchNorm output (same parameters, "
              "auxiliary states and hidden outputs mean and inverse standard deviation) with "
              "its negative values set to 0. A fourth hidden output, workspace, marks the "
              "positive outputs for the backward pass.")
    .set_attr_parser(BatchNormWithReLUParam)
    .set_num_inputs(5).set_num_outputs(4)
    .set_attr("FNumVisibleOutputs", lambda p: 3 if p.output_mean_var else 1)
    .set_attr("FListInputNames", lambda p: list(bn._INPUTS))
    .set_attr("FListOutputNames", lambda p: ["output", "mean", "var", "workspace"])
    .set_attr("FMutateInputs", lambda p: [3, 4])
    .set_attr("FSetInputVarAttrOnCompose", init_attrs({3: '["zero", {}]', 4: '["one", {}]'}))
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(_type, accepted=AMP_FLOAT_DTYPES))
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", _EXAMPLES)
    .add_argument("data", "NDArray-or-Symbol", "Array to normalize.")
    .add_argument("gamma", "NDArray-or-Symbol", "Per-channel scale.")
    .add_argument("beta", "NDArray-or-Symbol", "Per-channel shift.")
    .add_argument("moving_mean", "NDArray-or-Symbol", "Moving average of the batch means.")
    .add_argument("moving_var", "NDArray-or-Symbol", "Moving average of the batch variances."))

(register_op(BatchNormWithReLUParam.backward_op_name)
    .describe(f"Gradient of {_OP} wrt data, gamma and beta from the output gradient, the "
              "saved mean and inverse standard deviation, the inputs and the workspace; in "
              "training it also updates moving_mean and moving_var (inputs 6 and 7).")
    .set_attr_parser(BatchNormWithReLUParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(9).set_num_outputs(3)
    .set_attr("FMutateInputs", lambda p: [6, 7])
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", _backward_type)
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(4, 3, 2), np.zeros(3, np.float32), _ONES, (4, 3, 2), (3,), (3,), (3,),
                    _ONES, np.ones((4, 3, 2), np.float32)],
         "params": {"fix_gamma": False}}]))
