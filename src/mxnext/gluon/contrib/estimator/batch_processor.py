"""BatchProcessor: what the Estimator does with one batch (MXNet 1.9's
``estimator.batch_processor``). Subclass it and override ``fit_batch`` /
``evaluate_batch`` to change a training or validation step."""

from __future__ import annotations

from .... import autograd
from ...utils import split_and_load

__all__ = ["BatchProcessor"]


class BatchProcessor:
    """The default step: split the batch across the estimator's contexts, run the net and
    the loss on each piece (recording and back-propagating when training). Both methods
    return ``(data, label, pred, loss)``, each a list with one entry per context."""

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on ``val_batch``."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(y_hat, y) for y_hat, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Run ``estimator.net`` and ``estimator.loss`` on ``train_batch`` under
        ``autograd.record()`` and back-propagate each loss (the update itself is
        GradientUpdateHandler's)."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(y_hat, y) for y_hat, y in zip(pred, label)]
        for piece in loss:
            piece.backward()
        return data, label, pred, loss
