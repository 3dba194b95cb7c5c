"""SGD and its relatives: SGD (ccSGD), NAG, Signum, LARS.

SGD, NAG and LARS keep their multi-precision state as ``(momentum or None, float32 master
copy)``, the reverse of the base class's order, as MXNet does.
"""

import os

import numpy

from .. import ndarray as nd
from . import _fused
from .optimizer import FusedUpdate, Optimizer, _warn_fp16, register

__all__ = ["SGD", "ccSGD", "NAG", "Signum", "LARS"]


def _as_lists(indices, *groups):
    if isinstance(indices, (tuple, list)):
        return (list(indices),) + tuple(list(g) for g in groups)
    return ([indices],) + tuple([g] for g in groups)


def _check_arrays(weights, grads):
    for w, g in zip(weights, grads):
        if not isinstance(w, nd.NDArray) or not isinstance(g, nd.NDArray):
            raise TypeError(f"optimizer update: weight and grad expected NDArray, got "
                            f"{type(w).__name__} and {type(g).__name__}")


class _Momentum(FusedUpdate, Optimizer):
    """Shared by SGD, NAG and LARS: a momentum buffer when ``momentum`` is not 0, and the
    ``(momentum, master copy)`` multi-precision state."""

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        stype = weight.stype if getattr(self, "lazy_update", False) else "default"
        return nd.zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)

    def create_state_multi_precision(self, index, weight):
        if weight.dtype == numpy.float16:
            if self.multi_precision:
                master = weight.astype(numpy.float32)
                return (self.create_state(index, master), master)
            _warn_fp16(type(self).__name__)
        return self.create_state(index, weight)

    def _kwargs(self, momentum):
        kwargs = {"rescale_grad": self.rescale_grad}
        if momentum > 0:
            kwargs["momentum"] = momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        return kwargs


@register
class SGD(_Momentum):
    """Stochastic gradient descent with momentum and weight decay::

        state = momentum * state - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
        weight = weight + state

    (without momentum, ``weight -= lr * (...)``). With a row_sparse gradient and
    ``lazy_update`` only the gradient's rows change (weight decay included) and the
    momentum takes the weight's storage type. Lists of dense indices are updated together
    with ``multi_sgd(_mom)_update``; the Updater sends at most
    ``MXNET_OPTIMIZER_AGGREGATION_SIZE`` (default 4) at a time.
    """

    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        _check_arrays(weights, grads)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        kwargs = self._kwargs(self.momentum)
        if not multi_precision and len(weights) > 1 and _all_dense(weights, grads):
            flat = [a for group in zip(weights, grads, states) for a in group
                    if self.momentum > 0 or a is not None]
            op = nd.multi_sgd_mom_update if self.momentum > 0 else nd.multi_sgd_update
            op(*flat, out=weights, num_weights=len(weights), lrs=tuple(lrs), wds=tuple(wds),
               **kwargs)   # tuples: hashable, so the op's plan is cached
            return
        for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
            _sgd_step(weight, grad, state, multi_precision, lr=lr, wd=wd,
                      lazy_update=self.lazy_update, **kwargs)


def _all_dense(*groups):
    for group in groups:
        for a in group:
            if a.stype != "default":
                return False
    return True


def _sgd_step(weight, grad, state, multi_precision, lazy_update, **kwargs):
    if not multi_precision:
        if state is not None:
            nd.sgd_mom_update(weight, grad, state, out=weight, lazy_update=lazy_update, **kwargs)
        else:
            nd.sgd_update(weight, grad, out=weight, lazy_update=lazy_update, **kwargs)
    elif state[0] is not None:
        _fused.mp_sgd_mom_update(weight, grad, state[0], state[1], **kwargs)
    else:
        _fused.mp_sgd_update(weight, grad, state[1], **kwargs)


@register
class ccSGD(SGD):  # noqa: N801 (MXNet's name)
    """Deprecated in MXNet: the same as SGD."""


