"""Pixel shuffles (sub-pixel convolution's rearrangement, MXNet 1.9's
``gluon.contrib.nn.PixelShuffle1D/2D/3D``): channels ``C * f1 * ... * fd`` of an
(N, C*f1*..*fd, D1, ..., Dd) input become an (N, C, D1*f1, ..., Dd*fd) output, each block of
``f1 x ... x fd`` output pixels taken from consecutive channels."""

__all__ = ['PixelShuffle1D', 'PixelShuffle2D', 'PixelShuffle3D']

from math import prod as _prod

from ...block import HybridBlock


class _PixelShuffle(HybridBlock):
    _ndim = None

    def __init__(self, factor):
        super().__init__()
        factors = (factor,) * self._ndim if isinstance(factor, int) else tuple(factor)
        if len(factors) != self._ndim or not all(isinstance(f, int) and f > 0
                                                 for f in factors):
            raise ValueError(f"{type(self).__name__}: factor: expected a positive int or "
                             f"{self._ndim} of them, got {factor!r}")
        self._factors = factors

    def hybrid_forward(self, F, x):
        d = self._ndim
        # (N, C*f, D...) -> (N, C, f1..fd, D1..Dd) -> (N, C, D1, f1, ..., Dd, fd) -> merged
        f = self._factors
        x = F.reshape(x, (0, -4, -1, _prod(f)) + (0,) * d)
        for i in range(d - 1):      # code -4 splits one dimension in two
            x = F.reshape(x, (0,) * (2 + i) + (-4, f[i], _prod(f[i + 1:])) + (0,) * d)
        axes = (0, 1) + tuple(a for i in range(d) for a in (2 + d + i, 2 + i))
        x = F.transpose(x, axes=axes)
        return F.reshape(x, (0, 0) + (-3,) * d)

    def __repr__(self):
        return f"{type(self).__name__}({self._factors if self._ndim > 1 else self._factors[0]})"


class PixelShuffle1D(_PixelShuffle):
    _ndim = 1


class PixelShuffle2D(_PixelShuffle):
    _ndim = 2


class PixelShuffle3D(_PixelShuffle):
    _ndim = 3
