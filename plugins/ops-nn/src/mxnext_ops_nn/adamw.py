"""MXNet 1.9's contrib AdamW update ops (``_adamw_update``, ``_mp_adamw_update`` and their
multi-weight forms), which GluonNLP's ``BERTAdam`` optimizer calls.

AdamW decouples the weight decay from the gradient step:
``g = clip(rescale_grad * grad)``, ``mean = beta1*mean + (1-beta1)*g``,
``var = beta2*var + (1-beta2)*g**2``,
``weight -= eta * (lr * mean / (sqrt(var) + epsilon) + wd * weight)``.

``rescale_grad`` is the last input, an array (so a loss scaler can change it without a new
op call); when it holds NaN, an infinity or 0 the update is skipped and nothing is written.
The ``mp_`` forms keep a float32 master copy ``weight32`` (updated in place) and write it,
cast, to the output; mean and var are float32 there. States are updated in place.
"""

from __future__ import annotations

import numpy as np

from opsdk import ElemwiseShape, ElemwiseType, Field, FloatOnly, Param, assign, register_op

from ._infer import assign_type
from .optimizer import multi_weight_rules

_CLIP = ("Bound on the rescaled gradient's magnitude; a negative value disables it (0 clips "
         "every gradient to 0, as MXNet's kernels do).")


class AdamWParam(Param):
    lr: float = Field(description="Learning rate")
    beta1: float = Field(0.9, description="Decay rate of the first moment estimates.")
    beta2: float = Field(0.999, description="Decay rate of the second moment estimates.")
    epsilon: float = Field(1e-8, description="Small constant added to the denominator.")
    wd: float = Field(0.0, description="Decoupled weight decay coefficient.")
    eta: float = Field(description="Learning rate schedule multiplier")
    clip_gradient: float = Field(-1.0, description=_CLIP)


class MultiAdamWParam(Param):
    lrs: tuple[float, ...] = Field(description="Learning rate of each weight.")
    wds: tuple[float, ...] = Field(description="Decoupled weight decay of each weight.")
    etas: tuple[float, ...] = Field(description="Schedule multiplier of each weight.")
    beta1: float = Field(0.9, description="Decay rate of the first moment estimates.")
    beta2: float = Field(0.999, description="Decay rate of the second moment estimates.")
    epsilon: float = Field(1e-8, description="Small constant added to the denominator.")
    clip_gradient: float = Field(-1.0, description=_CLIP)
    num_weights: int = Field(1, ge=1, description="How many weights one call updates.")


def _scale(rescale_grad):
    """The rescale factor as a float, or None where the update is to be skipped."""
    value = float(rescale_grad.reshape(-1)[0])
    return value if np.isfinite(value) and value != 0 else None


def _step(xp, w, g, mean, var, scale, lr, wd, eta, p):
    """One AdamW step in the states' precision; returns the new weight."""
    g = g.astype(mean.dtype, copy=False) * mean.dtype.type(scale)
    if p.clip_gradient >= 0:
        g = xp.clip(g, -p.clip_gradient, p.clip_gradient)
    mean[...] = p.beta1 * mean + (1 - p.beta1) * g
    var[...] = p.beta2 * var + (1 - p.beta2) * xp.square(g)
    return w - eta * (lr * mean / (xp.sqrt(var) + p.epsilon) + wd * w)


def _single_compute(mp):
    def compute(ctx, inputs, req, outputs, params):
        scale = _scale(inputs[-1])
        if scale is None:
            return
        w, g, mean, var = inputs[:4]
        master = inputs[4] if mp else w
        new = _step(ctx.xp, master.astype(mean.dtype, copy=False), g, mean, var, scale,
                    params.lr, params.wd, params.eta, params)
        if mp:
            master[...] = new
        assign(outputs[0], req[0], new.astype(outputs[0].dtype, copy=False))
    return compute


def _single_type(n_elem, name, names):
    rule = FloatOnly(ElemwiseType(-1, 1, name), op=name)

    def infer_type(p, ins, outs):
        ins = list(ins)
        head, outs = rule(p, ins[:n_elem], outs)
        ins[:n_elem] = head
        for i in range(n_elem, len(ins)):
            assign_type(name, ins, i, np.float32, names[i])
        return ins, outs
    return infer_type


def _single_shape(n_elem, name):
    rule = ElemwiseShape(-1, 1, name)

    def infer_shape(p, ins, outs):
        ins = list(ins)
        head, outs = rule(p, ins[:n_elem], outs)
        ins[:n_elem] = head
        return ins, outs
    return infer_shape


