"""The int8 products on float32 BLAS (``_exact_gemm``): reductions long enough to need
several exact chunks, through the helper and through quantized FC / conv, against int64
references."""

import numpy as np
import pytest

from mxnext_ops_tensor._exact_gemm import exact_matmul, magnitude
from opsdk.testing import run_op

F32 = np.float32
RANGES = [np.array([v], F32) for v in (-1, 1, -1, 1, -1, 1)]


@pytest.mark.parametrize("dtype, k", [(np.int8, 3001), (np.uint8, 1501), (np.int8, 7)])
def test_exact_matmul_matches_int64(dtype, k):
    rng = np.random.default_rng(k)
    info = np.iinfo(dtype)
    a = rng.integers(info.min, int(info.max) + 1, (5, k)).astype(dtype)
    a[0] = info.min if dtype == np.int8 else info.max        # the largest products
    a[1] = 127 if dtype == np.int8 else 255
    b = rng.integers(-128, 128, (k, 4)).astype(np.int8)
    b[:, 0], b[:, 1] = -128, 127            # [1, 1]: k odd products, an odd sum
    want = a.astype(np.int64) @ b.astype(np.int64)
    got = exact_matmul(a.astype(F32), b.astype(F32), magnitude(dtype) * magnitude(np.int8))
    assert got.dtype == np.int64
    np.testing.assert_array_equal(got, want)
    if k > 1000:    # an odd sum beyond 2^24: one float32 GEMM could not hold it
        assert want[1, 1] % 2 == 1 and want[1, 1] > 2 ** 24


def _conv_reference(x, w, stride, dilate, pad):
    """Loops over kernel taps in int64, N-d."""
    nd = w.ndim - 2
    xp = np.pad(x.astype(np.int64), [(0, 0), (0, 0)] + [(p, p) for p in pad])
    out = [(xp.shape[2 + i] - dilate[i] * (w.shape[2 + i] - 1) - 1) // stride[i] + 1
           for i in range(nd)]
    acc = np.zeros((x.shape[0], w.shape[0], *out), np.int64)
    for tap in np.ndindex(*w.shape[2:]):
        sl = tuple(slice(t * d, t * d + (o - 1) * s + 1, s)
                   for t, d, o, s in zip(tap, dilate, out, stride))
        acc += np.einsum("nc...,fc->nf...", xp[(slice(None), slice(None)) + sl],
                         w[(slice(None), slice(None)) + tap].astype(np.int64))
    return acc


@pytest.mark.parametrize("dtype, shape, kernel, stride, dilate, pad", [
    (np.uint8, (2, 70, 7, 6), (3, 3), (2, 1), (1, 2), (1, 2)),      # K = 630: two chunks
    (np.int8, (1, 130, 5, 5), (3, 3), (1, 1), (1, 1), (1, 1)),      # K = 1170: two chunks
    (np.uint8, (1, 9, 4, 5, 3), (2, 3, 2), (1, 2, 1), (1, 1, 1), (0, 1, 1)),
])
def test_quantized_conv_long_reduction(dtype, shape, kernel, stride, dilate, pad):
    rng = np.random.default_rng(sum(shape))
    info = np.iinfo(dtype)
    x = rng.integers(info.min, int(info.max) + 1, shape).astype(dtype)
    w = rng.integers(-128, 128, (4, shape[1], *kernel)).astype(np.int8)
    out = run_op("_contrib_quantized_conv", [x, w, *RANGES[:4]],
                 {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad,
                  "num_filter": 4, "no_bias": True})[0]
    want = _conv_reference(x, w, stride, dilate, pad)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, want)


def test_quantized_fully_connected_long_reduction_not_flattened():
    rng = np.random.default_rng(3)
    x = rng.integers(0, 256, (2, 3, 2100)).astype(np.uint8)        # K = 2100: five chunks
    w = rng.integers(-128, 128, (6, 2100)).astype(np.int8)
    out = run_op("_contrib_quantized_fully_connected", [x, w, *RANGES[:4]],
                 {"num_hidden": 6, "no_bias": True, "flatten": False})[0]
    np.testing.assert_array_equal(out, x.astype(np.int64) @ w.astype(np.int64).T)
