"""Checks the Estimator and its handlers share: metric arguments, the metrics a handler
refers to, the metric a loss suggests (MXNet 1.9's ``estimator.utils``)."""

from __future__ import annotations

from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss


def _check_metrics(metrics):
    """``metrics`` as a flat list of metrics: one metric, a list of them, or a
    CompositeEvalMetric (unpacked, recursively); None gives an empty list."""
    if isinstance(metrics, CompositeEvalMetric):
        return [leaf for inner in metrics.metrics for leaf in _check_metrics(inner)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if not all(isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be a Metric or a list of Metric, "
                         f"refer to mxnet.metric.EvalMetric: {metrics}")
    return list(metrics)


def _check_handler_metric_ref(handler, known_metrics):
    """Every metric ``handler`` holds in an attribute whose name contains ``metric`` must
    be one of ``known_metrics`` (as MXNet, a ``monitor`` attribute is not looked at)."""
    for attribute in dir(handler):
        if "metric" not in attribute:
            continue
        reference = getattr(handler, attribute)
        if not reference:
            continue
        for metric in reference if isinstance(reference, list) else [reference]:
            _check_metric_known(handler, metric, known_metrics)


def _check_metric_known(handler, metric, known_metrics):
    if metric not in known_metrics:
        raise ValueError(f"Event handler {type(handler).__name__} refers to a metric instance "
                         f"{metric} outside of the known training and validation metrics. "
                         "Please use the metrics from estimator.train_metrics and "
                         "estimator.val_metrics instead.")


def _suggest_metric_for_loss(loss):
    """The metric worth tracking by default for ``loss``, or None."""
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
