"""mx.contrib.autograd: MXNet's early autograd API over mx.autograd's tape."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.contrib import autograd as cag


def test_sections_switch_recording_and_training_together():
    assert not mx.autograd.is_recording()
    with cag.train_section():
        assert mx.autograd.is_recording() and mx.autograd.is_training()
        with cag.test_section():
            assert not mx.autograd.is_recording() and not mx.autograd.is_training()
        assert mx.autograd.is_recording() and mx.autograd.is_training()
    assert not mx.autograd.is_recording() and not mx.autograd.is_training()


def test_grad_and_loss_with_argnum():
    a = mx.nd.array([[1.0, 2.0], [3.0, 4.0]])
    b = mx.nd.array([[5.0, 6.0], [7.0, 8.0]])
    grads, out = cag.grad_and_loss(lambda x, y, k: x * y * k, argnum=[0, 1])(a, b, 3)
    np.testing.assert_allclose(out.asnumpy(), a.asnumpy() * b.asnumpy() * 3)
    np.testing.assert_allclose(grads[0].asnumpy(), b.asnumpy() * 3)
    np.testing.assert_allclose(grads[1].asnumpy(), a.asnumpy() * 3)
    (g,) = cag.grad(lambda x: x * x, argnum=0)(a)
    np.testing.assert_allclose(g.asnumpy(), 2 * a.asnumpy())


def test_backward_takes_none_for_a_head_gradient_of_ones():
    x = mx.nd.ones((2, 3))
    dx = mx.nd.zeros_like(x)
    cag.mark_variables([x], [dx])
    with cag.train_section():
        a, b = mx.nd.split(x, axis=0, num_outputs=2, squeeze_axis=True)
        cag.backward([a, b], [None, mx.nd.array([1.0, 2.0, 3.0])])
    np.testing.assert_allclose(dx.asnumpy(), [[1, 1, 1], [1, 2, 3]])


def test_errors_name_the_argument():
    with pytest.raises(TypeError, match="argument 0 .* NDArray, got list"):
        cag.grad_and_loss(lambda x: x)([1.0])
    with pytest.raises(TypeError, match="outputs must be a list"):
        cag.backward(mx.nd.ones((1,)))
