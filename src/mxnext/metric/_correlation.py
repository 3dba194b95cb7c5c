"""Metrics built on counts and co-moments (``mx.metric``): F1 and MCC of a binary
classifier, Pearson correlation and the multi-class PCC. Exported by ``mxnext.metric``."""

from __future__ import annotations

import math

import numpy

from ._base import EvalMetric, _Counted, alias, check_label_shapes, host, register, scalar
from .._runtime.base import ParamError, ShapeError

__all__ = ["F1", "MCC", "PearsonCorrelation", "PCC"]


class _BinaryCounts:
    """Confusion counts of a binary classifier, local and global (MXNet's
    ``_BinaryClassificationMetrics``)."""

    _FIELDS = ("tp", "fp", "fn", "tn")

    def __init__(self, owner):
        self.owner = owner
        self.reset()

    def reset(self):
        self.local = dict.fromkeys(self._FIELDS, 0)
        self.total = dict.fromkeys(self._FIELDS, 0)

    def reset_local(self):
        self.local = dict.fromkeys(self._FIELDS, 0)

    def update(self, label, pred):
        label = label.astype("int32")
        check_label_shapes(label, pred, metric=self.owner)
        if len(numpy.unique(label)) > 2:
            raise ParamError(f"{self.owner}: only binary classification is supported, got "
                             f"labels {numpy.unique(label).tolist()}")
        pred_true = numpy.argmax(pred, axis=1) == 1
        label_true = label == 1
        counts = {"tp": pred_true & label_true, "fp": pred_true & ~label_true,
                  "fn": ~pred_true & label_true, "tn": ~pred_true & ~label_true}
        for key, hits in counts.items():
            n = scalar(hits.sum())
            self.local[key] += n
            self.total[key] += n

    @staticmethod
    def examples(c):
        return c["fn"] + c["fp"] + c["tn"] + c["tp"]

    @staticmethod
    def fscore(c):
        precision = float(c["tp"]) / (c["tp"] + c["fp"]) if c["tp"] + c["fp"] > 0 else 0.
        recall = float(c["tp"]) / (c["tp"] + c["fn"]) if c["tp"] + c["fn"] > 0 else 0.
        if precision + recall > 0:
            return 2 * precision * recall / (precision + recall)
        return 0.

    @classmethod
    def mcc(cls, c):
        if not cls.examples(c):
            return 0.
        tp, fp, fn, tn = (float(c[k]) for k in ("tp", "fp", "fn", "tn"))
        denom = 1.
        for term in (tp + fp, tp + fn, tn + fp, tn + fn):
            if term != 0.:
                denom *= term
        return (tp * tn - fp * fn) / math.sqrt(denom)


class _Binary(_Counted):
    """F1 and MCC: ``average='macro'`` averages the per-update scores, ``'micro'`` scores
    the counts of every update since the last reset."""

    def __init__(self, name, output_names, label_names, average):
        if average not in ("macro", "micro"):
            raise ParamError(f"{type(self).__name__}: average must be 'macro' or 'micro', "
                             f"got {average!r}")
        self.average = average
        self._counts = _BinaryCounts(type(self).__name__)
        super().__init__(name, output_names, label_names, average=average)

    def update(self, labels, preds):
        for label, pred in self._pairs(labels, preds):
            self._counts.update(label, pred)
        local, total = self._counts.local, self._counts.total
        if self.average == "macro":
            # counts restart every update, so the local and global scores are one
            self._add(self._score(local), 1)
            self._counts.reset()
        else:
            examples = _BinaryCounts.examples
            self.sum_metric = self._score(local) * examples(local)
            self.global_sum_metric = self._score(total) * examples(total)
            self.num_inst = examples(local)
            self.global_num_inst = examples(total)

    def reset(self):
        super().reset()
        self._counts.reset()

    def reset_local(self):
        super().reset_local()
        self._counts.reset_local()


