"""Random samplers drawing from the per-device RANDOM resource."""

from __future__ import annotations

import operator
from typing import Annotated

import numpy as np
from opsdk import (DType, ElemwiseShape, Field, FloatOnly, MakeZeroGradNodes, NodeEntry, Param,
                   ParamError, ResourceRequest, assign, make_node, register_op)
from pydantic import BeforeValidator

from ._common import dtype_field
from ._layout import backward_shape, fail, fixed_type, merge, same_type, zeros_entry


def _random(params):
    return [ResourceRequest.RANDOM]


def _parallel_random(params):
    """MXNet's CPU streams (the samplers in ``_MXNET_DRAWS``)."""
    return [ResourceRequest.PARALLEL_RANDOM]


_FLOAT_DTYPE = dtype_field("float16", "float32", "float64")


# MXNet passes every parameter as its str(): a Context is accepted as "cpu(0)"
_CtxText = Annotated[str, BeforeValidator(lambda v: "" if v is None else str(v))]


class _SampleParam(Param):
    shape: tuple[int, ...] = Field((), description="Output shape")
    ctx: _CtxText = Field("", description="Device of the output (the caller places it; "
                                          "ignored here)")
    dtype: _FLOAT_DTYPE | None = Field(None, description="Output dtype; None: float32")


class _IntSampleParam(_SampleParam):
    dtype: dtype_field("int32", "int64") | None = Field(None,
                                                        description="Output dtype; None: int32")


# -- the distributions' scalar parameters (the ``_like`` ops take only these) -----------
# MXNet parses them unchecked: the kernel rejects bad values (``_KERNEL_CHECKS``), so the
# error surfaces where the result is read (``asnumpy``, ``wait_to_read``, ``waitall``).
class UniformArgs(Param):
    low: float = Field(0.0, description="Lower bound")
    high: float = Field(1.0, description="Upper bound (exclusive)")


class NormalArgs(Param):
    loc: float = Field(0.0, description="Mean")
    scale: float = Field(1.0, description="Standard deviation (> 0)")


class RandintArgs(Param):
    low: int = Field(description="Lower bound (inclusive)")
    high: int = Field(description="Upper bound (exclusive)")


class ExponentialArgs(Param):
    lam: float = Field(1.0, description="Rate (1 / mean; > 0)")


class GammaArgs(Param):
    alpha: float = Field(1.0, description="Shape (> 0)")
    beta: float = Field(1.0, description="Scale (> 0)")


class PoissonArgs(Param):
    lam: float = Field(1.0, description="Mean (>= 0)")


class NegBinomialArgs(Param):
    k: int = Field(1, description="Successes that end the experiment (>= 0)")
    p: float = Field(1.0, description="Success probability of each trial (>= 0)")


class GenNegBinomialArgs(Param):
    mu: float = Field(1.0, description="Mean (>= 0)")
    alpha: float = Field(1.0, description="Dispersion (>= 0; 0: Poisson)")


# kind: ((argument, comparison, bound: a number or another argument), ...), as MXNet's kernels
# check them (randint's low == high, a division by zero in MXNet, is rejected here too)
_KERNEL_CHECKS = {
    "uniform": (("high", ">=", "low"),),
    "normal": (("scale", ">", 0),),
    "randint": (("high", ">", "low"),),
    "exponential": (("lam", ">", 0),),
    "gamma": (("alpha", ">", 0), ("beta", ">", 0)),
    "poisson": (("lam", ">=", 0),),
    "negative_binomial": (("k", ">=", 0), ("p", ">=", 0)),
    "generalized_negative_binomial": (("mu", ">=", 0), ("alpha", ">=", 0)),
}
_COMPARE = {">": operator.gt, ">=": operator.ge}


def _check_args(op, checks, params):
    """Raise ParamError (from the kernel) for the first argument out of its bound."""
    for arg, cmp, bound in checks:
        value = getattr(params, arg)
        limit = getattr(params, bound) if isinstance(bound, str) else bound
        if not _COMPARE[cmp](value, limit):
            what = f"{bound}={limit}" if isinstance(bound, str) else bound
            raise ParamError(f"Operator {op!r}: parameter {arg} must be {cmp} {what}, "
                             f"got {arg}={value}")


