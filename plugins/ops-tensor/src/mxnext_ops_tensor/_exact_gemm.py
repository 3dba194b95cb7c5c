"""Exact integer matrix products on float32 BLAS, for the int8 ops.

A float32 sum of integer terms is exact while every partial sum stays within 2^24 in
magnitude, whatever order BLAS adds them in. So the reduction axis is cut into chunks of at
most ``2^24 // bound`` terms (``bound`` the largest product magnitude: 16384 for int8 x int8,
32640 for uint8 x int8), each chunk is one float32 GEMM, and the chunks' exact results are
summed in float64 (exact far beyond any int8 reduction)."""

from __future__ import annotations

import numpy as np

_EXACT = 2 ** 24                        # float32 holds every integer up to here


def magnitude(dtype) -> int:
    """The largest |value| of an integer dtype (int8: 128, uint8: 255)."""
    info = np.iinfo(dtype)
    return max(-int(info.min), int(info.max))


def exact_matmul(a, b, bound):
    """``a @ b`` as int64 for integer-valued float32 ``a`` (M, K) and ``b`` (K, N) whose
    single products are at most ``bound`` in magnitude."""
    k = a.shape[1]
    parts = -(-k // (_EXACT // bound))              # ceil: chunks needed
    if parts <= 1:
        return (a @ b).astype(np.int64)
    step = -(-k // parts)                           # balanced chunk length
    out = np.zeros((a.shape[0], b.shape[1]), np.float64)
    for s in range(0, k, step):
        out += a[:, s:s + step] @ b[s:s + step]
    return out.astype(np.int64)
