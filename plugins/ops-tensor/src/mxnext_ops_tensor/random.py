"""Random samplers drawing from the per-device RANDOM resource."""

from __future__ import annotations

import numpy as np
from opsdk import (DType, ElemwiseShape, Field, MakeZeroGradNodes, NodeEntry, Param,
                   ResourceRequest, assign, make_node, register_op)
from pydantic import model_validator

from ._layout import backward_shape, fail, fixed_type, merge, same_type, zeros_entry


def _random(params):
    return [ResourceRequest.RANDOM]


class _SampleParam(Param):
    shape: tuple[int, ...] = Field((), description="Output shape")
    ctx: str = Field("", description="Device of the output (the caller places it; ignored here)")
    dtype: DType | None = Field(None, description="Output dtype; None: float32")


# -- the distributions' scalar parameters (the ``_like`` ops take only these) -----------
class UniformArgs(Param):
    low: float = Field(0.0, description="Lower bound")
    high: float = Field(1.0, description="Upper bound (exclusive)")

    @model_validator(mode="after")
    def _ordered(self):
        if self.low > self.high:                   # MXNet allows low == high
            raise ValueError(f"low={self.low} must be less than or equal to high={self.high}")
        return self


class NormalArgs(Param):
    loc: float = Field(0.0, description="Mean")
    scale: float = Field(1.0, ge=0, description="Standard deviation")


class RandintArgs(Param):
    low: int = Field(description="Lower bound (inclusive)")
    high: int = Field(description="Upper bound (exclusive)")

    @model_validator(mode="after")
    def _ordered(self):
        if self.low >= self.high:
            raise ValueError(f"low={self.low} must be less than high={self.high}")
        return self


class ExponentialArgs(Param):
    lam: float = Field(1.0, gt=0, description="Rate (1 / mean)")


class GammaArgs(Param):
    alpha: float = Field(1.0, gt=0, description="Shape")
    beta: float = Field(1.0, gt=0, description="Scale")


class PoissonArgs(Param):
    lam: float = Field(1.0, ge=0, description="Mean")


class NegBinomialArgs(Param):
    k: int = Field(1, gt=0, description="Successes that end the experiment")
    p: float = Field(1.0, gt=0, le=1, description="Success probability of each trial")


class GenNegBinomialArgs(Param):
    mu: float = Field(1.0, gt=0, description="Mean")
    alpha: float = Field(1.0, ge=0, description="Dispersion (0: Poisson)")


def _gen_neg_binomial(gen, xp, mu, alpha, size):
    """Poisson draws at gamma(1/alpha, alpha mu) rates (Poisson(mu) where alpha is 0)."""
    mu, alpha = xp.asarray(mu, np.float64), xp.asarray(alpha, np.float64)
    safe = xp.where(alpha > 0, alpha, 1.0)
    lam = xp.where(alpha > 0, gen.gamma(1 / safe, mu * safe, size), xp.broadcast_to(mu, size))
    return gen.poisson(lam)


# kind: (scalar args model (its fields are draw's args, in order), default dtype,
#        draw(gen, xp, *args, size), doc, example args, the _sample_ op's input names or None)
_DISTS = {
    "uniform": (UniformArgs, "float32",
                lambda gen, xp, lo, hi, size: gen.uniform(lo, hi, size),
                "Uniform samples in [low, high).", {"low": -2, "high": "3.5"}, ("low", "high")),
    "normal": (NormalArgs, "float32",
               lambda gen, xp, mu, sigma, size: gen.normal(mu, sigma, size),
               "Normal (Gaussian) samples.", {"loc": 1, "scale": 2}, ("mu", "sigma")),
    "randint": (RandintArgs, "int32",
                lambda gen, xp, lo, hi, size: gen.integers(lo, hi, size),
                "Integer samples in [low, high).", {"low": -3, "high": 9}, None),
    "exponential": (ExponentialArgs, "float32",
                    lambda gen, xp, lam, size: gen.exponential(1.0 / lam, size),
                    "Exponential samples (rate lam).", {"lam": 4}, ("lam",)),
    "gamma": (GammaArgs, "float32",
              lambda gen, xp, a, b, size: gen.gamma(a, b, size),
              "Gamma samples (shape alpha, scale beta).", {"alpha": 2, "beta": 0.5},
              ("alpha", "beta")),
    "poisson": (PoissonArgs, "float32",
                lambda gen, xp, lam, size: gen.poisson(lam, size), "Poisson samples.",
                {"lam": 3}, ("lam",)),
    "negative_binomial": (NegBinomialArgs, "float32",
                          lambda gen, xp, k, p, size: gen.negative_binomial(k, p, size),
                          "Negative binomial samples: failures before k successes.",
                          {"k": 3, "p": 0.4}, ("k", "p")),
    "generalized_negative_binomial": (
        GenNegBinomialArgs, "float32", _gen_neg_binomial,
        "Generalized negative binomial samples (gamma-Poisson mixture).",
        {"mu": 2, "alpha": 0.3}, ("mu", "alpha")),
}
_ALIASES = {"uniform": ("random_uniform", "uniform"), "normal": ("random_normal", "normal")}


def _sampler(args, default_dtype, draw):
    """``_random_<kind>``: scalar parameters, output shape ``params.shape``."""
    def compute(ctx, inputs, req, outputs, params):
        vals = [getattr(params, a) for a in args]
        out = draw(ctx.requested[0].get_random(), ctx.xp, *vals, params.shape)
        assign(outputs[0], req[0], out.astype(params.dtype or default_dtype))
    return compute


