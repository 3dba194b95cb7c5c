"""Optimizers with per-coordinate step sizes: Adam, AdaGrad, RMSProp, AdaDelta, Ftrl, FTML,
Adamax, Nadam, LAMB.

Where MXNet calls a fused op (``adam_update``, ``rmsprop_update``, ``rmspropalex_update``,
``ftml_update``, ``ftrl_update``) so does this; where MXNet's Python computes with NDArray
arithmetic (AdaGrad dense, AdaDelta, Adamax, Nadam) so does this, in the same order.
"""

import math
import os

import numpy

from .. import ndarray as nd
from . import _fused
from ._sgd import _check_arrays
from .optimizer import FusedUpdate, Optimizer, register

__all__ = ["Adam", "AdaGrad", "RMSProp", "AdaDelta", "Ftrl", "FTML", "Adamax", "Nadam", "LAMB"]


def _zeros_like(weight, n, dtype=None, stype="default"):
    """``n`` zero arrays shaped as ``weight`` (its dtype unless given), as a tuple."""
    return tuple(nd.zeros(weight.shape, weight.context, dtype=dtype or weight.dtype,
                          stype=stype) for _ in range(n))


def _sparse_kwargs(opt):
    """epsilon, rescale_grad and clip_gradient of an AdaGrad for its sparse update op."""
    kwargs = {"epsilon": opt.float_stable_eps, "rescale_grad": opt.rescale_grad}
    if opt.clip_gradient:
        kwargs["clip_gradient"] = opt.clip_gradient
    return kwargs


def _clipped(grad, bound):
    return grad if bound is None else nd.clip(grad, -bound, bound)


@register
class Adam(Optimizer):
    """Adam (https://arxiv.org/abs/1412.6980), bias correction folded into the rate::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;  v = beta2 * v + (1 - beta2) * g**2
        weight -= lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m / (sqrt(v) + epsilon)
    """

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        stype = weight.stype if self.lazy_update else "default"
        return _zeros_like(weight, 2, stype=stype)  # mean, variance

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        lr *= math.sqrt(1. - self.beta2 ** t) / (1. - self.beta1 ** t)
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        mean, var = state
        nd.adam_update(weight, grad, mean, var, out=weight, lazy_update=self.lazy_update,
                       lr=lr, wd=wd, **kwargs)


