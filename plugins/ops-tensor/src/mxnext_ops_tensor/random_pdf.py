"""Densities of the sampled distributions (``_random_pdf_*``) and their gradients.

The parameter arrays share one shape P, the leading dims of ``sample`` (shape P + E): each
parameter element serves the E samples after it. Dirichlet's parameter is a vector: alpha
has shape P + (k,), sample P + E + (k,), the density P + E ((1,) for a single vector).
Everything is computed in float64 and rounded once to the op's dtype. As in MXNet, no
sample is checked against the support: the formula is evaluated wherever it is defined.
"""

from __future__ import annotations

import math

import numpy as np
from opsdk import ElemwiseGradUseInOut, Field, FloatOnly, Param, TypeInferError, register_op

from ._common import put
from ._layout import fail, merge, same_type
from ._special import digamma, gammaln

_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


class PdfParam(Param):
    is_log: bool = Field(False, description="Compute the log-density instead of the density")


# -- log-densities and their partial derivatives (x: samples, parameters spread over x) ----
# A gradient function returns d logpdf / d sample (None: the density is not differentiated
# in its sample, as for the discrete distributions) and one array per parameter.
def _uniform(xp, x, low, high):
    return xp.broadcast_to(-xp.log(high - low), x.shape)


def _uniform_grad(xp, x, low, high):
    inv = 1 / (high - low)
    return None, inv, -inv


def _normal(xp, x, mu, sigma):
    z = (x - mu) / sigma
    return -0.5 * z * z - xp.log(sigma) - _HALF_LOG_2PI


def _normal_grad(xp, x, mu, sigma):
    var, d = sigma * sigma, x - mu
    return -d / var, d / var, (d * d - var) / (var * sigma)


def _gamma(xp, x, alpha, beta):
    """beta is the rate here (the sampler's beta is a scale), as in MXNet."""
    return alpha * xp.log(beta) + (alpha - 1) * xp.log(x) - beta * x - gammaln(xp, alpha)


def _gamma_grad(xp, x, alpha, beta):
    return ((alpha - 1) / x - beta, xp.log(beta) + xp.log(x) - digamma(xp, alpha),
            alpha / beta - x)


def _exponential(xp, x, lam):
    return xp.log(lam) - lam * x


def _exponential_grad(xp, x, lam):
    return -lam, 1 / lam - x


def _poisson(xp, x, lam):
    return x * xp.log(lam) - gammaln(xp, x + 1) - lam


def _poisson_grad(xp, x, lam):
    return None, x / lam - 1


def _neg_binomial(xp, x, k, p):
    """x failures before the k-th success (k may be real), success probability p."""
    return (gammaln(xp, x + k) - gammaln(xp, x + 1) - gammaln(xp, k)
            + k * xp.log(p) + x * xp.log1p(-p))


def _neg_binomial_grad(xp, x, k, p):
    return None, digamma(xp, x + k) - digamma(xp, k) + xp.log(p), k / p - x / (1 - p)


def _gen_neg_binomial(xp, x, mu, alpha):
    """The negative binomial with k = 1 / alpha, p = 1 / (1 + mu alpha)."""
    return _neg_binomial(xp, x, 1 / alpha, 1 / (1 + mu * alpha))


def _gen_neg_binomial_grad(xp, x, mu, alpha):
    den = 1 + mu * alpha
    _, dk, dp = _neg_binomial_grad(xp, x, 1 / alpha, 1 / den)
    dp_den2 = dp / (den * den)
    return None, -alpha * dp_den2, -dk / (alpha * alpha) - mu * dp_den2


def _dirichlet(xp, x, alpha):
    """Summed over the last axis (the k components); the sample is not checked to lie on
    the simplex."""
    return (((alpha - 1) * xp.log(x)).sum(axis=-1) + gammaln(xp, alpha.sum(axis=-1))
            - gammaln(xp, alpha).sum(axis=-1))


def _dirichlet_grad(xp, x, alpha):
    psi_sum = digamma(xp, alpha.sum(axis=-1, keepdims=True))
    return (alpha - 1) / x, xp.log(x) + psi_sum - digamma(xp, alpha)


class _Dist:
    """A distribution: its parameters ((name, description), ...), log-density and gradient
    functions, and for the conformance examples the value ranges of sample and parameters
    (``domains``) or a fixed sample of counts (``sample``, discrete distributions)."""

    __slots__ = ("args", "logpdf", "grad", "vector", "doc", "domains", "sample")

    def __init__(self, args, logpdf, grad, doc, domains, sample=None, vector=False):
        self.args, self.logpdf, self.grad, self.doc = args, logpdf, grad, doc
        self.domains, self.sample, self.vector = domains, sample, vector


