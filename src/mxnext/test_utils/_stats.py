"""Statistical checks of random generators: mean, variance and chi-square goodness of fit.

The chi-square p-value is computed here (regularized upper incomplete gamma function), so the
checks need no SciPy. Like old SciPy, which MXNet's CI ran, the observed and expected counts
are not required to have equal sums: expected counts are truncated to integers.
"""

from __future__ import annotations

import math

import numpy as np

from .._runtime.base import ParamError
from ._compare import _np


def _upper_gamma_q(a: float, x: float) -> float:
    """Q(a, x) = Γ(a, x) / Γ(a) for a > 0, x >= 0: a series below x = a + 1, a continued
    fraction above."""
    if x <= 0:
        return 1.0
    log_prefix = a * math.log(x) - x - math.lgamma(a)
    if x < a + 1:                       # P(a, x) = x^a e^-x / Γ(a+1) * Σ x^n / ((a+1)..(a+n))
        term = total = 1.0 / a
        k = a
        while abs(term) > abs(total) * 1e-15:
            k += 1
            term *= x / k
            total += term
        return max(0.0, 1.0 - total * math.exp(log_prefix))
    tiny = 1e-300                       # Q(a, x) by the continued fraction, Lentz's method
    b = x + 1.0 - a
    c, d = 1.0 / tiny, 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = b + an / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return math.exp(log_prefix) * h


def _chi_square_p(obs, expected) -> float:
    """Pearson's statistic over the buckets and its p-value with len(buckets) - 1 degrees of
    freedom (the chance that a right generator scores at least this badly)."""
    obs, expected = np.asarray(obs, np.float64), np.asarray(expected, np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        stat = float(np.sum((obs - expected) ** 2 / expected))
    if math.isnan(stat):
        return math.nan
    return 0.0 if math.isinf(stat) else _upper_gamma_q((len(obs) - 1) / 2.0, stat / 2.0)


def gen_buckets_probs_with_ppf(ppf, nbuckets):
    """``nbuckets`` equally likely buckets ``(ppf(i/n), ppf((i+1)/n))`` from a quantile function,
    and their probabilities (each ``1/nbuckets``)."""
    if nbuckets <= 0:
        raise ParamError(f"gen_buckets_probs_with_ppf: argument 'nbuckets' expected > 0, "
                         f"got {nbuckets}")
    buckets = [(ppf(i / float(nbuckets)), ppf((i + 1) / float(nbuckets)))
               for i in range(nbuckets)]
    return buckets, [1.0 / nbuckets] * nbuckets


def mean_check(generator, mu, sigma, nsamples=1000000) -> bool:
    """Whether the mean of ``generator(nsamples)`` lies within mu ± 3 sigma / sqrt(nsamples)."""
    mean = _np(generator(nsamples)).mean()
    half = 3 * sigma / np.sqrt(nsamples)
    return bool(mu - half < mean < mu + half)


def var_check(generator, sigma, nsamples=1000000) -> bool:
    """Whether the sample variance of ``generator(nsamples)`` lies within
    sigma² ± 3 sqrt(2 sigma⁴ / (nsamples - 1))."""
    var = _np(generator(nsamples)).var(ddof=1)
    half = 3 * np.sqrt(2 * sigma ** 4 / (nsamples - 1))
    return bool(sigma ** 2 - half < var < sigma ** 2 + half)


def chi_square_check(generator, buckets, probs, nsamples=1000000):
    """Chi-square goodness of fit of ``generator(nsamples)`` to bucket probabilities.

    ``buckets`` is a list of ascending, non-overlapping ``(low, high)`` ranges for a continuous
    distribution (a sample counts in the range with ``low <= x < high``; edges are rounded to
    float32, as in MXNet) or a list of the values of a discrete one. ``probs`` are the true
    probabilities of the buckets. Returns ``(p, obs_freq, expected_freq)``; a larger p is more
    confidence that the generator is right.
    """
    if not isinstance(buckets, list):
        raise ParamError(f"chi_square_check: argument 'buckets' expected a list, "
                         f"got {type(buckets).__name__}")
    if len(probs) != len(buckets):
        raise ParamError(f"chi_square_check: arguments 'probs' and 'buckets' expected the same "
                         f"length, got {len(probs)} and {len(buckets)}")
    samples = _np(generator(nsamples))
    expected_freq = (nsamples * np.array(probs, dtype=np.float32)).astype(np.int32)
    if isinstance(buckets[0], (list, tuple)):
        edges = np.array(buckets, dtype=np.float32).reshape(-1)
        if np.any(np.diff(edges) < 0):
            raise ParamError(f"chi_square_check: argument 'buckets' expected ascending, "
                             f"non-overlapping ranges, got {buckets}")
        ids = np.searchsorted(edges, samples, side="right") // 2  # gaps join the next range
        obs_freq = np.bincount(ids.reshape(-1), minlength=len(buckets) + 1)[:len(buckets)]
    else:
        obs_freq = np.array([np.count_nonzero(samples == value) for value in buckets])
    obs_freq = obs_freq.astype(np.int64)
    return _chi_square_p(obs_freq, expected_freq), obs_freq, expected_freq


def verify_generator(generator, buckets, probs, nsamples=1000000, nrepeat=5, success_rate=0.2,
                     alpha=0.05):
    """Run :func:`chi_square_check` ``nrepeat`` times; fail (AssertionError, with every p-value
    and count) unless p > ``alpha`` in at least ``nrepeat * success_rate`` of them. Returns the
    p-values."""
    runs = [chi_square_check(generator, buckets, probs, nsamples) for _ in range(nrepeat)]
    ps = [r[0] for r in runs]
    if np.sum(np.array(ps) > alpha) < nrepeat * success_rate:
        raise AssertionError(f"Generator test fails, Chi-square p={ps}, "
                             f"obs_freq={[r[1] for r in runs]}, "
                             f"expected_freq={[r[2] for r in runs]}.\n"
                             f"buckets={buckets}, probs={probs}")
    return ps
