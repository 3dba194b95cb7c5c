"""MXNet's ``mx.optimizer.contrib``: GroupAdaGrad."""

from .. import ndarray as nd
from ._adaptive import _clipped, _sparse_kwargs
from ._sgd import _check_arrays
from .optimizer import Optimizer, register

__all__ = ["GroupAdaGrad"]


@register
class GroupAdaGrad(Optimizer):
    """AdaGrad with one history value per row of a 2-d weight::

        g = clip(rescale_grad * grad, clip_gradient)
        history += mean(g**2, axis=1, keepdims=True)
        weight -= lr * g / sqrt(history + eps)

    Weight decay is not supported (a nonzero ``wd`` for the weight raises ValueError).
    """

    def __init__(self, eps=1e-5, **kwargs):
        super().__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        if len(weight.shape) != 2:
            raise ValueError(f"GroupAdaGrad: weight expected 2 dimensions, got shape "
                             f"{weight.shape}")
        return nd.zeros((weight.shape[0], 1), weight.context, stype=weight.stype)

    def update(self, index, weight, grad, state):
        _check_arrays([weight], [grad])
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        if wd != 0:
            raise ValueError(f"GroupAdaGrad: weight decay is not supported, got wd={wd} for "
                             f"index {index!r}")
        if grad.stype == "row_sparse":          # only the gradient's rows
            nd.contrib.group_adagrad_update(weight, grad, state, out=weight, lr=lr,
                                            **_sparse_kwargs(self))
            return
        grad = _clipped(grad * self.rescale_grad, self.clip_gradient)
        state[:] += nd.mean(nd.square(grad), axis=1, keepdims=True)
        weight[:] -= lr * grad / nd.sqrt(state + self.float_stable_eps)
