"""MXNet's ``mx.lr_scheduler``: learning rate as a function of the update count.

An optimizer calls its scheduler with ``num_update``, the largest number of updates any of
its weights has received. Schedulers keep state (``base_lr`` moves as steps pass), as
MXNet's do, so a scheduler belongs to one optimizer.
"""

import logging
import math

__all__ = ["LRScheduler", "FactorScheduler", "MultiFactorScheduler", "PolyScheduler",
           "CosineScheduler"]


class LRScheduler:
    """Base class: ``base_lr`` and an optional warmup of ``warmup_steps`` updates that starts
    at ``warmup_begin_lr`` and either rises linearly to ``base_lr`` (``'linear'``) or stays
    there (``'constant'``)."""

    def __init__(self, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        if not isinstance(warmup_steps, int):
            raise TypeError(f"LRScheduler: argument 'warmup_steps' expected int, "
                            f"got {type(warmup_steps).__name__}")
        if warmup_begin_lr > base_lr:
            raise ValueError("Base lr has to be higher than warmup_begin_lr")
        if warmup_steps < 0:
            raise ValueError("Warmup steps has to be positive or 0")
        if warmup_mode not in ("linear", "constant"):
            raise ValueError("Supports only linear and constant modes of warmup")
        self.base_lr = base_lr
        self.warmup_steps = warmup_steps
        self.warmup_final_lr = base_lr
        self.warmup_begin_lr = warmup_begin_lr
        self.warmup_mode = warmup_mode

    def get_warmup_lr(self, num_update):
        """The learning rate at update ``num_update`` (< ``warmup_steps``) of the warmup."""
        if num_update >= self.warmup_steps:
            raise ValueError(f"LRScheduler.get_warmup_lr: num_update {num_update} is past the "
                             f"{self.warmup_steps} warmup steps")
        if self.warmup_mode == "constant":
            return self.warmup_begin_lr
        span = self.warmup_final_lr - self.warmup_begin_lr
        return self.warmup_begin_lr + span * float(num_update) / float(self.warmup_steps)

    def __call__(self, num_update):
        raise NotImplementedError("must override this")


def _check_factor(factor):
    if factor > 1.0:
        raise ValueError("Factor must be no more than 1 to make lr reduce")


class FactorScheduler(LRScheduler):
    """``base_lr * factor ** floor(num_update / step)``, never below ``stop_factor_lr``."""

    def __init__(self, step, factor=1, stop_factor_lr=1e-8, base_lr=0.01,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        _check_factor(factor)
        self.step = step
        self.factor = factor
        self.stop_factor_lr = stop_factor_lr
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        # a loop, not an if: training resumed at a late update catches up every step at once
        while num_update > self.count + self.step:
            self.count += self.step
            self.base_lr *= self.factor
            if self.base_lr < self.stop_factor_lr:
                self.base_lr = self.stop_factor_lr
                logging.info("Update[%d]: now learning rate arrived at %0.5e, will not "
                             "change in the future", num_update, self.base_lr)
            else:
                logging.info("Update[%d]: Change learning rate to %0.5e",
                             num_update, self.base_lr)
        return self.base_lr


class MultiFactorScheduler(LRScheduler):
    """Multiplies the learning rate by ``factor`` each time ``num_update`` passes one of the
    increasing ``step`` values."""

    def __init__(self, step, factor=1, base_lr=0.01, warmup_steps=0, warmup_begin_lr=0,
                 warmup_mode="linear"):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        if not isinstance(step, list) or not step:
            raise ValueError(f"MultiFactorScheduler: argument 'step' expected a non-empty "
                             f"list of int, got {step!r}")
        for i, s in enumerate(step):
            if i and s <= step[i - 1]:
                raise ValueError("Schedule step must be an increasing integer list")
            if s < 1:
                raise ValueError("Schedule step must be greater or equal than 1 round")
        _check_factor(factor)
        self.step = step
        self.cur_step_ind = 0
        self.factor = factor
        self.count = 0

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        while self.cur_step_ind < len(self.step) and num_update > self.step[self.cur_step_ind]:
            self.count = self.step[self.cur_step_ind]
            self.cur_step_ind += 1
            self.base_lr *= self.factor
            logging.info("Update[%d]: Change learning rate to %0.5e", num_update, self.base_lr)
        return self.base_lr


def _check_max_update(max_update):
    if not isinstance(max_update, int):
        raise TypeError(f"argument 'max_update' expected int, got {type(max_update).__name__}")
    if max_update < 1:
        raise ValueError("maximum number of updates must be strictly positive")


class _DecayToFinal(LRScheduler):
    """After warmup, ``final_lr + (base_lr - final_lr) * self._shape(n / max_steps)`` where
    ``n`` counts updates since warmup and ``max_steps = max_update - warmup_steps``; the
    rate stays at ``final_lr`` past ``max_update``."""

    def __init__(self, max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                 warmup_mode):
        super().__init__(base_lr, warmup_steps, warmup_begin_lr, warmup_mode)
        _check_max_update(max_update)
        self.base_lr_orig = self.base_lr
        self.max_update = max_update
        self.final_lr = final_lr
        self.max_steps = max_update - warmup_steps

    def __call__(self, num_update):
        if num_update < self.warmup_steps:
            return self.get_warmup_lr(num_update)
        if num_update <= self.max_update:
            done = float(num_update - self.warmup_steps) / float(self.max_steps)
            self.base_lr = (self.final_lr
                            + (self.base_lr_orig - self.final_lr) * self._shape(done))
        return self.base_lr


class PolyScheduler(_DecayToFinal):
    """Polynomial decay: the shape is ``(1 - done) ** pwr``."""

    def __init__(self, max_update, base_lr=0.01, pwr=2, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)
        self.power = pwr

    def _shape(self, done):
        return (1 - done) ** self.power


class CosineScheduler(_DecayToFinal):
    """Cosine decay: the shape is ``(1 + cos(pi * done)) / 2``."""

    def __init__(self, max_update, base_lr=0.01, final_lr=0,
                 warmup_steps=0, warmup_begin_lr=0, warmup_mode="linear"):
        super().__init__(max_update, base_lr, final_lr, warmup_steps, warmup_begin_lr,
                         warmup_mode)

    def _shape(self, done):
        return (1 + math.cos(math.pi * done)) / 2