def _neg_binomial(gen, xp, k, p, size):
    """Failures before the k-th success. Where numpy has no answer MXNet's sampler gives one:
    0 for k = 0 or p >= 1; p = 0 never succeeds (inf here, an integer overflow in MXNet)."""
    k, p = xp.asarray(k, np.float64), xp.asarray(p, np.float64)
    zero, never = (k == 0) | (p >= 1), p == 0
    ok = ~(zero | never)
    draws = gen.negative_binomial(xp.where(ok, k, 1), xp.where(ok, p, 0.5), size)
    return xp.where(ok, draws, xp.where(zero, 0.0, np.inf))


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
                          _neg_binomial,
                          "Negative binomial samples: failures before k successes.",
                          {"k": 3, "p": 0.4}, ("k", "p")),
    "generalized_negative_binomial": (
        GenNegBinomialArgs, "float32", _gen_neg_binomial,
        "Generalized negative binomial samples (gamma-Poisson mixture).",
        {"mu": 2, "alpha": 0.3}, ("mu", "alpha")),
}
_ALIASES = {"uniform": ("random_uniform", "uniform"), "normal": ("random_normal", "normal")}


# Draws per generator call when a large host output is filled: numpy draws float64 (twice a
# float32 output's size) and the whole array at once held 4x the output (a 512 MB uniform
# peaked at 2 GB). A generator's stream is the same drawn in pieces (checked for every kind
# but the two-stage generalized_negative_binomial), so the values are too.
_CHUNK = 1 << 20
_TWO_STAGE = {"generalized_negative_binomial"}


# -- MXNet's own CPU samplers (src/operator/random/sampler.h), on the PARALLEL_RANDOM
# resource's ``get_parallel_random()`` streams: the parameters are float32 (ints for
# randint), the arithmetic in the streams' ``sampling_type`` of the output, as MXNet's kernels
def _exact_uniform(streams, lo, hi, n, dtype):
    lo, hi = np.float32(lo), np.float32(hi)
    ft = streams.sampling_type(dtype)
    return ft(lo) + ft(hi - lo) * streams.uniform(n, dtype)


def _exact_normal(streams, mu, sigma, n, dtype):
    ft = streams.sampling_type(dtype)
    return streams.normal(n, dtype) * ft(np.float32(sigma)) + ft(np.float32(mu))


def _exact_randint(streams, lo, hi, n, dtype):
    return lo + np.fmod(streams.int64(n), hi - lo)        # C's remainder: the sign of the draw


def _exact_exponential(streams, lam, n, dtype):
    u = streams.uniform(n, dtype).astype(np.float64)
    return -np.log(1.0 - u) / np.float64(np.float32(lam))


_MXNET_DRAWS = {"uniform": _exact_uniform, "normal": _exact_normal,
                "randint": _exact_randint, "exponential": _exact_exponential}


def _fill(ctx, out, req, draw, vals, size, dtype, pieces, exact=None):
    gen, n = ctx.requested[0].get_random(), int(np.prod(size, dtype=np.int64))
    streams = ctx.requested[0].get_parallel_random() if exact is not None else None
    if streams is not None:
        assign(out, req, exact(streams, *vals, n, dtype).astype(dtype, copy=False).reshape(size))
        return
    if (pieces and n > _CHUNK and ctx.xp is np and req in (1, 2) and type(out) is np.ndarray
            and out.dtype == dtype and out.flags.c_contiguous):
        flat = out.reshape(-1)
        for i in range(0, n, _CHUNK):
            j = min(n, i + _CHUNK)
            flat[i:j] = draw(gen, ctx.xp, *vals, (j - i,))
        return
    assign(out, req, draw(gen, ctx.xp, *vals, size).astype(dtype))


def _sampler(op, checks, args, default_dtype, draw, pieces, exact):
    """``_random_<kind>``: scalar parameters, output shape ``params.shape``."""
    def compute(ctx, inputs, req, outputs, params):
        _check_args(op, checks, params)
        vals = [getattr(params, a) for a in args]
        _fill(ctx, outputs[0], req[0], draw, vals, params.shape,
              np.dtype(params.dtype or default_dtype), pieces, exact)
    return compute