_COUNTS = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) * 7 % 9)   # counts 0..8
_DISTS = {
    "uniform": _Dist((("low", "Lower bounds"), ("high", "Upper bounds")), _uniform,
                     _uniform_grad, "Density of uniform distributions on [low, high).",
                     [(-1, 1), (-3, -1.5), (1.5, 3)]),
    "normal": _Dist((("mu", "Means"), ("sigma", "Standard deviations")), _normal, _normal_grad,
                    "Density of normal distributions.", [(-2, 2), (-1, 1), (0.5, 2)]),
    "gamma": _Dist((("alpha", "Shapes"), ("beta", "Rates (1 / scale)")), _gamma, _gamma_grad,
                   "Density of gamma distributions with shape alpha and rate beta.",
                   [(0.2, 3), (0.5, 3), (0.5, 2)]),
    "exponential": _Dist((("lam", "Rates"),), _exponential, _exponential_grad,
                         "Density of exponential distributions with rate lam.",
                         [(0, 3), (0.5, 2)]),
    "poisson": _Dist((("lam", "Rates (means)"),), _poisson, _poisson_grad,
                     "Probability mass of Poisson distributions at sample.",
                     [(0, 1), (0.5, 4)], sample=_COUNTS),
    "negative_binomial": _Dist(
        (("k", "Successes that end the experiment (real-valued allowed)"),
         ("p", "Success probability of each trial")), _neg_binomial, _neg_binomial_grad,
        "Probability mass of negative binomial distributions: sample failures before the "
        "k-th success.", [(0, 1), (0.5, 3), (0.2, 0.8)], sample=_COUNTS),
    "generalized_negative_binomial": _Dist(
        (("mu", "Means"), ("alpha", "Dispersions")), _gen_neg_binomial, _gen_neg_binomial_grad,
        "Probability mass of generalized negative binomial distributions (mean mu, dispersion "
        "alpha): the negative binomial with k = 1 / alpha, p = 1 / (1 + mu alpha).",
        [(0, 1), (0.5, 3), (0.2, 1.5)], sample=_COUNTS),
    "dirichlet": _Dist((("alpha", "Concentrations, the last axis a distribution's k"),),
                       _dirichlet, _dirichlet_grad,
                       "Density of Dirichlet distributions: alpha's last axis holds each "
                       "distribution's k concentrations, sample's last axis a point.",
                       [(0.05, 1), (0.5, 3)], vector=True),
}


# -- shape and dtype ----------------------------------------------------------------------
def _param_shape(op, dist, sample, name, shape):
    """The shape every parameter must have, from ``sample`` and the parameter ``name``."""
    if len(shape) > len(sample):
        fail(op, f"{name} has {len(shape)} dims, more than sample {sample}: the parameters' "
                 f"shape must be the leading dims of the sample's")
    if not dist.vector:
        return sample[:len(shape)]
    if not shape:
        fail(op, f"{name} needs at least 1 dim (the k concentrations), got shape ()")
    return sample[:len(shape) - 1] + sample[-1:]


def _pdf_shape(op, dist):
    names = [a for a, _ in dist.args]

    def infer(p, ins, outs):
        known = [(names[i], tuple(s)) for i, s in enumerate(ins[1:]) if s is not None]
        if ins[0] is None or not known:
            return list(ins), list(outs)
        sample = tuple(ins[0])
        want = _param_shape(op, dist, sample, *known[0])
        for name, s in known:
            if s != want:
                lead = ", its last one the sample's k" if dist.vector else ""
                fail(op, f"{name} has shape {s}, expected {want} (the leading dims of sample "
                         f"{sample}{lead})")
        if dist.vector:
            out = sample[:-1] if len(sample) > 1 else (1,)
        else:
            out = sample
        return [sample] + [want] * len(names), merge(op, outs, [out])
    return infer


def _backward_shape(op, n):
    """Output ``i`` (the gradient of forward input ``i``) has the shape of input ``i + 1``."""
    def infer(p, ins, outs):
        ins = list(ins)
        for i in range(n):
            if ins[i + 1] is None:
                ins[i + 1] = outs[i]
        got = [ins[i + 1] for i in range(n)]
        if any(s is None for s in got):
            return ins, list(outs)
        return ins, merge(op, outs, got)
    return infer


def _pdf_type(op, dist):
    """Sample, parameters and density share one dtype."""
    names = ["sample"] + [a for a, _ in dist.args] + ["output"]

    def infer(p, ins, outs):
        given = list(ins) + list(outs)
        known = [(n, np.dtype(t)) for n, t in zip(names, given) if t is not None]
        if not known:
            return list(ins), list(outs)
        first, t = known[0]
        for name, u in known[1:]:
            if u != t:
                raise TypeInferError(f"Operator {op!r}: {name} has dtype {u}, expected {t} "
                                     f"(the dtype of {first})")
        return [t] * len(ins), [t] * len(outs)
    return infer


