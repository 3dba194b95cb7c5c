"""MXNet's evaluation metrics (``mx.metric``): accuracy, top-k, perplexity, regression
errors, cross entropy and losses here; F1, MCC, Pearson correlation and PCC in
``mxnext._metric_corr``; ``EvalMetric``, ``create``, ``register`` and the rest of the frame
in ``mxnext._metric_base``. Each metric keeps MXNet's arithmetic (the same numpy operations
in the same order, counters in doubles), so values match MXNet 1.9's.
"""

from __future__ import annotations

import math

import numpy

from ._base import CompositeEvalMetric, CustomMetric, EvalMetric, _Counted, alias, check_label_shapes, create, host, np, register, scalar
from ._correlation import F1, MCC, PCC, PearsonCorrelation
from .._runtime.base import ParamError, ShapeError

__all__ = ["EvalMetric", "CompositeEvalMetric", "CustomMetric", "np", "register", "alias",
           "create", "check_label_shapes", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe"]


@register
@alias("acc")
class Accuracy(_Counted):
    """Fraction of predictions equal to the label; a prediction whose shape differs from
    its label's is reduced with argmax over ``axis`` first."""

    def __init__(self, axis=1, name="accuracy", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names, axis=axis)
        self.axis = axis

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            if pred.shape != label.shape:
                pred = numpy.argmax(pred, axis=self.axis)
            pred = pred.astype("int32").ravel()
            label = label.astype("int32").ravel()
            check_label_shapes(label, pred, metric=self.name)
            self._add((pred == label).sum(), len(pred))


@register
@alias("top_k_accuracy", "top_k_acc")
class TopKAccuracy(_Counted):
    """Fraction of samples whose label is among the ``top_k`` highest scores (``top_k`` >
    1; the name gets the suffix ``_<top_k>``)."""

    def __init__(self, top_k=1, name="top_k_accuracy", output_names=None, label_names=None):
        if top_k <= 1:
            raise ParamError(f"TopKAccuracy: top_k must be more than 1 (use Accuracy for 1), "
                             f"got {top_k}")
        suffix = f"_{top_k}"
        super().__init__(name if name.endswith(suffix) else name + suffix, output_names,
                         label_names, top_k=top_k)
        self.top_k = top_k

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            if pred.ndim > 2:
                raise ShapeError(f"{self.name}: predictions must have at most 2 dimensions, "
                                 f"got shape {pred.shape}")
            order = numpy.argpartition(pred.astype("float32"), -self.top_k)
            label = label.astype("int32")
            check_label_shapes(label, order, metric=self.name)
            if order.ndim == 1:
                self._add((order.flat == label.flat).sum(), 0)
            else:
                classes = order.shape[1]
                for j in range(min(classes, self.top_k)):
                    self._add((order[:, classes - 1 - j].flat == label.flat).sum(), 0)
            self._add(0, order.shape[0])


@register
class Perplexity(_Counted):
    """exp of the mean negative log-probability of the labels; labels equal to
    ``ignore_label`` (None: none) are left out."""

    def __init__(self, ignore_label, axis=-1, name="perplexity", output_names=None,
                 label_names=None):
        super().__init__(name, output_names, label_names, ignore_label=ignore_label,
                         axis=axis)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        if len(labels) != len(preds):
            raise ShapeError(f"{self.name}: {len(labels)} labels for {len(preds)} "
                             f"predictions")
        loss, num = 0., 0
        for label, pred in zip(labels, preds):
            label, pred = host(label, self.name), host(pred, self.name)
            if label.size != pred.size / pred.shape[-1]:
                raise ShapeError(f"{self.name}: labels of shape {label.shape} do not fit "
                                 f"predictions of shape {pred.shape}")
            label = label.reshape(label.size)
            # MXNet's pick: the label's entry along ``axis``, indices clipped into range
            rows = pred.reshape(-1, pred.shape[-1]) if self.axis in (-1, pred.ndim - 1) else pred
            index = numpy.clip(label.astype("int32"), 0, rows.shape[self.axis] - 1)
            prob = numpy.take_along_axis(rows, numpy.expand_dims(index, self.axis),
                                         self.axis).reshape(label.size)
            if self.ignore_label is not None:
                ignore = (label == self.ignore_label).astype(prob.dtype)
                num -= scalar(ignore.sum())
                prob = prob * (1 - ignore) + ignore
            loss -= scalar(numpy.log(numpy.maximum(1e-10, prob)).sum())
            num += prob.size
        self._add(loss, num)

    def get(self):
        if self.num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.sum_metric / self.num_inst)

    def get_global(self):
        if self.global_num_inst == 0:
            return self.name, float("nan")
        return self.name, math.exp(self.global_sum_metric / self.global_num_inst)