def _like_sampler(args, draw):
    """``_random_<kind>_like``: scalar parameters, the shape and dtype of ``data``."""
    def compute(ctx, inputs, req, outputs, params):
        vals = [getattr(params, a) for a in args]
        out = draw(ctx.requested[0].get_random(), ctx.xp, *vals, inputs[0].shape)
        assign(outputs[0], req[0], out.astype(outputs[0].dtype))
    return compute


def _array_sampler(default_dtype, draw):
    """``_sample_<kind>``: one parameter array per argument, all of one shape S; the output
    has shape S + ``params.shape`` (``params.shape`` draws per parameter element)."""
    def compute(ctx, inputs, req, outputs, params):
        tail = (1,) * len(params.shape)
        vals = [a.reshape(a.shape + tail) for a in inputs]
        out = draw(ctx.requested[0].get_random(), ctx.xp, *vals, outputs[0].shape)
        assign(outputs[0], req[0], out.astype(params.dtype or default_dtype))
    return compute


class SampleParam(Param):
    shape: tuple[int, ...] = Field((), description="Draws per element of the parameter arrays")
    dtype: DType | None = Field(None, description="Output dtype; None: float32")


def _array_shape(op):
    def infer(p, ins, outs):
        known = [tuple(s) for s in ins if s is not None]
        if not known:
            return list(ins), list(outs)
        if any(s != known[0] for s in known):
            fail(op, f"parameter arrays need one shape, got {', '.join(map(str, known))}")
        return [known[0]] * len(ins), merge(op, outs, [known[0] + tuple(p.shape)])
    return infer


for _kind, (_args_model, _dtype, _draw, _doc, _ex, _inputs) in _DISTS.items():
    _name, _args = f"_random_{_kind}", tuple(_args_model.model_fields)
    _b = register_op(_name)
    for _alias in _ALIASES.get(_kind, (f"random_{_kind}",)):
        _b.add_alias(_alias)
    _param = type(f"{_args_model.__name__[:-4]}Param", (_args_model, _SampleParam), {})
    _first = {"shape": "(3, 4)", "low": 0, "high": 5} if _kind == "randint" else {"shape": "(3, 4)"}
    (_b.describe(_doc).set_attr_parser(_param).set_num_inputs(0).set_num_outputs(1)
        .set_attr("FInferShape",
                  lambda p, ins, outs, n=_name: (list(ins), merge(n, outs, [p.shape])))
        .set_attr("FInferType", fixed_type(_name, lambda p, d=_dtype: p.dtype or d))
        .set_attr("FResourceRequest", _random)
        .set_attr("FCompute<cpu>", _sampler(_args, _dtype, _draw))
        .set_attr("TExamples", [{"inputs": [], "params": _first},
                                {"inputs": [], "params": {"shape": (50,), **_ex}}]))
    if _kind == "randint":
        continue
    (register_op(f"{_name}_like").describe(f"{_doc} Shape and dtype of data.")
        .set_attr_parser(_args_model).set_num_inputs(1).set_num_outputs(1)
        .set_attr("FInferShape", ElemwiseShape(1, 1))
        .set_attr("FInferType", same_type(f"{_name}_like"))
        .set_attr("FResourceRequest", _random)
        .set_attr("FCompute<cpu>", _like_sampler(_args, _draw))
        .set_attr("FGradient", MakeZeroGradNodes)
        .set_attr("TExamples", [{"inputs": [(4, 5)], "params": _ex, "grad": False}])
        .add_argument("data", "NDArray-or-Symbol", "Its shape and dtype are the output's"))
    _sample = register_op(f"_sample_{_kind}").add_alias(f"sample_{_kind}")
    (_sample.describe(f"{_doc} Parameters are arrays: shape draws per element.")
        .set_attr_parser(SampleParam).set_num_inputs(len(_inputs)).set_num_outputs(1)
        .set_attr("FInferShape", _array_shape(f"_sample_{_kind}"))
        .set_attr("FInferType", fixed_type(f"_sample_{_kind}", lambda p, d=_dtype: p.dtype or d))
        .set_attr("FResourceRequest", _random)
        .set_attr("FCompute<cpu>", _array_sampler(_dtype, _draw))
        .set_attr("FGradient", MakeZeroGradNodes)
        .set_attr("TExamples", [{"inputs": [np.full((2, 3), float(_ex[a]), np.float32)
                                            for a in _args],
                                 "params": {"shape": (4,)}, "grad": False}]))
    for _arg in _inputs:
        _sample.add_argument(_arg, "NDArray-or-Symbol", f"The distribution's {_arg} per element")


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
    .describe("Draws category indices, each row of data's last axis being one categorical "
              "distribution.")
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
    .add_argument("data", "NDArray-or-Symbol", "Category probabilities, rows summing to 1"))

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
    .describe("The input with its slices along axis 0 in random order.")
    .set_num_inputs(1).set_num_outputs(1)
    .set_attr("FInferShape", lambda p, i, o: (i, merge("_shuffle", o, i)) if i[0] is not None
              else (o, o))
    .set_attr("FInferType", same_type("_shuffle"))
    .set_attr("FResourceRequest", _random)
    .set_attr("FInplaceOption", lambda p: [(0, 0)])
    .set_attr("FCompute<cpu>", _shuffle)
    .set_attr("TExamples", [{"inputs": [(5, 3)]}, {"inputs": [(7,)], "dtype": "int64", "domain": (0, 100)}])
    .add_argument("data", "NDArray-or-Symbol", "Array whose first axis is permuted"))
