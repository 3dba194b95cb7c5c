"""How MXNet's oneDNN int8 kernels sum products, for the fused ``_sg_mkldnn_*`` ops: exactly
(as on a CPU with VNNI, the default), or as on a CPU without it (AVX2), where MXNet's
results differ and which ``MXNEXT_ONEDNN_ISA=avx2`` reproduces bit for bit."""

from __future__ import annotations

import os

import numpy as np

from ._exact_gemm import exact_matmul, magnitude


def avx2_int8() -> bool:
    """``MXNEXT_ONEDNN_ISA=avx2``: the fused oneDNN ops compute as MXNet's oneDNN does on a
    CPU without VNNI (int8 data: weights quantized at half scale; uint8 data: products
    summed in pairs saturated to int16), instead of exactly (as on a VNNI CPU)."""
    return os.environ.get("MXNEXT_ONEDNN_ISA", "").lower() == "avx2"


def paired_matmul(a, b, channels):
    """``a @ b`` (int64) as AVX2's ``vpmaddubsw`` adds uint8 x int8 products: the reduction
    axis, ``channels`` innermost (one kernel tap's input channels), padded with zeros to an
    even count, summed two neighbouring channels at a time saturated to int16."""
    m, n = a.shape[0], b.shape[1]
    taps = a.shape[1] // channels
    even = channels + channels % 2
    x = np.zeros((m, taps, even), np.int32)
    x[:, :, :channels] = a.reshape(m, taps, channels)
    w = np.zeros((taps, even, n), np.int32)
    w[:, :channels] = b.reshape(taps, channels, n)
    x, w = x.reshape(m, -1, 2), w.reshape(-1, 2, n)
    out = np.zeros((m, n), np.int64)
    for j in range(x.shape[1]):
        pair = np.outer(x[:, j, 0], w[j, 0]) + np.outer(x[:, j, 1], w[j, 1])
        out += np.clip(pair, -32768, 32767)
    return out


def weight_adjust(data_dtype) -> np.float32:
    """oneDNN without VNNI quantizes weights at half scale for int8 data (shifted to uint8
    by 128, so that pairs cannot saturate), and halves the bias to match."""
    return np.float32(0.5) if avx2_int8() and np.dtype(data_dtype) == np.int8 else \
        np.float32(1)


def int8_products(a, b, data_dtype, channels):
    """``a @ b`` (int64) of int8/uint8 data rows ``a`` (as float32) and int8 weights ``b``
    (float32, ``channels`` the innermost run of the reduction axis)."""
    if avx2_int8():
        if np.dtype(data_dtype) == np.uint8:
            return paired_matmul(a, b, channels)
        # int8 data is shifted to uint8 and the shift's products taken back out
        shift = 128 * b.astype(np.int64).sum(0)
        return paired_matmul(a + np.float32(128), b, channels) - shift
    return exact_matmul(a, b, magnitude(data_dtype) * magnitude(np.int8))
