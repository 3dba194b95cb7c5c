"""A convolution whose kernel taps mostly read only padding (a 3x3 kernel over a 1x1 image)
is computed on the taps that read data: the output and the gradients equal those of the same
convolution on the data padded by hand (pad 0, no cut)."""

from __future__ import annotations

import mxnext as mx
import numpy as np
import pytest


@pytest.mark.parametrize("shape, kernel, stride, pad, dilate", [
    ((2, 4, 1, 1), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 4, 2, 2), (3, 3), (2, 2), (1, 1), (1, 1)),       # 4 of 9 taps: not cut
    ((2, 3, 1, 1), (5, 3), (1, 1), (2, 1), (1, 1)),
    ((1, 2, 2, 2), (5, 5), (1, 1), (2, 2), (1, 1)),       # 9 of 25: not cut
    ((2, 3, 1), (5,), (1,), (4,), (2,)),                  # dilated: only the middle tap
])
def test_equals_the_convolution_on_padded_data(shape, kernel, stride, pad, dilate):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    w = rng.standard_normal((5, shape[1]) + kernel).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    og = None
    grads = []
    for data, p in ((x, pad), (np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in pad]),
                               (0,) * len(pad))):
        a, wa, ba = mx.nd.array(data), mx.nd.array(w), mx.nd.array(b)
        for v in (a, wa, ba):
            v.attach_grad()
        with mx.autograd.record():
            y = mx.nd.Convolution(a, wa, ba, kernel=kernel, stride=stride, pad=p,
                                  dilate=dilate, num_filter=5)
        if og is None:
            og = rng.standard_normal(y.shape).astype(np.float32)
        y.backward(mx.nd.array(og))
        grads.append((y.asnumpy(), a.grad.asnumpy(), wa.grad.asnumpy(), ba.grad.asnumpy()))
    (y1, dx1, dw1, db1), (y2, dx2, dw2, db2) = grads
    inner = (slice(None), slice(None)) + tuple(slice(q, q + n) for q, n in zip(pad, shape[2:]))
    np.testing.assert_allclose(y1, y2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dx1, dx2[inner], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(dw1, dw2, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(db1, db2, rtol=1e-5, atol=1e-5)


def test_used_taps():
    from opsdk.shape import used_taps
    assert used_taps((1,), (5,), (1,), (2,), (4,)) == ((2, 3, 0, 0),)
    assert used_taps((1, 1), (3, 3), (1, 1), (1, 1), (1, 1)) == ((1, 2, 0, 0), (1, 2, 0, 0))
    assert used_taps((2, 2), (3, 3), (2, 2), (1, 1), (1, 1)) is None        # 4 of 9 kept
    assert used_taps((2, 2), (3, 3), (2, 2), (1, 1), (1, 1), 0.5) == ((1, 3, 0, 0),) * 2
    assert used_taps((4, 4), (3, 3), (1, 1), (1, 1), (1, 1)) is None
