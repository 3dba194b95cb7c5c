"""The two optimizers SVRGModule installs (used by it only, as in MXNet).

SVRGModule keeps, next to each parameter ``w``, a key ``w_full`` in the KVStore where the
full-data gradient is summed; ``_SVRGOptimizer`` routes updates of ``*full*`` keys to
``_AssignmentOptimizer`` (the weight becomes the pushed gradient) and every other key to
the user's optimizer.
"""

from __future__ import annotations

from ... import optimizer as _opt

__all__ = ["_AssignmentOptimizer", "_SVRGOptimizer"]

# the keyword arguments of the base Optimizer; the rest belong to the wrapped optimizer
_BASE_PARAMS = ("rescale_grad", "param_idx2name", "wd", "clip_gradient", "learning_rate",
                "lr_scheduler", "sym", "begin_num_update", "multi_precision", "param_dict")


@_opt.register
class _AssignmentOptimizer(_opt.Optimizer):
    """Sets the weight to the gradient (how full gradients accumulate in a KVStore)."""

    def update(self, index, weight, grad, state):
        weight[:] = grad


@_opt.register
class _SVRGOptimizer(_opt.Optimizer):
    """``default_optimizer`` (a name, created with all ``kwargs``, or an Optimizer) for the
    parameters, ``_AssignmentOptimizer`` for the ``*full*`` keys."""

    def __init__(self, default_optimizer, **kwargs):
        super().__init__(**self._check_params(**kwargs))
        if isinstance(default_optimizer, str):
            self.default_opt = _opt.create(default_optimizer, **kwargs)
        else:
            self.default_opt = default_optimizer
        self.aux_opt = _opt.create(_AssignmentOptimizer.__name__)

    @staticmethod
    def _check_params(**kwargs):
        """The subset of ``kwargs`` the base Optimizer takes."""
        return {k: v for k, v in kwargs.items() if k in _BASE_PARAMS}

    def _check_index(self, index):
        """The parameter name of ``index`` (an index of ``idx2name``, or already a name)."""
        if index in self.idx2name.values():
            return index
        if index not in self.idx2name:
            raise KeyError(f"_SVRGOptimizer: index {index!r} is neither a key nor a name in "
                           f"param_idx2name {self.idx2name}")
        return self.idx2name[index]

    def _target(self, index):
        return self.aux_opt if "full" in self._check_index(index) else self.default_opt

    def _set_current_context(self, device_id):
        super()._set_current_context(device_id)
        self.default_opt._set_current_context(device_id)
        self.aux_opt._set_current_context(device_id)

    def create_state(self, index, weight):
        return self._target(index).create_state(index, weight)

    def update(self, index, weight, grad, state):
        self._target(index).update(index, weight, grad, state)
