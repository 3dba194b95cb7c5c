"""Dynamic loss scaling (MXNet's ``amp.loss_scaler``): the loss is multiplied by a scale
before backward so that small float16 gradients do not flush to zero; a step whose
gradients overflowed is skipped and the scale halved, and after ``scale_seq_len`` steps
without overflow the scale doubles (up to ``max_loss_scale``)."""

from __future__ import annotations

import logging

from ... import autograd, ndarray

__all__ = ["LossScaler"]


class LossScaler:
    """Dynamic loss scaler. ``loss_scale`` is the scale the next loss is multiplied by."""

    def __init__(self, init_scale=2.0 ** 16, max_loss_scale=2.0 ** 24, scale_seq_len=2000):
        self._loss_scale = float(init_scale)
        self._next_loss_scale = self._loss_scale
        self._max_loss_scale = float(max_loss_scale)
        self._scale_seq_len = scale_seq_len
        self._unskipped = 0

    @property
    def loss_scale(self):
        return self._loss_scale

    def has_overflow(self, params):
        """Whether any gradient of ``params`` (gluon Parameters) holds an inf or NaN; moves
        the scale as this step's outcome asks."""
        grads = [g for p in params if p.grad_req != "null" for g in p.list_grad()]
        overflow = False
        if grads:
            with autograd.pause():
                flag = ndarray.multi_all_finite(*grads, num_arrays=len(grads))
            overflow = not bool(flag.asnumpy()[0])
        self._loss_scale = self._next_loss_scale
        if overflow:
            self._next_loss_scale = self._loss_scale / 2.0
            self._unskipped = 0
            logging.info("AMP: decreasing loss scale to %f", self._next_loss_scale)
        else:
            self._unskipped += 1
        if self._unskipped == self._scale_seq_len:
            self._unskipped = 0
            self._next_loss_scale = min(self._max_loss_scale, self._loss_scale * 2.0)
            logging.info("AMP: increasing loss scale to %f", self._next_loss_scale)
        return overflow
