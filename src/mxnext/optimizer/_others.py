"""DCASGD, SGLD and the Test optimizer: MXNet's NDArray-arithmetic optimizers."""

import math

from .. import ndarray as nd
from .. import random
from ._adaptive import _clipped
from ._sgd import _check_arrays
from .optimizer import Optimizer, register

__all__ = ["DCASGD", "SGLD", "Test"]


@register
class DCASGD(Optimizer):
    """Asynchronous SGD with delay compensation (https://arxiv.org/abs/1609.08326)::

        step = -lr * (g + wd * weight + lamda * g * g * (weight - previous_weight))
        mom = momentum * mom + step  (step alone without momentum);  weight += mom

    with ``g = clip(rescale_grad * grad, clip_gradient)``; the state is
    ``(momentum or None, previous weight)``.
    """

    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        mom = None if self.momentum == 0.0 else nd.zeros(weight.shape, weight.context,
                                                           dtype=weight.dtype)
        return (mom, weight.copy())

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = _clipped(grad * self.rescale_grad, self.clip_gradient)
        mom, previous = state
        step = -lr * (grad + wd * weight + self.lamda * grad * grad * (weight - previous))
        if mom is not None:
            mom[:] *= self.momentum
            mom[:] += step
        else:
            mom = step
        previous[:] = weight
        weight[:] += mom


@register
class SGLD(Optimizer):
    """Stochastic gradient Langevin dynamics: half an SGD step plus Gaussian noise of
    variance ``lr`` drawn from ``mx.random`` (seeded by ``mx.random.seed``)::

        weight += -lr / 2 * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
                  + normal(0, sqrt(lr))
    """

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        grad = _clipped(grad * self.rescale_grad, self.clip_gradient)
        weight[:] += -lr / 2 * (grad + wd * weight)
        weight[:] += random.normal(0, math.sqrt(lr), shape=weight.shape, dtype=weight.dtype,
                                   ctx=weight.context)


@register
class Test(Optimizer):
    """For tests: ``weight += rescale_grad * grad``; the state is a copy of the weight."""

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        weight[:] += grad * self.rescale_grad
        state[:] = weight
