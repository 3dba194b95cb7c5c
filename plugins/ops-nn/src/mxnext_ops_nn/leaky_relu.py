"""LeakyReLU (leaky, prelu, rrelu, elu, selu, gelu) and its backward.

The backward reads the output gradient plus: the output (leaky, elu, selu), the output and
the random slopes (rrelu), the data and gamma (prelu) or the data (gelu).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
from opsdk import Field, FloatOnly, Param, ResourceRequest, register_op
from opsdk.shape import dim_known

from ._layer_rules import (backward_node, fail, grad_entries, init_attrs, namespace,
                           out_entry, put,
                           result_shapes, same_type, set_shape)

OP = "LeakyReLU"
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_LAMBDA = 1.0507009873554804934193349852946


class LeakyReLUParam(Param):
    act_type: Literal["rrelu", "leaky", "prelu", "elu", "selu", "gelu"] = Field(
        "leaky", description="Which ReLU variant to apply.")
    slope: float = Field(0.25, description="Negative-side factor of leaky and elu (other "
                                           "variants ignore it).")
    lower_bound: float = Field(0.125, description="Smallest slope rrelu draws.")
    upper_bound: float = Field(0.334, description="Largest slope rrelu draws.")


def erf(x):
    """Error function in float64: erf(x) = 2/sqrt(pi) exp(-x^2) *
    sum_n 2^n x^(2n+1) / (1*3*...*(2n+1)), a series of positive terms (no cancellation);
    |x| >= 6 gives +-1 (erfc(6) < 3e-17); absolute error below 5e-15."""
    xp = namespace(x)
    x = x.astype(np.float64)
    a = xp.minimum(xp.abs(x), 6.0)
    top = float(a.max()) if a.size else 0.0
    terms = int(top * top + 6 * top + 20)
    term = a.copy()
    total = a.copy()
    sq2 = 2 * a * a
    for n in range(1, terms):
        term *= sq2 / (2 * n + 1)
        total += term
    return xp.sign(x) * xp.minimum(total * xp.exp(-a * a) * (2 / math.sqrt(math.pi)), 1.0)


def _gamma_shape(gamma, data):
    """MXNet's expand_shape: gamma's axes align with data's leading axes 0 and 1 (an unknown
    size fits any)."""
    out, s = [1] * len(data), len(gamma) - 1
    for i in range(len(data) - 1, -1, -1):
        if s >= 0 and i <= 1 and (data[i] == gamma[s] or gamma[s] == 1 or
                                  not dim_known(data[i]) or not dim_known(gamma[s])):
            out[i] = gamma[s]
            s -= 1
    if s != -1:
        fail(OP, f"cannot broadcast gamma of shape {tuple(gamma)} to data of shape {tuple(data)}")
    return tuple(out)


def _n_in(p):
    return 2 if p.act_type == "prelu" else 1


def _n_out(p):
    return 2 if p.act_type == "rrelu" else 1


def _shape(p, ins, outs):
    ins, x = list(ins), ins[0]
    if x is None:
        return ins, list(outs)
    if p.act_type == "prelu":
        if ins[1] is None:
            if len(x) < 2:
                fail(OP, f"prelu needs data of at least 2 dims for a per-channel gamma, got {x}")
            ins[1] = (x[1],)
        _gamma_shape(ins[1], x)
    return ins, result_shapes(OP, outs, [tuple(x)] * _n_out(p))


def _input_names(p):
    return ["data", "gamma"] if p.act_type == "prelu" else ["data"]


def _xelu(x, slope):
    return np.where(x > 0, x, x * slope)


def _forward(ctx, inputs, req, outputs, p):
    x, t = inputs[0], p.act_type
    if t == "leaky":
        y = _xelu(x, x.dtype.type(p.slope))
    elif t == "prelu":
        y = _xelu(x, inputs[1].reshape(_gamma_shape(inputs[1].shape, x.shape)))
    elif t == "rrelu":
        if ctx.is_train:
            lo, hi = p.lower_bound, p.upper_bound
            mask = ctx.requested[0].get_random().uniform(lo, hi, x.shape).astype(x.dtype)
        else:   # inference: the mean slope
            mask = ctx.xp.full(x.shape, (p.lower_bound + p.upper_bound) / 2, x.dtype)
        y = _xelu(x, mask)
        put(outputs[1], req[1], mask)
    elif t == "elu":
        y = np.where(x > 0, x, p.slope * np.expm1(np.minimum(x, 0)))
    elif t == "selu":
        y = SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * np.expm1(np.minimum(x, 0)))
    else:
        y = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    put(outputs[0], req[0], y)


def _backward(ctx, inputs, req, outputs, p):
    og, t = inputs[0], p.act_type
    if t == "prelu":
        x, gamma = inputs[1], inputs[2]
        gshape = _gamma_shape(gamma.shape, x.shape)
        if req[1]:     # before the data gradient, which may overwrite og in place
            axes = tuple(i for i, (a, b) in enumerate(zip(gshape, x.shape)) if a == 1 and b != 1)
            gg = (og * np.minimum(x, 0)).sum(axis=axes, keepdims=True)
            put(outputs[1], req[1], gg.reshape(gamma.shape))
        put(outputs[0], req[0], og * np.where(x > 0, 1, gamma.reshape(gshape)))
        return
    v = inputs[1]               # the output; the data for gelu
    if t == "leaky":
        d = np.where(v > 0, 1, v.dtype.type(p.slope))
    elif t == "rrelu":
        d = np.where(v > 0, 1, inputs[2])
    elif t == "elu":
        d = np.where(v > 0, 1, v + p.slope)
    elif t == "selu":
        d = np.where(v > 0, SELU_LAMBDA, v + SELU_LAMBDA * SELU_ALPHA)
    else:
        d = 0.5 * (1 + erf(v / math.sqrt(2))) + v * np.exp(-0.5 * v * v) / math.sqrt(2 * math.pi)
    put(outputs[0], req[0], og * d)


def _grad(node, og):
    t, x = node.params.act_type, node.inputs[0]
    if t == "prelu":
        reads = [x, node.inputs[1]]
    elif t == "rrelu":
        reads = [out_entry(node, 0), out_entry(node, 1)]
    else:
        reads = [x] if t == "gelu" else [out_entry(node, 0)]
    n = backward_node(f"_backward_{OP}", node, [og[0]] + reads)
    return grad_entries(n, len(node.inputs))


def _backward_inputs(p):
    return {"prelu": 3, "rrelu": 3}.get(p.act_type, 2)


def _backward_shape(p, ins, outs):
    ins, outs = list(ins), list(outs)
    known = next((s for s in ins[:2] + outs[:1] if s is not None), None)
    if known is not None:
        for k in range(2 if p.act_type != "rrelu" else 3):
            set_shape(f"_backward_{OP}", ins, k, known, f"input {k}")
        set_shape(f"_backward_{OP}", outs, 0, known, "output 0")
    if p.act_type == "prelu":
        if ins[2] is not None:
            set_shape(f"_backward_{OP}", outs, 1, ins[2], "output 1")
        elif outs[1] is not None:
            ins[2] = tuple(outs[1])
    return ins, outs


def _resources(p):
    return [ResourceRequest.RANDOM] if p.act_type == "rrelu" else []


_EXAMPLES = [
    {"inputs": [(3, 4)], "params": {"act_type": "leaky", "slope": 0.1}},
    {"inputs": [(2, 3, 4), (3,)], "params": {"act_type": "prelu"}},
    {"inputs": [(2, 3, 2), (2, 3)], "params": {"act_type": "prelu"}, "domain": (-1, 1)},
    {"inputs": [(3, 4)], "params": {"act_type": "elu", "slope": "0.5"}},
    {"inputs": [(3, 4)], "params": {"act_type": "selu"}, "domain": (-2, 2)},
    {"inputs": [(3, 4)], "params": {"act_type": "gelu"}, "domain": (-3, 3)},
    {"inputs": [(3, 4)], "params": {"act_type": "rrelu", "lower_bound": 0.1,
                                    "upper_bound": 0.3}},
]

(register_op(OP).add_alias("_npx_leaky_relu")
    .describe("ReLU variants that keep a response below zero: leaky (x > 0 ? x : slope*x), "
              "prelu (learnt per-channel slope gamma), rrelu (random slope in [lower_bound, "
              "upper_bound) when training, their mean otherwise; second output: the slopes), "
              "elu (slope*(exp(x)-1) below 0), selu and gelu (x/2 (1 + erf(x/sqrt 2))).")
    .set_attr_parser(LeakyReLUParam)
    .set_num_inputs(_n_in).set_num_outputs(_n_out)
    .set_attr("FListInputNames", _input_names)
    .set_attr("FSetInputVarAttrOnCompose", init_attrs({1: '["Constant", {"value": 0.25}]'}))
    .set_attr("FListOutputNames", lambda p: ["output", "mask"][:_n_out(p)])
    .set_attr("FInferShape", _shape)
    .set_attr("FInferType", FloatOnly(same_type(OP, _input_names)))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FResourceRequest", _resources)
    .set_attr("FCompute<cpu>", _forward)
    .set_attr("FGradient", _grad)
    .set_attr("TExamples", _EXAMPLES)
    .add_argument("data", "NDArray-or-Symbol", "The input array.")
    .add_argument("gamma", "NDArray-or-Symbol", "Learnt prelu slopes, one per channel."))

(register_op(f"_backward_{OP}")
    .describe("Gradient of LeakyReLU from the output gradient and the forward values its "
              "act_type needs.")
    .set_attr_parser(LeakyReLUParam)
    .set_attr("TIsBackward", True)
    .set_num_inputs(_backward_inputs).set_num_outputs(_n_in)
    .set_attr("FInferShape", _backward_shape)
    .set_attr("FInferType", same_type(f"_backward_{OP}"))
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _backward)
    .set_attr("TExamples", [
        {"inputs": [(3, 4), (3, 4)], "params": {"act_type": "elu"}},
        {"inputs": [(2, 3, 4), (2, 3, 4), (3,)], "params": {"act_type": "prelu"}}]))