def _like_sampler(op, checks, args, draw, pieces, exact):
    """``_random_<kind>_like``: scalar parameters, the shape and dtype of ``data``."""
    def compute(ctx, inputs, req, outputs, params):
        _check_args(op, checks, params)
        vals = [getattr(params, a) for a in args]
        _fill(ctx, outputs[0], req[0], draw, vals, inputs[0].shape, outputs[0].dtype, pieces,
              exact)
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
    dtype: _FLOAT_DTYPE | None = Field(None, description="Output dtype; None: float32")


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
    _base = _IntSampleParam if _kind == "randint" else _SampleParam
    # MXNet's field order (the positional one): the distribution's args, shape, ctx, dtype
    _param = type(f"{_args_model.__name__[:-4]}Param", (_base, _args_model), {})
    _first = {"shape": "(3, 4)", "low": 0, "high": 5} if _kind == "randint" else {"shape": "(3, 4)"}
    (_b.describe(_doc).set_attr_parser(_param).set_num_inputs(0).set_num_outputs(1)
        .set_attr("FInferShape",
                  lambda p, ins, outs, n=_name: (list(ins), merge(n, outs, [p.shape])))
        .set_attr("FInferType", fixed_type(_name, lambda p, d=_dtype: p.dtype or d))
        .set_attr("FResourceRequest", _parallel_random if _kind in _MXNET_DRAWS else _random)
        .set_attr("FCompute<cpu>", _sampler(_name, _KERNEL_CHECKS[_kind], _args, _dtype, _draw,
                                            _kind not in _TWO_STAGE, _MXNET_DRAWS.get(_kind)))
        .set_attr("TExamples", [{"inputs": [], "params": _first},
                                {"inputs": [], "params": {"shape": (50,), **_ex}}]))
    if _kind == "randint":
        continue
    (register_op(f"{_name}_like").describe(f"{_doc} Shape and dtype of data.")
        .set_attr_parser(_args_model).set_num_inputs(1).set_num_outputs(1)
        .set_attr("FInferShape", ElemwiseShape(1, 1))
        .set_attr("FInferType", FloatOnly(same_type(f"{_name}_like")))
        .set_attr("FResourceRequest", _parallel_random if _kind in _MXNET_DRAWS else _random)
        .set_attr("FCompute<cpu>", _like_sampler(f"{_name}_like", _KERNEL_CHECKS[_kind], _args,
                                                  _draw, _kind not in _TWO_STAGE,
                                                  _MXNET_DRAWS.get(_kind)))
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
    .set_attr("FInferType", FloatOnly(_multinomial_type))
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


# -- _sample_unique_zipfian ------------------------------------------------------------
class UniqueZipfianParam(Param):
    range_max: int = Field(description="Number of classes: samples lie in [0, range_max)")
    shape: tuple[int, ...] = Field((), description="(batch_size, num_sampled)")


def _unique_zipfian_shape(p, ins, outs):
    op = "_sample_unique_zipfian"
    if not p.shape and outs[0] is not None and len(outs[0]) == 2:
        return list(ins), merge(op, outs, [tuple(outs[0]), (outs[0][0],)])
    if len(p.shape) != 2:
        fail(op, f"shape={p.shape} must be 2-D: (batch_size, num_sampled)")
    return list(ins), merge(op, outs, [p.shape, (p.shape[0],)])


def _unique_draws(gen, log_range, n):
    """Classes ``round(exp(u log range_max)) - 1`` (u uniform in [0, 1)) drawn until ``n``
    distinct ones came: those ``n`` in order of first appearance, and the number of draws."""
    draws = np.empty(0, np.int64)
    while True:
        more = gen.random(max(2 * n, 64))
        classes = np.floor(np.exp(more * log_range) + 0.5).astype(np.int64) - 1
        draws = np.concatenate([draws, classes])
        _, first = np.unique(draws, return_index=True)
        if first.size >= n:
            first.sort()
            return draws[first[:n]], first[n - 1] + 1


def _unique_zipfian(ctx, inputs, req, outputs, params):
    """A CPU kernel (MXNet has no other): rows are drawn one after another."""
    batch, n = outputs[0].shape
    if n > params.range_max:
        raise ParamError(f"Operator '_sample_unique_zipfian': num_sampled={n} (shape[1]) must "
                         f"be <= range_max={params.range_max}")
    samples, tries = np.zeros((batch, n), np.int64), np.zeros(batch, np.int64)
    if n:
        gen, log_range = ctx.requested[0].get_random(), np.log(params.range_max)
        for i in range(batch):
            samples[i], tries[i] = _unique_draws(gen, log_range, n)
    assign(outputs[0], req[0], samples)
    assign(outputs[1], req[1], tries)


(register_op("_sample_unique_zipfian")
    .describe("Per batch row, num_sampled distinct classes in [0, range_max) drawn without "
              "replacement from an approximately log-uniform (Zipfian) distribution, "
              "round(range_max ** u) - 1 for u uniform in [0, 1), and how many draws that took.")
    .set_attr_parser(UniqueZipfianParam).set_num_inputs(0).set_num_outputs(2)
    .set_attr("FInferShape", _unique_zipfian_shape)
    .set_attr("FInferType", fixed_type("_sample_unique_zipfian", lambda p: "int64"))
    .set_attr("FResourceRequest", _random)
    .set_attr("FCompute<cpu>", _unique_zipfian)
    .set_attr("TExamples", [{"inputs": [], "params": {"range_max": 50, "shape": (3, 20)}},
                            {"inputs": [], "params": {"range_max": 5, "shape": "(2, 5)"}}]))
