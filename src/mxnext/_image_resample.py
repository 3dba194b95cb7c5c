"""OpenCV's resampling weights for ``cv::resize``'s bicubic, Lanczos and area modes, one
axis at a time, as dense ``(n_out, n_in)`` matrices: ``_image_kernels.resize`` multiplies
an image by one per axis. Positions and edges follow OpenCV: pixel centres aligned, taps
beyond the image replicate its edge pixels (bicubic A = -0.75; Lanczos over 8 pixels),
area weights are the fractions of each source pixel an output pixel covers (a shrink), and
an area "enlarge" is OpenCV's linear variant of it."""

from __future__ import annotations

import numpy as np

__all__ = ["cubic", "lanczos4", "area"]

_A = -0.75


def _dense(rows, cols, weights, n_out, n_in):
    """The (n_out, n_in) matrix summing ``weights`` at (``rows``, ``cols``)."""
    flat = np.bincount((rows * n_in + cols).ravel(), weights.ravel(), n_out * n_in)
    return flat.reshape(n_out, n_in)


def _cubic_taps(t):
    c0 = ((_A * (t + 1) - 5 * _A) * (t + 1) + 8 * _A) * (t + 1) - 4 * _A
    c1 = ((_A + 2) * t - (_A + 3)) * t * t + 1
    c2 = ((_A + 2) * (1 - t) - (_A + 3)) * (1 - t) * (1 - t) + 1
    return np.hstack([c0, c1, c2, 1 - c0 - c1 - c2])


def _lanczos4_taps(t):
    """OpenCV's Lanczos-4 taps: (-1)^i sin(y) / y^2 at y = -(t + 3 - i) pi / 4, normalised
    (the common factor of the textbook kernel cancels); the source pixel itself at t = 0."""
    at_pixel = t < np.finfo(np.float32).eps
    y = -(np.where(at_pixel, 0.5, t) + 3 - np.arange(8)) * np.pi / 4
    taps = (-1.0) ** np.arange(8) * np.sin(y) / (y * y)
    taps = np.where(at_pixel, np.eye(8)[3], taps)
    return taps / taps.sum(axis=1, keepdims=True)


def _taps(n_in, n_out, kernel, size):
    scale = 1.0 / (n_out / n_in)
    pos = ((np.arange(n_out) + 0.5) * scale - 0.5).astype(np.float32).astype(np.float64)
    left = np.floor(pos)
    taps = kernel((pos - left)[:, None])
    cols = np.clip(left.astype(np.intp)[:, None] + np.arange(1 - size // 2, size // 2 + 1),
                   0, n_in - 1)
    rows = np.broadcast_to(np.arange(n_out)[:, None], cols.shape)
    return _dense(rows, cols, taps, n_out, n_in)


def cubic(n_in, n_out):
    """Bicubic weights (OpenCV's INTER_CUBIC)."""
    return _taps(n_in, n_out, _cubic_taps, 4)


def lanczos4(n_in, n_out):
    """Lanczos weights over 8 pixels (OpenCV's INTER_LANCZOS4)."""
    return _taps(n_in, n_out, _lanczos4_taps, 8)


def _area_shrink(n_in, n_out, scale):
    start = np.arange(n_out)[:, None] * scale
    stop = start + scale
    cell = np.minimum(scale, n_in - start)
    src = np.arange(n_in)[None, :]
    cover = np.clip(np.minimum(src + 1, stop) - np.maximum(src, start), 0, None)
    cover[cover <= 1e-3] = 0            # OpenCV drops slivers of a pixel
    return cover / cell


def _area_linear(n_in, n_out, scale):
    inv = n_out / n_in
    out = np.arange(n_out)
    left = np.floor(out * scale).astype(np.intp)
    frac = (out + 1) - (left + 1) * inv
    frac = np.where(frac <= 0, 0.0, frac - np.floor(frac))
    frac = np.where(left >= n_in - 1, 0.0, frac)
    left = np.minimum(left, n_in - 1)
    cols = np.stack([left, np.minimum(left + 1, n_in - 1)], 1)
    taps = np.stack([1 - frac, frac], 1)
    rows = np.broadcast_to(out[:, None], cols.shape)
    return _dense(rows, cols, taps, n_out, n_in)


def area(n_in, n_out, shrink):
    """Area weights (OpenCV's INTER_AREA): a true area average when ``shrink`` (OpenCV
    averages only when no axis grows), else its linear variant."""
    scale = 1.0 / (n_out / n_in)
    return _area_shrink(n_in, n_out, scale) if shrink else _area_linear(n_in, n_out, scale)