@register
class AdaGrad(Optimizer):
    """AdaGrad::

        g = clip(rescale_grad * grad, clip_gradient);  history += g**2
        weight -= lr * (g / sqrt(history + eps) + wd * weight)

    The history is float32 whatever the weight's dtype, as MXNet's. A row_sparse gradient
    updates only its rows (``_sparse_adagrad_update``, which refuses a nonzero ``wd``).
    """

    def __init__(self, eps=1e-7, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return nd.zeros(weight.shape, weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if grad.stype == "row_sparse":
            nd.sparse.adagrad_update(weight, grad, state, out=weight, lr=lr, wd=wd,
                                     **_sparse_kwargs(self))
            return
        grad = _clipped(grad * self.rescale_grad, self.clip_gradient)
        state[:] += nd.square(grad)
        div = grad / nd.sqrt(state + self.float_stable_eps)
        weight[:] += (div + weight * wd) * -lr


@register
class RMSProp(Optimizer):
    """RMSProp: Tieleman & Hinton's (``rmsprop_update``), or Graves's with ``centered=True``
    (``rmspropalex_update``, ``gamma2`` its momentum). ``clip_weights`` bounds the weights.
    States are float32, as MXNet's."""

    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9, epsilon=1e-8,
                 centered=False, clip_weights=None, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        return _zeros_like(weight, 3 if self.centered else 1, "float32")  # n (, g, delta)

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        kwargs = {"gamma1": self.gamma1, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad, "lr": self._get_lr(index),
                  "wd": self._get_wd(index)}
        if self.centered:
            kwargs["gamma2"] = self.gamma2
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.clip_weights:
            kwargs["clip_weights"] = self.clip_weights
        if self.centered:
            nd.rmspropalex_update(weight, grad, *state, out=weight, **kwargs)
        else:
            nd.rmsprop_update(weight, grad, state[0], out=weight, **kwargs)


@register
class AdaDelta(Optimizer):
    """AdaDelta (https://arxiv.org/abs/1212.5701); the rate is not used::

        g = clip(rescale_grad * grad, clip_gradient)
        acc_g = rho * acc_g + (1 - rho) * g**2
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_g + epsilon) * g
        acc_delta = rho * acc_delta + (1 - rho) * delta**2
        weight -= delta + wd * weight

    As MXNet's, it rescales the caller's ``grad`` array in place.
    """

    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zeros_like(weight, 2, "float32")  # accumulated g, accumulated delta

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        wd = self._get_wd(index)
        self._update_count(index)
        grad *= self.rescale_grad
        grad = _clipped(grad, self.clip_gradient)
        acc_g, acc_delta = state
        acc_g[:] *= self.rho
        acc_g[:] += (1. - self.rho) * grad * grad
        delta = nd.sqrt(acc_delta + self.epsilon) / nd.sqrt(acc_g + self.epsilon) * grad
        acc_delta[:] *= self.rho
        acc_delta[:] += (1. - self.rho) * delta * delta
        weight[:] -= delta + wd * weight


@register
class Ftrl(Optimizer):
    """FTRL-proximal (McMahan et al., "Ad Click Prediction"), MXNet's ``ftrl_update``::

        g = clip(rescale_grad * grad, clip_gradient)
        z += g - (sqrt(n + g**2) - sqrt(n)) * weight / lr;  n += g**2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)
    """

    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super().__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return _zeros_like(weight, 2, "float32", weight.stype)  # z, n

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        kwargs = {"lamda1": self.lamda1, "beta": self.beta, "rescale_grad": self.rescale_grad,
                  "lr": self._get_lr(index), "wd": self._get_wd(index)}
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        z, n = state
        nd.ftrl_update(weight, grad, z, n, out=weight, **kwargs)


@register
class FTML(Optimizer):
    """Follow the Moving Leader (Zheng & Kwok, ICML 2017), MXNet's ``ftml_update`` with
    states (d, v, z)."""

    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super().__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return _zeros_like(weight, 3)  # d, v, z

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        kwargs = {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                  "rescale_grad": self.rescale_grad, "t": self._index_update_count[index],
                  "lr": self._get_lr(index), "wd": self._get_wd(index)}
        if self.clip_gradient:
            kwargs["clip_grad"] = self.clip_gradient
        nd.ftml_update(weight, grad, *state, out=weight, **kwargs)


@register
class Adamax(Optimizer):
    """AdaMax, Adam under the infinity norm::

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * g;  u = maximum(beta2 * u, |g|)
        weight -= lr / (1 - beta1**t) * m / u
    """

    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)  # m, u

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        lr /= 1. - self.beta1 ** self._index_update_count[index]
        grad = _clipped(grad * self.rescale_grad + wd * weight, self.clip_gradient)
        m, u = state
        m[:] *= self.beta1
        m[:] += (1. - self.beta1) * grad
        u[:] = nd.maximum(self.beta2 * u, nd.abs(grad))
        weight[:] -= lr * m / u


@register
class Nadam(Optimizer):
    """Adam with Nesterov momentum (Dozat), whose momentum follows the schedule
    ``beta1 * (1 - 0.5 * 0.96 ** (t * schedule_decay))``. The schedule's running product is
    kept on the optimizer (not per weight), as MXNet's."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)  # m, v

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        t = self._index_update_count[index]
        grad = _clipped(grad * self.rescale_grad + wd * weight, self.clip_gradient)
        mom_t = self.beta1 * (1. - 0.5 * 0.96 ** (t * self.schedule_decay))
        mom_next = self.beta1 * (1. - 0.5 * 0.96 ** ((t + 1) * self.schedule_decay))
        self.m_schedule = self.m_schedule * mom_t
        m_schedule_next = self.m_schedule * mom_next
        m, v = state
        m[:] *= self.beta1
        m[:] += (1. - self.beta1) * grad
        v[:] *= self.beta2
        v[:] += (1. - self.beta2) * grad * grad
        grad_prime = grad / (1. - self.m_schedule)
        m_prime = m / (1. - m_schedule_next)
        v_prime = v / (1. - self.beta2 ** t)
        m_bar = (1. - mom_t) * grad_prime + mom_next * m_prime
        weight[:] -= lr * m_bar / (nd.sqrt(v_prime) + self.epsilon)


@register
class LAMB(FusedUpdate, Optimizer):
    """LAMB (https://arxiv.org/abs/1904.00962): an Adam step plus ``wd * weight``, scaled
    per weight by the trust ratio ``|w| / |step|`` (``|w|`` bounded by ``lower_bound`` /
    ``upper_bound``). Lists of indices are updated one weight after another (MXNet fuses
    them in ``multi_lamb_update``; the results are the same)."""

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        size = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "45"))
        self.aggregate_num = max(1, min(45, size))

    def create_state(self, index, weight):
        return _zeros_like(weight, 2)  # mean, var

    def _update_impl(self, index, weight, grad, state, multi_precision):
        if isinstance(index, (tuple, list)):
            for args in zip(index, weight, grad, state):
                self._update_impl(*args, multi_precision=multi_precision)
            return
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if multi_precision:
            target, (mean, var) = state[0], state[1]
            grad = grad.astype(numpy.float32)
        else:
            target, (mean, var) = weight, state
        g = _fused.lamb_update_phase1(
            target, grad, mean, var, beta1=self.beta1, beta2=self.beta2, epsilon=self.epsilon,
            t=self._index_update_count[index], bias_correction=self.bias_correction, wd=wd,
            rescale_grad=self.rescale_grad,
            clip_gradient=self.clip_gradient if self.clip_gradient else -1.0)
        bounds = {k: v for k, v in (("lower_bound", self.lower_bound),
                                    ("upper_bound", self.upper_bound)) if v}
        _fused.lamb_update_phase2(target, g, target.norm(), g.norm(), lr=lr, **bounds)
        if multi_precision:
            nd.cast(target, dtype=weight.dtype, out=weight)