@register
class F1(_Binary):
    """F1 score of a binary classifier (class 1 positive; predictions are per-class
    scores)."""

    def __init__(self, name="f1", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    _score = staticmethod(_BinaryCounts.fscore)


@register
class MCC(_Binary):
    """Matthews correlation coefficient of a binary classifier."""

    def __init__(self, name="mcc", output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    _score = staticmethod(_BinaryCounts.mcc)


class _Moments:
    """Running count, means, sums of squared deviations and co-deviation of label and
    prediction, updated per batch as MXNet does (label first, the co-deviation with the new
    label mean and the old prediction mean, then the prediction)."""

    def __init__(self):
        self.n_l = self.mean_l = self.sse_l = 0
        self.n_p = self.mean_p = self.sse_p = 0
        self.conv = 0

    @staticmethod
    def _variance(values, count, mean, m2):
        count += len(values)
        delta = values - mean
        mean += numpy.sum(delta / count)
        m2 += numpy.sum(delta * (values - mean))
        return count, mean, m2

    def update(self, label, pred):
        self.n_l, self.mean_l, self.sse_l = self._variance(label, self.n_l, self.mean_l,
                                                           self.sse_l)
        self.conv = self.conv + numpy.sum((label - self.mean_l) * (pred - self.mean_p))
        self.n_p, self.mean_p, self.sse_p = self._variance(pred, self.n_p, self.mean_p,
                                                           self.sse_p)

    def pearson(self):
        n = self.n_l
        return self.conv / ((n - 1) * numpy.sqrt(self.sse_p / (n - 1))
                            * numpy.sqrt(self.sse_l / (n - 1)))


@register
@alias("pearsonr")
class PearsonCorrelation(_Counted):
    """Pearson correlation of labels and predictions: ``average='macro'`` averages each
    update's coefficient, ``'micro'`` computes one over all values since the reset."""

    def __init__(self, name="pearsonr", output_names=None, label_names=None, average="macro"):
        if average not in ("macro", "micro"):
            raise ParamError(f"PearsonCorrelation: average must be 'macro' or 'micro', got "
                             f"{average!r}")
        self.average = average
        super().__init__(name, output_names, label_names, average=average)

    def reset(self):
        super().reset()
        self._local, self._global = _Moments(), _Moments()

    def reset_local(self):
        super().reset_local()
        self._local = _Moments()

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True, metric=self.name)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True, metric=self.name)
            label = host(label, self.name).ravel().astype(numpy.float64)
            pred = host(pred, self.name).ravel().astype(numpy.float64)
            if self.average == "macro":
                self._add(numpy.corrcoef(pred, label)[0, 1], 1)
            else:
                self._add(0, 1)
                self._local.update(label, pred)
                self._global.update(label, pred)

    def get(self):
        if self.num_inst == 0 or self.average == "macro":
            return super().get()
        return self.name, scalar(self._local.pearson())

    def get_global(self):
        if self.global_num_inst == 0 or self.average == "macro":
            return super().get_global()
        return self.name, scalar(self._global.pearson())


@register
class PCC(EvalMetric):
    """Multi-class Matthews correlation (Pearson correlation of the confusion matrix);
    grows with the largest class seen. Predictions are class scores or class ids."""

    def __init__(self, name="pcc", output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super().__init__(name, output_names=output_names, label_names=label_names,
                         has_global_stats=has_global_stats)

    def _grow(self, inc):
        pad = ((0, inc), (0, inc))
        self.lcm = numpy.pad(self.lcm, pad, "constant", constant_values=0)
        self.gcm = numpy.pad(self.gcm, pad, "constant", constant_values=0)
        self.k += inc

    @staticmethod
    def _calc_mcc(cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float("nan")
        cov_xy = numpy.sum(cmat.diagonal() * n - x * y)
        return scalar(cov_xy / (cov_xx * cov_yy) ** 0.5)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True, metric=self.name)
        for label, pred in zip(labels, preds):
            label = host(label, self.name).astype("int32", copy=False)
            pred = host(pred, self.name)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype("int32", copy=False)
            pred, label = pred.ravel(), label.ravel()
            if len(pred) != len(label):
                raise ShapeError(f"{self.name}: {len(label)} labels for {len(pred)} "
                                 f"predictions")
            if len(pred) == 0:
                continue
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            batch = numpy.bincount(pred.astype(numpy.int64) * self.k + label,
                                   minlength=self.k * self.k).reshape(self.k, self.k)
            self.lcm += batch
            self.gcm += batch
        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))
