"""erf, gamma, log-gamma and digamma on ``xp`` arrays (numpy has none of them).

All work in float64 and reach ~1e-13 absolute (erf) / relative (gamma family)
accuracy; the caller casts back to the op's dtype.
"""

from __future__ import annotations

import math

_SQRT_PI = math.sqrt(math.pi)
_ERF_SPLIT = 3.0
# Lanczos approximation, g = 7, nine terms.
_LANCZOS_G = 7.0
_LANCZOS = (0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313,
            -176.61502916214059, 12.507343278686905, -0.13857109526572012,
            9.9843695780195716e-6, 1.5056327351493116e-7)
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)
# Gamma(n + 1) = n!, exact for the positive integers whose Gamma is finite in float64: the
# Lanczos value is an ulp low on some (Gamma(5) = 23.999...), which truncates wrong for int
# inputs, where MXNet's tgamma is exact.
_FACTORIALS = tuple(float(math.factorial(n)) for n in range(171))


def erf(xp, x):
    """Maclaurin series below |x| = 3, the continued fraction of erfc above."""
    a = xp.abs(xp.asarray(x, dtype="float64"))
    s = xp.minimum(a, _ERF_SPLIT)
    s2 = s * s
    term, total = s, s.copy()
    for n in range(1, 64):          # sum (-1)^n s^(2n+1) / (n! (2n+1))
        term = term * (-s2) / n
        total += term / (2 * n + 1)
    series = total * (2 / _SQRT_PI)
    b = xp.maximum(a, _ERF_SPLIT)
    frac = b
    for k in range(48, 0, -1):      # erfc = exp(-b^2) / (sqrt(pi) (b + (1/2)/(b + 1/(b + ...))))
        frac = b + (k / 2) / frac
    tail = 1 - xp.exp(-b * b) / (_SQRT_PI * frac)
    return xp.sign(x) * xp.where(a < _ERF_SPLIT, series, tail)


def _sinpi(xp, z):
    r = z - 2 * xp.floor(z / 2)      # sin(pi z) with the period removed first
    return xp.sin(math.pi * r)


def _lgamma_pos(xp, z):
    """log Gamma(z) for z >= 0.5 (Lanczos)."""
    z = z - 1
    acc = xp.full_like(z, _LANCZOS[0])
    for i, c in enumerate(_LANCZOS[1:], 1):
        acc = acc + c / (z + i)
    t = z + _LANCZOS_G + 0.5
    return _HALF_LOG_2PI + (z + 0.5) * xp.log(t) - t + xp.log(acc)


def gammaln(xp, x):
    """log |Gamma(x)|; +inf at the poles (0, -1, -2, ...)."""
    z = xp.asarray(x, dtype="float64")
    low = z < 0.5
    zr = xp.where(low, 1 - z, z)
    lg = _lgamma_pos(xp, zr)
    refl = math.log(math.pi) - xp.log(xp.abs(_sinpi(xp, z))) - lg
    out = xp.where(low, refl, lg)
    return xp.where(low & (z == xp.floor(z)), xp.inf, out)


def gamma(xp, x):
    """Gamma(x); +-inf at +-0 and nan at the negative integers (as MXNet's tgamma)."""
    z = xp.asarray(x, dtype="float64")
    low = z < 0.5
    zr = xp.where(low, 1 - z, z)
    g = xp.exp(_lgamma_pos(xp, zr))
    refl = math.pi / (_sinpi(xp, z) * g)
    out = xp.where(low, refl, g)
    whole = z == xp.floor(z)
    exact = whole & (z >= 1) & (z <= len(_FACTORIALS))
    if exact.any():
        n = xp.where(exact, z - 1, 0).astype("int64")
        out = xp.where(exact, xp.asarray(_FACTORIALS)[n], out)
    out = xp.where(low & whole, xp.nan, out)
    return xp.where(z == 0, xp.copysign(xp.inf, z), out)


def digamma(xp, x):
    """psi(x) = d/dx log Gamma(x): reflection below 0.5, recurrence up to 10, then the
    asymptotic series; +inf at the poles 0, -1, -2, ... (cephes' MAXNUM, as MXNet)."""
    z = xp.asarray(x, dtype="float64")
    low = z < 0.5
    w = xp.where(low, 1 - z, z)
    acc = xp.zeros_like(w)
    for _ in range(10):
        small = w < 10
        acc = acc - xp.where(small, 1 / w, 0)
        w = xp.where(small, w + 1, w)
    inv = 1 / w
    inv2 = inv * inv
    series = xp.log(w) - 0.5 * inv - inv2 * (1 / 12 - inv2 * (1 / 120 - inv2 * (
        1 / 252 - inv2 * (1 / 240 - inv2 / 132))))
    psi = series + acc
    refl = psi - math.pi / xp.tan(math.pi * (z - xp.floor(z)))
    return xp.where(low & (z == xp.floor(z)), xp.inf, xp.where(low, refl, psi))