def _register_single(name, mp):
    names = ["weight", "grad", "mean", "var"] + (["weight32"] if mp else []) + ["rescale_grad"]
    n_elem = 2 if mp else 4          # inputs sharing the weight's dtype
    n_shape = len(names) - 1
    state = [(0.0, 1.0)] * 2 + ([(-1, 1)] if mp else [])
    b = (register_op(name).describe(__doc__.split("\n\n")[1].replace("\n", " "))
         .set_attr_parser(AdamWParam)
         .set_num_inputs(len(names)).set_num_outputs(1)
         .set_attr("FInferShape", _single_shape(n_shape, name))
         .set_attr("FInferType", _single_type(n_elem, name, names))
         .set_attr("FMutateInputs", lambda p: list(range(2, n_shape)))
         .set_attr("FCompute<cpu>", _single_compute(mp))
         .set_attr("TExamples", [
             {"inputs": [(3, 4)] * n_shape + [(1,)],
              "domain": [(-1, 1), (-1, 1)] + state + [(0.5, 1.0)],
              "params": {"lr": 0.1, "eta": 0.5, "wd": 0.01, "clip_gradient": 0.3}}]))
    for a in names:
        b.add_argument(a, "NDArray-or-Symbol", a)


def _multi_compute(stride):
    mp = stride == 5

    def compute(ctx, inputs, req, outputs, params):
        scale = _scale(inputs[-1])
        if scale is None:
            return
        for i in range(params.num_weights):
            w, g, mean, var, *master = inputs[i * stride:(i + 1) * stride]
            source = master[0] if mp else w
            new = _step(ctx.xp, source.astype(mean.dtype, copy=False), g, mean, var, scale,
                        params.lrs[i], params.wds[i], params.etas[i], params)
            if mp:
                master[0][...] = new
            assign(outputs[i], req[i], new.astype(outputs[i].dtype, copy=False))
    return compute


def _multi_infer(name, stride):
    kinds = ["weight", "grad", "mean", "var", "weight32"][:stride]
    check, infer_shape = multi_weight_rules(name, stride, ("lrs", "wds", "etas"))

    def infer_type(p, ins, outs):
        check(p)
        ins, outs = list(ins), list(outs)
        pair = FloatOnly(ElemwiseType(2, 1, name), op=name)
        for i in range(p.num_weights):
            base = i * stride
            pi, po = pair(p, ins[base:base + 2], [outs[i]])
            ins[base:base + 2], outs[i] = pi, po[0]
            for j in range(2, stride):
                assign_type(name, ins, base + j, np.float32, f"{kinds[j]}_{i}")
        assign_type(name, ins, len(ins) - 1, np.float32, "rescale_grad")
        return ins, outs

    def names(p):
        return [f"{k}_{i}" for i in range(p.num_weights) for k in kinds] + ["rescale_grad"]
    return infer_shape, infer_type, names


def _register_multi(name, stride):
    kinds = ["weight", "grad", "mean", "var", "weight32"][:stride]
    infer_shape, infer_type, names = _multi_infer(name, stride)
    state = [(0.0, 1.0)] * 2 + ([(-1, 1)] if stride == 5 else [])
    example = {"inputs": [(3, 4)] * stride + [(5,)] * stride + [(1,)],
               "domain": ([(-1, 1), (-1, 1)] + state) * 2 + [(0.5, 1.0)],
               "params": {"num_weights": 2, "lrs": "(0.1, 0.2)", "wds": (0.0, 0.01),
                          "etas": (1.0, 0.5), "clip_gradient": 0.3}}
    (register_op(name)
     .describe(f"{name.replace('_multi', '')} over ``num_weights`` groups of "
               f"({', '.join(kinds)}) with per-weight ``lrs``, ``wds`` and ``etas`` and one "
               "rescale_grad; output i is the new weight i.")
     .set_attr_parser(MultiAdamWParam)
     .set_num_inputs(lambda p: stride * p.num_weights + 1)
     .set_num_outputs(lambda p: p.num_weights)
     .set_attr("FListInputNames", names)
     .set_attr("FInferShape", infer_shape)
     .set_attr("FInferType", infer_type)
     .set_attr("FMutateInputs", lambda p: [stride * i + j for i in range(p.num_weights)
                                           for j in range(2, stride)])
     .set_attr("FCompute<cpu>", _multi_compute(stride))
     .set_attr("TExamples", [example])
     .add_argument("data", "NDArray-or-Symbol[]", "Per weight, in turn: weight, grad, mean, "
                   "var" + (", weight32" if stride == 5 else "") + "; then rescale_grad"))


_register_single("_adamw_update", mp=False)
_register_single("_mp_adamw_update", mp=True)
_register_multi("_multi_adamw_update", 4)
_register_multi("_multi_mp_adamw_update", 5)
