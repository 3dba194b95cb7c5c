"""gluon.contrib.nn.PixelShuffle1D/2D/3D move channel blocks into space, imperative and
hybridized alike, and gradients flow back through the rearrangement."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd
from mxnext.gluon.contrib.nn import PixelShuffle1D, PixelShuffle2D, PixelShuffle3D


@pytest.mark.parametrize("hybridize", [False, True])
def test_pixel_shuffle_2d_puts_each_factor_block_of_channels_into_a_pixel_block(hybridize):
    x = np.arange(2 * 12 * 3 * 5, dtype=np.float32).reshape(2, 12, 3, 5)
    block = PixelShuffle2D((2, 3))
    if hybridize:
        block.hybridize()
    y = block(mx.nd.array(x)).asnumpy()
    # output (n, c, h*2+i, w*3+j) is input channel c*6 + i*3 + j at (h, w)
    assert y.shape == (2, 2, 6, 15)
    assert y[1, 1, 2 * 2 + 1, 4 * 3 + 2] == x[1, 1 * 6 + 1 * 3 + 2, 2, 4]


def test_pixel_shuffle_1d_and_3d_shapes_and_values():
    x = np.arange(12, dtype=np.float32).reshape(1, 6, 2)
    assert PixelShuffle1D(3)(mx.nd.array(x)).asnumpy().tolist() == [[[0, 2, 4, 1, 3, 5],
                                                                      [6, 8, 10, 7, 9, 11]]]
    x3 = np.random.default_rng(0).random((1, 8, 2, 3, 4)).astype(np.float32)
    y3 = PixelShuffle3D(2)(mx.nd.array(x3)).asnumpy()
    assert y3.shape == (1, 1, 4, 6, 8) and y3[0, 0, 3, 4, 7] == x3[0, 5, 1, 2, 3]


def test_pixel_shuffle_gradient_is_the_inverse_rearrangement():
    x = mx.nd.array(np.arange(16, dtype=np.float32).reshape(1, 4, 2, 2))
    x.attach_grad()
    w = mx.nd.array(np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4))
    with autograd.record():
        y = (PixelShuffle2D(2)(x) * w).sum()
    y.backward()
    assert np.array_equal(PixelShuffle2D(2)(x.grad).asnumpy(), w.asnumpy())


def test_a_bad_factor_is_named():
    with pytest.raises(ValueError, match=r"PixelShuffle2D: factor: .* got \(2, 0\)"):
        PixelShuffle2D((2, 0))