class _Regression(_Counted):
    """A per-batch error of label and prediction (1-D ones read as columns), averaged over
    batches."""

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            if label.ndim == 1:
                label = label.reshape(label.shape[0], 1)
            if pred.ndim == 1:
                pred = pred.reshape(pred.shape[0], 1)
            try:
                diff = label - pred
            except ValueError:        # shapes that do not broadcast
                diff = None
            if diff is None or label.shape[0] != pred.shape[0]:
                raise ShapeError(f"{self.name}: labels of shape {label.shape} do not match "
                                 f"predictions of shape {pred.shape}")
            self._add(self._error(diff), 1)


@register
class MAE(_Regression):
    """Mean absolute error."""

    def __init__(self, name="mae", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return numpy.abs(diff).mean()


@register
class MSE(_Regression):
    """Mean squared error."""

    def __init__(self, name="mse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return (diff ** 2.0).mean()


@register
class RMSE(_Regression):
    """Root mean squared error (per batch, then averaged over batches)."""

    def __init__(self, name="rmse", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    @staticmethod
    def _error(diff):
        return numpy.sqrt((diff ** 2.0).mean())


class _LogLoss(_Counted):
    """Summed ``-log(p + eps)`` of each sample's label probability, over samples."""

    def __init__(self, eps, name, output_names, label_names):
        super().__init__(name, output_names, label_names, eps=eps)
        self.eps = eps

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            label = label.ravel()
            n = pred.shape[0]
            if label.shape[0] != n:
                raise ShapeError(f"{self.name}: {label.shape[0]} labels for {n} predictions "
                                 f"(shape {pred.shape})")
            prob = pred[numpy.arange(n, dtype=numpy.int64), numpy.int64(label)]
            self._add((-numpy.log(prob + self.eps)).sum(), n)


@register
@alias("ce")
class CrossEntropy(_LogLoss):
    """Cross entropy of predicted class probabilities and integer labels."""

    def __init__(self, eps=1e-12, name="cross-entropy", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
@alias("nll_loss")
class NegativeLogLikelihood(_LogLoss):
    """Negative log-likelihood of the labels under the predicted probabilities."""

    def __init__(self, eps=1e-12, name="nll-loss", output_names=None, label_names=None):
        super().__init__(eps, name, output_names, label_names)


@register
class Loss(_Counted):
    """Mean of the output values themselves (for outputs that are losses); labels are
    ignored."""

    def __init__(self, name="loss", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)

    def update(self, _, preds):
        if isinstance(preds, numpy.ndarray) or hasattr(preds, "asnumpy"):
            preds = [preds]
        for pred in preds:
            pred = host(pred, self.name)
            self._add(pred.sum(), pred.size)


@register
class Torch(Loss):
    """``Loss`` named ``torch`` (MXNet's Torch plugin outputs)."""

    def __init__(self, name="torch", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)


@register
class Caffe(Loss):
    """``Loss`` named ``caffe`` (MXNet's Caffe plugin outputs)."""

    def __init__(self, name="caffe", output_names=None, label_names=None):
        super().__init__(name, output_names, label_names)
