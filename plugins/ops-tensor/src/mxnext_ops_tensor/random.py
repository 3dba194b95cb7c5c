"""Random samplers drawing from the per-device RANDOM resource."""

from __future__ import annotations

import numpy as np
from opsdk import (DType, Field, NodeEntry, Param, ResourceRequest, assign,
                   make_node, register_op)

from pydantic import model_validator

from ._layout import backward_shape, fail, fixed_type, merge, same_type, zeros_entry


def _random(params):
    return [ResourceRequest.RANDOM]


class _SampleParam(Param):
    shape: tuple[int, ...] = Field((), description="Shape of the output")
    ctx: str = Field("", description="Context of the output (the caller places it; ignored here)")
    dtype: DType | None = Field(None, description="Output dtype; None: float32")


class UniformParam(_SampleParam):
    low: float = Field(0.0, description="Lower bound")
    high: float = Field(1.0, description="Upper bound (exclusive)")

    @model_validator(mode="after")
    def _ordered(self):
        if self.low > self.high:                   # MXNet allows low == high
            raise ValueError(f"low={self.low} must be less than or equal to high={self.high}")
        return self


class NormalParam(_SampleParam):
    loc: float = Field(0.0, description="Mean")
    scale: float = Field(1.0, ge=0, description="Standard deviation")


class RandintParam(_SampleParam):
    low: int = Field(description="Lower bound (inclusive)")
    high: int = Field(description="Upper bound (exclusive)")

    @model_validator(mode="after")
    def _ordered(self):
        if self.low >= self.high:
            raise ValueError(f"low={self.low} must be less than high={self.high}")
        return self


class ExponentialParam(_SampleParam):
    lam: float = Field(1.0, gt=0, description="Rate (1 / mean)")


class GammaParam(_SampleParam):
    alpha: float = Field(1.0, gt=0, description="Shape")
    beta: float = Field(1.0, gt=0, description="Scale")


class PoissonParam(_SampleParam):
    lam: float = Field(1.0, ge=0, description="Mean")




_SAMPLERS = [
    ("_random_uniform", ("random_uniform", "uniform"), UniformParam, "float32",
     lambda gen, p: gen.uniform(p.low, p.high, p.shape),
     "Uniform samples in [low, high).", {"low": -2, "high": "3.5"}),
    ("_random_normal", ("random_normal", "normal"), NormalParam, "float32",
     lambda gen, p: gen.normal(p.loc, p.scale, p.shape), "Normal (Gaussian) samples.",
     {"loc": 1, "scale": 2}),
    ("_random_randint", ("random_randint",), RandintParam, "int32",
     lambda gen, p: gen.integers(p.low, p.high, p.shape),
     "Integer samples in [low, high).", {"low": -3, "high": 9}),
    ("_random_exponential", ("random_exponential",), ExponentialParam, "float32",
     lambda gen, p: gen.exponential(1.0 / p.lam, p.shape), "Exponential samples.", {"lam": 4}),
    ("_random_gamma", ("random_gamma",), GammaParam, "float32",
     lambda gen, p: gen.gamma(p.alpha, p.beta, p.shape), "Gamma samples (shape alpha, scale beta).",
     {"alpha": 2, "beta": 0.5}),
    ("_random_poisson", ("random_poisson",), PoissonParam, "float32",
     lambda gen, p: gen.poisson(p.lam, p.shape), "Poisson samples.", {"lam": 3}),
]


def _sampler(op, draw, default_dtype):
    def compute(ctx, inputs, req, outputs, params):
        gen = ctx.requested[0].get_random()
        assign(outputs[0], req[0], draw(gen, params).astype(params.dtype or default_dtype))
    return compute


def _shape_rule(op):
    return lambda p, ins, outs: (list(ins), merge(op, outs, [p.shape]))


for _name, _aliases, _param, _dtype, _draw, _doc, _ex in _SAMPLERS:
    _b = register_op(_name)
    for _alias in _aliases:
        _b.add_alias(_alias)
    (_b.describe(_doc).set_attr_parser(_param).set_num_inputs(0).set_num_outputs(1)
        .set_attr("FInferShape", _shape_rule(_name))
        .set_attr("FInferType", fixed_type(_name, lambda p, d=_dtype: p.dtype or d))
        .set_attr("FResourceRequest", _random)
        .set_attr("FCompute<cpu>", _sampler(_name, _draw, _dtype))
        .set_attr("TExamples", [{"inputs": [], "params": {"shape": "(3, 4)", "low": 0, "high": 5}
                                 if _param is RandintParam else {"shape": "(3, 4)"}},
                                {"inputs": [], "params": {"shape": (50,), **_ex}}]))


# -- _sample_multinomial ---------------------------------------------------------------
class MultinomialParam(Param):
    shape: tuple[int, ...] = Field((), description="Samples drawn per distribution")
    get_prob: bool = Field(False, description="Also output the log-probability of each sample")
    dtype: DType = Field("int32", description="Dtype of the sample indices")