# -- compute ------------------------------------------------------------------------------
def _spread(xp, dist, sample, params):
    """float64 sample and parameters, each parameter reshaped to broadcast over the sample's
    extra dims E; and the axes of E (where parameter gradients are summed)."""
    x = xp.asarray(sample, dtype=np.float64)
    lead = params[0].ndim - (1 if dist.vector else 0)
    extra = x.ndim - params[0].ndim
    tail = params[0].shape[lead:]
    ps = [xp.asarray(a, dtype=np.float64).reshape(a.shape[:lead] + (1,) * extra + tail)
          for a in params]
    return x, ps, tuple(range(lead, lead + extra))


def _forward(op, dist):
    def compute(ctx, inputs, req, outputs, params):
        xp = ctx.xp
        x, ps, _ = _spread(xp, dist, inputs[0], inputs[1:])
        lp = dist.logpdf(xp, x, *ps)
        out = outputs[0]
        put(out, req[0], (lp if params.is_log else xp.exp(lp)).reshape(out.shape))
    return compute


def _backward(op, dist):
    """Inputs: head gradient, sample, parameters, the forward output (MXNet's order).
    d pdf = pdf * d logpdf, with the pdf the forward output read back as MXNet does."""
    def compute(ctx, inputs, req, outputs, params):
        xp = ctx.xp
        og, sample, pars, out = inputs[0], inputs[1], inputs[2:-1], inputs[-1]
        x, ps, axes = _spread(xp, dist, sample, pars)
        scaling = xp.asarray(og, dtype=np.float64)
        if not params.is_log:
            scaling = scaling * out
        scaling = scaling.reshape(x.shape[:-1] + (1,) if dist.vector else x.shape)
        dx, *dps = dist.grad(xp, x, *ps)
        grads = [0 if dx is None else scaling * dx]
        for a, d in zip(pars, dps):
            grads.append(xp.broadcast_to(scaling * d, x.shape).sum(axis=axes).reshape(a.shape))
        for o, r, g in zip(outputs, req, grads):   # every gradient is ready: in-place safe
            put(o, r, g)
    return compute


def _examples(dist):
    """Forward and backward examples: parameters (2, 3) over samples (2, 3, 4) and one sample
    per parameter; Dirichlet: alpha (2, 4) over samples (2, 3, 4), one sample per alpha row,
    a single vector. Log-density on every other one."""
    n = len(dist.args)
    shapes = [((2, 3, 4), (2, 4)), ((5, 4), (5, 4)), ((4,), (4,))] if dist.vector else \
        [((2, 3, 4), (2, 3)), ((2, 3), (2, 3))]
    fwd, bwd = [], []
    for k, (s, p) in enumerate(shapes):
        sample = s if dist.sample is None else dist.sample.reshape(-1)[:math.prod(s)].reshape(s)
        grad = list(range(n + 1)) if dist.sample is None else list(range(1, n + 1))
        log = {"is_log": k % 2 == 1}
        fwd.append({"inputs": [sample] + [p] * n, "domain": dist.domains, "params": log,
                    "grad": grad})
        out = (s[:-1] or (1,)) if dist.vector else s
        bwd.append({"inputs": [out, sample] + [p] * n + [out], "params": log,
                    "domain": [(-1, 1)] + dist.domains + [(0.1, 1)]})
    return fwd, bwd


for _kind, _dist in _DISTS.items():
    _name, _bw, _n = f"_random_pdf_{_kind}", f"_backward_pdf_{_kind}", len(_dist.args)
    _fwd_ex, _bwd_ex = _examples(_dist)
    _b = (register_op(_name).add_alias(f"random_pdf_{_kind}")
          .describe(f"{_dist.doc} The parameters' shape is the leading dims of sample's; "
                    f"is_log gives the log-density.")
          .set_attr_parser(PdfParam).set_num_inputs(_n + 1).set_num_outputs(1)
          .set_attr("FInferShape", _pdf_shape(_name, _dist))
          .set_attr("FInferType", FloatOnly(_pdf_type(_name, _dist)))
          .set_attr("FCompute<cpu>", _forward(_name, _dist))
          .set_attr("FGradient", ElemwiseGradUseInOut(_bw))
          .set_attr("TExamples", _fwd_ex)
          .add_argument("sample", "NDArray-or-Symbol", "Samples of the distributions"))
    for _arg, _text in _dist.args:
        _b.add_argument(_arg, "NDArray-or-Symbol", f"{_text} of the distributions")
    (register_op(_bw).describe(f"Gradient of {_name} wrt its sample and parameters.")
        .set_attr_parser(PdfParam).set_attr("TIsBackward", True)
        .set_num_inputs(_n + 3).set_num_outputs(_n + 1)
        .set_attr("FInferShape", _backward_shape(_bw, _n + 1))
        .set_attr("FInferType", same_type(_bw))
        .set_attr("FInplaceOption", lambda p, n=_n: [(i + 1, i) for i in range(n + 1)])
        .set_attr("FCompute<cpu>", _backward(_bw, _dist))
        .set_attr("TExamples", _bwd_ex))