@register
class NAG(_Momentum):
    """Nesterov accelerated gradient (MXNet's ``nag_mom_update``)::

        step = lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
        state = momentum * state - step
        weight = weight + momentum * state - step
    """

    def __init__(self, momentum=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum

    def update_multi_precision(self, index, weight, grad, state):
        mp = (self.multi_precision and weight.dtype == numpy.float16
              and isinstance(state, (tuple, list)))
        self._update_impl(index, weight, grad, state, multi_precision=mp)

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        _check_arrays([weight], [grad])
        self._update_count(index)
        kwargs = dict(self._kwargs(self.momentum), lr=self._get_lr(index),
                      wd=self._get_wd(index))
        if not multi_precision:
            if state is not None:
                nd.nag_mom_update(weight, grad, state, out=weight, **kwargs)
            else:
                nd.sgd_update(weight, grad, out=weight, **kwargs)
        elif state[0] is not None:
            _fused.mp_nag_mom_update(weight, grad, state[0], state[1], **kwargs)
        else:
            _fused.mp_sgd_update(weight, grad, state[1], **kwargs)


@register
class Signum(Optimizer):
    """signSGD with momentum (MXNet's ``signum_update``; ``signsgd_update`` when
    ``momentum`` is 0)::

        state = momentum * state - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)
    """

    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super().__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        kwargs = {"rescale_grad": self.rescale_grad, "lr": self._get_lr(index),
                  "wd": self._get_wd(index)}
        if self.momentum > 0:
            kwargs["momentum"] = self.momentum
        if self.clip_gradient:
            kwargs["clip_gradient"] = self.clip_gradient
        if self.wd_lh:
            kwargs["wd_lh"] = self.wd_lh
        if state is not None:
            nd.signum_update(weight, grad, state, out=weight, **kwargs)
        else:
            nd.signsgd_update(weight, grad, out=weight, **kwargs)


def _is_unscaled(name):
    return name.endswith("gamma") or name.endswith("beta") or name.endswith("bias")


@register
class LARS(_Momentum):
    """SGD with layer-wise adaptive rates (LARS, https://arxiv.org/abs/1708.03888): each
    weight's rate is multiplied by ``eta * |w| / (|g| + wd * |w| + eps)`` (``|g|`` of the
    rescaled gradient; by 1 when a norm is 0), except biases, gammas and betas.
    ``momentum_correction`` scales the momentum by the ratio of this step's rate to the last
    one's. Weight decay applies to ``*_weight`` parameters only.
    """

    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super().__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    def set_wd_mult(self, args_wd_mult):
        self.wd_mult = {n: 0.0 for n in self.idx2name.values() if not n.endswith("_weight")}
        self.wd_mult.update(self._sym_mults("__wd_mult__"))
        self.wd_mult.update(args_wd_mult)

    def _get_lrs(self, indices):
        lr = self.learning_rate
        self.last_lr = lr if self.cur_lr is None else self.cur_lr
        self.cur_lr = lr
        return super()._get_lrs(indices)

    def _l2norm(self, v, rescale=False):
        v = v.astype("float32")
        if rescale:
            v = v * self.rescale_grad
        return float(nd.norm(v).asscalar())

    def _get_lars(self, index, weight, grad, lr, wd):
        if _is_unscaled(self.idx2name.get(index, str(index))):
            return lr
        w_norm = self._l2norm(weight)
        g_norm = self._l2norm(grad, rescale=True)
        if w_norm > 0.0 and g_norm > 0.0:
            return lr * self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        return lr

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        indices, weights, grads, states = _as_lists(indices, weights, grads, states)
        _check_arrays(weights, grads)
        self._update_count(indices)
        lrs, wds = self._get_lrs(indices), self._get_wds(indices)
        momentum = self.momentum
        if momentum > 0 and self.momentum_correction and self.last_lr != 0:
            momentum = momentum * self.cur_lr / self.last_lr
        kwargs = self._kwargs(momentum)
        for index, weight, grad, state, lr, wd in zip(indices, weights, grads, states, lrs, wds):
            lr = self._get_lars(index, weight, grad, lr, wd)
            _sgd_step(weight, grad, state, multi_precision, lr=lr, wd=wd,
                      lazy_update=self.lazy_update, **kwargs)