def _multinomial_infer(p, ins, outs):
    data = ins[0]
    if data is None:
        return list(ins), list(outs)
    if not data:
        fail("_sample_multinomial", "data needs at least 1 dim (the categories)")
    out = tuple(data[:-1]) + p.shape
    return list(ins), merge("_sample_multinomial", outs, [out] * (2 if p.get_prob else 1))


def _multinomial_type(p, ins, outs):
    out = [np.dtype(p.dtype)] + ([ins[0]] if p.get_prob else [])
    return list(ins), out


def _multinomial(ctx, inputs, req, outputs, params):
    xp, data = ctx.xp, inputs[0]
    gen = ctx.requested[0].get_random()
    k = data.shape[-1]
    rows = data.reshape(-1, k).astype(np.float64)
    n = int(np.prod(params.shape))
    cdf = xp.cumsum(rows, axis=1)
    u = gen.random((rows.shape[0], n)) * cdf[:, -1:]
    idx = xp.minimum((u[:, :, None] >= cdf[:, None, :]).sum(axis=2), k - 1)
    shape = outputs[0].shape
    assign(outputs[0], req[0], idx.reshape(shape).astype(params.dtype))
    if params.get_prob:
        prob = xp.take_along_axis(rows, idx, axis=1)
        assign(outputs[1], req[1], xp.log(prob).reshape(shape).astype(data.dtype))


def _multinomial_backward(ctx, inputs, req, outputs, params):
    """d log p[sample] / d p = 1 / p at each sampled category, times the head gradient."""
    xp, og, data, sample = ctx.xp, inputs[0], inputs[1], inputs[2]
    k = data.shape[-1]
    rows = data.reshape(-1, k)
    idx = sample.reshape(rows.shape[0], -1).astype(np.int64)
    g = xp.zeros(rows.shape, np.float64)
    w = og.reshape(idx.shape) / xp.take_along_axis(rows, idx, axis=1)
    xp.add.at(g, (xp.arange(rows.shape[0])[:, None], idx), w)
    assign(outputs[0], req[0], g.reshape(data.shape).astype(data.dtype))


def _multinomial_grad(node, out_grads):
    if not node.params.get_prob:
        return [zeros_entry(node.inputs[0])]
    n = make_node("_backward_sample_multinomial",
                  [out_grads[1], node.inputs[0], NodeEntry(node, 0)], node.params)
    return [NodeEntry(n, 0)]


_PROBS = np.array([[0.1, 0.2, 0.3, 0.4], [0.5, 0.25, 0.125, 0.125]], np.float32)
(register_op("_sample_multinomial").add_alias("sample_multinomial")
    .describe("Samples category indices from multinomial distributions (last axis of data).")
    .set_attr_parser(MultinomialParam).set_num_inputs(1)
    .set_num_outputs(lambda p: 2 if p.get_prob else 1)
    .set_attr("FInferShape", _multinomial_infer)
    .set_attr("FInferType", _multinomial_type)
    .set_attr("FResourceRequest", _random)
    .set_attr("FCompute<cpu>", _multinomial)
    .set_attr("FGradient", _multinomial_grad)
    .set_attr("TExamples", [{"inputs": [_PROBS], "params": {"shape": "(3,)"}, "grad": False},
                            {"inputs": [_PROBS], "params": {"get_prob": True}},
                            {"inputs": [_PROBS[0]], "params": {"shape": (2, 2), "get_prob": "True"}}])
    .add_argument("data", "NDArray-or-Symbol", "Distribution probabilities (sum to one on the last axis)"))

(register_op("_backward_sample_multinomial")
    .describe("Gradient of _sample_multinomial's log-probability output wrt data.")
    .set_attr_parser(MultinomialParam).set_num_inputs(3).set_num_outputs(1)
    .set_attr("FInferShape", backward_shape("_backward_sample_multinomial"))
    .set_attr("FInferType", lambda p, i, o: (i, [i[1] if i[1] is not None else o[0]]))
    .set_attr("FCompute<cpu>", _multinomial_backward)
    .set_attr("TExamples", [{"inputs": [(2,), _PROBS, np.array([3, 0], np.int32)],
                             "params": {"get_prob": True}}]))


# -- _shuffle --------------------------------------------------------------------------
def _shuffle(ctx, inputs, req, outputs, params):
    x = inputs[0]
    perm = ctx.requested[0].get_random().permutation(x.shape[0]) if x.ndim else None
    assign(outputs[0], req[0], x[perm] if perm is not None else x.copy())


(register_op("_shuffle").add_alias("shuffle")
    .describe("Randomly permutes the array along its first axis.")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", lambda p, i, o: (i, merge("_shuffle", o, i)) if i[0] is not None
              else (o, o))
    .set_attr("FInferType", same_type("_shuffle"))
    .set_attr("FResourceRequest", _random)
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _shuffle)
    .set_attr("TExamples", [{"inputs": [(5, 3)]}, {"inputs": [(7,)], "dtype": "int64", "domain": (0, 100)}])
    .add_argument("data", "NDArray-or-Symbol", "Data to shuffle"))
