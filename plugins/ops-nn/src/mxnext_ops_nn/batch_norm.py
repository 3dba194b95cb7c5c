"""BatchNorm, BatchNorm_v1 and _contrib_SyncBatchNorm, with the auxiliary states
moving_mean / moving_var, and their backward ops.

As MXNet 1.9's CPU operators: the forward normalises with the batch statistics when training
(``is_train`` and not ``use_global_stats``), else with the moving ones, and outputs the mean
and a second statistic as hidden outputs 1 and 2: BatchNorm the *inverse standard
deviation*, BatchNorm_v1 and SyncBatchNorm the variance. The moving statistics are updated
(``moving = moving * momentum + batch * (1 - momentum)``, biased variance) by the backward
pass of a training step, which declares them in ``FMutateInputs``. float16 data keeps
float32 parameters and statistics. BatchNorm_v1 and SyncBatchNorm normalise axis 1; one
process has one device here, so SyncBatchNorm takes ``ndev=1`` only.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from opsdk import AMP_FLOAT_DTYPES, Field, FloatOnly, MXNetError, Param, register_op
from opsdk.sparse import stype_of
from pydantic import field_validator

from ._layer_rules import (backward_node, compute_dtype, fail, grad_entries, init_attrs,
                           norm_axis, out_entry, put, result_shapes, set_shape, set_type)

_INPUTS = ["data", "gamma", "beta", "moving_mean", "moving_var"]


class BatchNormV1Param(Param):
    op_name: ClassVar[str] = "BatchNorm_v1"
    backward_op_name: ClassVar[str] = "_backward_BatchNorm_v1"
    eps: float = Field(1e-3, description="Added to the variance to keep the division finite.")
    momentum: float = Field(0.9, description="Weight kept by the old value when the moving "
                                             "statistics are updated.")
    fix_gamma: bool = Field(True, description="Treat gamma as 1 and give it no gradient.")
    use_global_stats: bool = Field(False, description="Normalize with the moving statistics "
                                                      "even when training.")
    output_mean_var: bool = Field(False, description="Also return the batch mean and "
                                                     "variance.")

    @property
    def axis(self):
        return 1


class SyncBatchNormParam(BatchNormV1Param):
    op_name: ClassVar[str] = "_contrib_SyncBatchNorm"
    backward_op_name: ClassVar[str] = "_backward__contrib_SyncBatchNorm"
    ndev: int = Field(1, description="Number of devices whose batches share the statistics.")
    key: str = Field(description="Name shared by the copies of one layer on several devices.")

    @field_validator("ndev")
    @classmethod
    def _one_device(cls, v):
        if v != 1:
            raise ValueError(f"expected 1 (mxnext runs one device per process; statistics "
                             f"are not synchronised across devices), got {v}")
        return v


class BatchNormParam(Param):
    op_name: ClassVar[str] = "BatchNorm"
    backward_op_name: ClassVar[str] = "_backward_BatchNorm"
    eps: float = Field(1e-3, description="Added to the variance to keep the division finite; "
                                         "cuDNN needs at least its CUDNN_BN_MIN_EPSILON "
                                         "(normally 1e-5).")
    momentum: float = Field(0.9, description="Weight kept by the old value when the moving "
                                             "statistics are updated.")
    fix_gamma: bool = Field(True, description="Treat gamma as 1 and give it no gradient.")
    use_global_stats: bool = Field(False, description="Normalize with the moving statistics "
                                                      "even when training, which turns the op "
                                                      "into a fixed per-channel scale and "
                                                      "shift.")
    output_mean_var: bool = Field(False, description="Also return the batch mean and inverse "
                                                     "standard deviation.")
    axis: int = Field(1, description="Index of the channel axis.")
    cudnn_off: bool = Field(False, description="Avoid the cuDNN implementation (no effect "
                                               "on cpu).")
    min_calib_range: float | None = Field(None, description="Calibrated lower bound of the "
                                                            "data, used by quantized batch norm "
                                                            "only (ignored here).")
    max_calib_range: float | None = Field(None, description="Calibrated upper bound of the "
                                                            "data, used by quantized batch norm "
                                                            "only (ignored here).")


def _var_out(p):
    """Whether hidden output 2 is the variance (BatchNorm_v1, SyncBatchNorm), not the
    inverse standard deviation (BatchNorm)."""
    return not isinstance(p, BatchNormParam)


def _shape(p, ins, outs):
    ins, x, op = list(ins), ins[0], p.op_name
    if x is None:
        return ins, list(outs)
    if not x:
        fail(op, "data must have at least 1 dim (the channel axis), got a scalar")
    c = x[norm_axis(op, p.axis, len(x))]
    for i in range(1, 5):
        set_shape(op, ins, i, (c,), f"input {_INPUTS[i]!r}")
    return ins, result_shapes(op, outs, [tuple(x), (c,), (c,)], ["output", "mean", "var"])


def param_dtype(dtype):
    """Parameters and statistics of float16 and bfloat16 data are float32 (MXNet's AccReal;
    for bfloat16 its oneDNN kernel's)."""
    return compute_dtype(dtype)


def _type(p, ins, outs):
    ins, outs = list(ins), list(outs)
    t, op = (ins[0] if ins[0] is not None else outs[0]), p.op_name
    if t is None:
        return ins, outs
    set_type(op, ins, 0, t, "input 'data'")
    set_type(op, outs, 0, t, "output 'output'")
    acc = param_dtype(t)
    for i in range(1, 5):
        set_type(op, ins, i, acc, f"input {_INPUTS[i]!r}")
    for k, name in ((1, "mean"), (2, "var")):
        set_type(op, outs, k, acc, f"output {name!r}")
    return ins, outs


def _layout(x, axis):
    """``x`` viewed as (outer, C, inner) around the channel axis, and the shape that
    broadcasts a per-channel vector against it."""
    a = axis % x.ndim
    return x.reshape(int(np.prod(x.shape[:a])), x.shape[a], -1), (1, -1, 1)


def _training(ctx, p):
    return ctx.is_train and not p.use_global_stats


def _invstd(var, eps):
    inv = 1.0 / np.sqrt(var + eps)
    return np.where((var == 0) & (eps == 0), 0, inv)       # MXNet: 0 for a constant channel


def _forward(ctx, inputs, req, outputs, p):
    x, gamma, beta, mm, mv = inputs
    acc = param_dtype(x.dtype)
    x3, bc = _layout(x, p.axis)
    if _training(ctx, p):
        n = x3.shape[0] * x3.shape[2]
        xa = x3.astype(acc, copy=False)
        mean = xa.sum(axis=(0, 2)) / n
        d = xa - mean.reshape(bc)
        var = np.einsum("ocp,ocp->c", d, d) / n
    else:
        mean, var = mm.astype(acc), mv.astype(acc)
    invstd = _invstd(var, p.eps)
    scale = invstd if p.fix_gamma else invstd * gamma
    shift = beta - mean * scale
    put(outputs[1], req[1], mean)
    put(outputs[2], req[2], var if _var_out(p) else invstd)
    if req[0]:
        out3 = outputs[0].reshape(x3.shape)
        if (req[0] == 1 or req[0] == 2) and out3.dtype == acc:
            np.multiply(x3, scale.reshape(bc), out=out3)
            out3 += shift.reshape(bc)
        else:
            put(out3, req[0], x3 * scale.reshape(bc) + shift.reshape(bc))


def _backward(ctx, inputs, req, outputs, p):
    og, mean, second, x, gamma, mm, mv = inputs
    acc = param_dtype(x.dtype)
    x3, bc = _layout(x, p.axis)
    g3 = og.reshape(x3.shape).astype(acc, copy=False)
    n = x3.shape[0] * x3.shape[2]
    training = _training(ctx, p)
    if training:
        if _var_out(p):
            var, invstd = second, _invstd(second, p.eps)
        else:
            var, invstd = 1.0 / (second * second) - p.eps, second
        mm *= p.momentum
        mm += mean * (1 - p.momentum)
        mv *= p.momentum
        mv += var * (1 - p.momentum)
    else:
        mean, invstd = mm.astype(acc), _invstd(mv.astype(acc), p.eps)
    w = np.ones_like(invstd) if p.fix_gamma else gamma.astype(acc, copy=False)
    d = x3.astype(acc, copy=False) - mean.reshape(bc)
    sum_g = g3.sum(axis=(0, 2))
    dotp = np.einsum("ocp,ocp->c", d, g3)
    if req[0]:
        iw = (invstd * w).reshape(bc)
        if training:
            k = (dotp * invstd * invstd / n).reshape(bc)
            gx = (g3 - (sum_g / n).reshape(bc) - d * k) * iw
        else:
            gx = g3 * iw
        put(outputs[0].reshape(x3.shape), req[0], gx)
    put(outputs[1], req[1], np.zeros_like(dotp) if p.fix_gamma else dotp * invstd)
    put(outputs[2], req[2], sum_g)


def _grad(node, og):
    i = node.inputs
    n = backward_node(node.params.backward_op_name, node,
                      [og[0], out_entry(node, 1), out_entry(node, 2), i[0], i[1], i[3], i[4]])
    return grad_entries(n, 3) + [None, None]      # the auxiliary states get no gradient


def _backward_shape(p, ins, outs):
    ins, outs, op = list(ins), list(outs), p.backward_op_name
    x = ins[3] if ins[3] is not None else (ins[0] if ins[0] is not None else outs[0])
    if x is None:
        return ins, outs
    c = x[norm_axis(op, p.axis, len(x))]
    for i in (0, 3):
        set_shape(op, ins, i, x, f"input {i}")
    for i in (1, 2, 4, 5, 6):
        set_shape(op, ins, i, (c,), f"input {i}")
    return ins, result_shapes(op, outs, [tuple(x), (c,), (c,)])


def _backward_type(p, ins, outs):
    ins, outs, op = list(ins), list(outs), p.backward_op_name
    t = next((v for v in (ins[3], ins[0], outs[0]) if v is not None), None)
    if t is not None:
        acc = param_dtype(t)
        for i in range(7):
            set_type(op, ins, i, t if i in (0, 3) else acc, f"input {i}")
        for k in range(3):
            set_type(op, outs, k, t if k == 0 else acc, f"output {k}")
    return ins, outs


_SCALES = np.array([0.5, 1.0, 2.0], np.float32)
_V1_EXAMPLES = [
    {"inputs": [(4, 3, 2, 2), (3,), (3,), (3,), _SCALES], "params": {"fix_gamma": False},
     "grad": [0, 1, 2]},
    {"inputs": [(5, 2, 3), (2,), (2,), (2,), np.array([1.0, 1.5], np.float32)], "grad": [0, 2]},
    {"inputs": [(4, 3), (3,), (3,), (3,), _SCALES],
     "params": {"use_global_stats": True, "fix_gamma": False}, "grad": [0, 1, 2]},
    {"inputs": [(4, 3, 2), (3,), (3,), (3,), _SCALES], "params": {"output_mean_var": True},
     "grad": False},
]
_EXAMPLES = {
    "BatchNorm": [
        *_V1_EXAMPLES[:2],
        {"inputs": [(3, 4, 2), (2,), (2,), (2,), np.array([1.0, 2.0], np.float32)],
         "params": {"axis": -1, "fix_gamma": "False", "eps": "1e-5", "momentum": "0.8"},
         "grad": [0, 1, 2]},
        _V1_EXAMPLES[2],
        {"inputs": [(4, 3, 2), (3,), (3,), (3,), _SCALES],
         "params": {"output_mean_var": True, "cudnn_off": True, "min_calib_range": "None"},
         "grad": False}],
    "BatchNorm_v1": _V1_EXAMPLES,
    "_contrib_SyncBatchNorm": [{**e, "params": {**e.get("params", {}), "key": "bn0"}}
                               for e in _V1_EXAMPLES],
}
_SECOND = {"BatchNorm": "inverse standard deviation", "BatchNorm_v1": "variance",
           "_contrib_SyncBatchNorm": "variance"}
_ALIASES = {"BatchNorm": ["_npx_batch_norm"], "BatchNorm_v1": [],
            "_contrib_SyncBatchNorm": []}

for _param in (BatchNormParam, BatchNormV1Param, SyncBatchNormParam):
    _op = _param.op_name
    _fwd = register_op(_op)
    for _alias in _ALIASES[_op]:
        _fwd.add_alias(_alias)
    (_fwd.describe("Per-channel normalization: each channel is centred and divided by its "
                   "standard deviation taken over all other axes (statistics of the batch when "
                   "training, the moving ones otherwise), then multiplied by gamma (1 with "
                   "fix_gamma) and offset by beta. The auxiliary states moving_mean and "
                   "moving_var change in the backward pass of a training step; with "
                   f"output_mean_var the mean and the {_SECOND[_op]} are outputs too.")
        .set_attr_parser(_param)
        .set_num_inputs(5).set_num_outputs(3)
        .set_attr("FNumVisibleOutputs", lambda p: 3 if p.output_mean_var else 1)
        .set_attr("FListInputNames", lambda p: list(_INPUTS))
        .set_attr("FListOutputNames", lambda p: ["output", "mean", "var"])
        .set_attr("FMutateInputs", lambda p: [3, 4])
        .set_attr("FSetInputVarAttrOnCompose", init_attrs({3: '["zero", {}]', 4: '["one", {}]'}))
        .set_attr("FInplaceOption", lambda p: [(0, 0)])   # where the data dies (inference)
        .set_attr("FInferShape", _shape)
        .set_attr("FInferType", FloatOnly(_type, accepted=AMP_FLOAT_DTYPES))
        .set_attr("FCompute<cpu>", _forward)
        .set_attr("FGradient", _grad)
        .set_attr("TExamples", _EXAMPLES[_op])
        .add_argument("data", "NDArray-or-Symbol", "Array to normalize.")
        .add_argument("gamma", "NDArray-or-Symbol", "Per-channel scale.")
        .add_argument("beta", "NDArray-or-Symbol", "Per-channel shift."))
    if _op != "BatchNorm_v1":      # as MXNet, whose BatchNorm_v1 lists them as aux states only
        (_fwd.add_argument("moving_mean", "NDArray-or-Symbol",
                           "Moving average of the batch means.")
             .add_argument("moving_var", "NDArray-or-Symbol",
                           "Moving average of the batch variances."))

    (register_op(_param.backward_op_name)
        .describe(f"Gradient of {_op} wrt data, gamma and beta from the output gradient, the "
                  f"saved mean and {_SECOND[_op]}, the data and gamma; in training it also "
                  "updates moving_mean and moving_var (inputs 5 and 6).")
        .set_attr_parser(_param)
        .set_attr("TIsBackward", True)
        .set_num_inputs(7).set_num_outputs(3)
        .set_attr("FMutateInputs", lambda p: [5, 6])
        .set_attr("FInplaceOption", lambda p: [(0, 0)])   # og's sums come before gx is written
        .set_attr("FInferShape", _backward_shape)
        .set_attr("FInferType", _backward_type)
        .set_attr("FCompute<cpu>", _backward)
        .set_attr("TExamples", [
            {"inputs": [(4, 3, 2), np.zeros(3, np.float32), np.ones(3, np.float32), (4, 3, 2),
                        (3,), (3,), np.ones(3, np.float32)],
             "params": {"fix_gamma": False,
                        **({"key": "bn0"} if _op == "_contrib_SyncBatchNorm" else {})}}]))


def _sparse_inputs(params, inputs, dense):
    """MXNet's BatchNorm storage rule: sparse inputs take the storage fallback (None), but
    with ``fix_gamma`` MXNet refuses them (its issue #11647), at bind as imperatively."""
    sparse = [f"{name} ({stype_of(x)})" for name, x in zip(_INPUTS, inputs)
              if stype_of(x) != "default"]
    if params.fix_gamma and sparse:
        raise MXNetError(f"Operator 'BatchNorm': fix_gamma=True is not supported for sparse "
                         f"inputs ({', '.join(sparse)}); pass fix_gamma=False or dense arrays")
    return None


register_op("BatchNorm").set_attr("FComputeSparse", _sparse_inputs)
