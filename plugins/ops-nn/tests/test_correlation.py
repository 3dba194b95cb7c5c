"""Correlation against a per-position loop (multiply and absolute difference), gradients,
hidden outputs, inference and errors."""

import numpy as np
import pytest
from opsdk import ParamError, ShapeError
from opsdk.testing import check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(0)


def corr_ref(a, b, k, md, s1, s2, pad, mul):
    n, c, h, w = a.shape
    pa, pb = (np.pad(v, [(0, 0), (0, 0), (pad, pad), (pad, pad)]) for v in (a, b))
    border = md + (k - 1) // 2
    th, tw = -(-(h + 2 * pad - 2 * border) // s1), -(-(w + 2 * pad - 2 * border) // s1)
    r = md // s2
    g = 2 * r + 1
    out = np.zeros((n, g * g, th, tw))
    for t, i, j in np.ndindex(g * g, th, tw):
        y1, x1 = i * s1 + md, j * s1 + md
        y2, x2 = y1 + (t // g - r) * s2, x1 + (t % g - r) * s2
        p1, p2 = pa[:, :, y1:y1 + k, x1:x1 + k], pb[:, :, y2:y2 + k, x2:x2 + k]
        out[:, t, i, j] = (p1 * p2 if mul else abs(p1 - p2)).sum(axis=(1, 2, 3)) / (k * k * c)
    return out


@pytest.mark.parametrize("k,md,s1,s2,pad,mul", [
    (1, 1, 1, 1, 1, True), (3, 2, 2, 1, 3, True), (3, 2, 1, 2, 1, False), (1, 3, 3, 3, 3, True)])
def test_correlation_matches_loop(k, md, s1, s2, pad, mul):
    a, b = RNG.standard_normal((2, 2, 6, 5)), RNG.standard_normal((2, 2, 6, 5))
    kw = {"kernel_size": k, "max_displacement": md, "stride1": s1, "stride2": s2,
          "pad_size": pad, "is_multiply": mul}
    check_forward("Correlation", [a, b], corr_ref(a, b, k, md, s1, s2, pad, mul), kw,
                  rtol=1e-10)
    check_numeric_gradient("Correlation", [a, b], kw, rtol=1e-5, atol=1e-8)


def test_hidden_outputs_are_padded_channels_last():
    a, b = RNG.standard_normal((1, 3, 4, 4)), RNG.standard_normal((1, 3, 4, 4))
    _, t1, t2 = run_op("Correlation", [a, b], {"pad_size": 2})
    assert t1.shape == (1, 8, 8, 3)
    np.testing.assert_array_equal(t2[0, 2:6, 2:6], b[0].transpose(1, 2, 0))
    assert not t1[0, :2].any()


def test_errors_name_op_and_argument():
    with pytest.raises(ShapeError, match="Correlation.*too small.*max_displacement=3"):
        run_op("Correlation", [np.zeros((1, 1, 4, 4))] * 2, {"max_displacement": 3})
    with pytest.raises(ShapeError, match="Correlation.*'data2'"):
        run_op("Correlation", [np.zeros((1, 1, 4, 4)), np.zeros((1, 1, 5, 4))])
    with pytest.raises(ParamError, match="kernel_size must be odd"):
        run_op("Correlation", [np.zeros((1, 1, 4, 4))] * 2, {"kernel_size": 2})
