"""Estimator: the fit/evaluate loop over a Gluon net, its loss, metrics and trainer, driven
by event handlers (MXNet 1.9's ``gluon.contrib.estimator.Estimator``)."""

from __future__ import annotations

import copy
import logging
import sys
import warnings

from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as _LossMetric
from ...data import DataLoader
from ...loss import Loss as _GluonLoss
from ...trainer import Trainer
from ._events import _check_event_handlers, categorize
from .batch_processor import BatchProcessor
from .event_handler import (GradientUpdateHandler, LoggingHandler, MetricHandler,
                            StoppingHandler, ValidationHandler)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ["Estimator"]

_NOT_A_LOADER = ("Estimator only support input as Gluon DataLoader. Alternatively, you can "
                 "transform your DataIter or any NDArray into Gluon DataLoader. "
                 "Refer to gluon.data.DataLoader")


class Estimator:
    """Trains ``net`` with ``loss`` (``fit``) and evaluates it (``evaluate``).

    ``train_metrics`` default to the metric the loss suggests (accuracy for softmax
    cross-entropy) plus the mean loss, named ``'training ...'``; ``val_metrics`` default to
    copies of them named ``'validation ...'``. A net not fully initialized is initialized
    with ``initializer`` on ``context`` (the first GPU, else the CPU, when None); without
    a ``trainer``, SGD with learning rate 0.001 is used. ``val_net`` / ``val_loss``
    (default: ``net`` / ``loss``) serve validation; ``batch_processor`` supplies
    ``fit_batch`` and ``evaluate_batch``. ``logger`` writes INFO and up to stdout.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None, initializer=None,
                 trainer=None, context=None, val_net=None, val_loss=None,
                 batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net
        self.logger = logging.Logger(name="Estimator", level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))
        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = self.max_batch = None
        self.batch_axis = 0

    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, _GluonLoss):
            raise ValueError(f"loss must be a Loss, refer to gluon.loss.Loss:{loss}")
        return loss

    @staticmethod
    def _check_context(context):
        gpus = [gpu(i) for i in range(num_gpus())]
        if not context:
            if len(gpus) > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default."
                              "To utilize all your GPUs, specify context as a list of gpus, "
                              "e.g. context=[mx.gpu(0), mx.gpu(1)] ", stacklevel=3)
            return [gpus[0] if gpus else cpu()]
        if isinstance(context, Context):
            context = [context]
        if not (isinstance(context, list) and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], refer to "
                             f"mxnet.Context:{context}")
        for ctx in context:
            if ctx not in gpus and not ctx.device_type.startswith("cpu"):
                raise AssertionError(f"{ctx} is not available, please make sure your context "
                                     "is in one of: mx.cpu(), "
                                     + ", ".join(str(g) for g in gpus))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, "fit_batch", None))
                and callable(getattr(batch_processor, "evaluate_batch", None))):
            raise ValueError("Customized Batch Processor must contain fit_batch() and "
                             "evaluate_batch() methods")
        return batch_processor

    def _initialize(self, initializer):
        """Initialize what is not yet (layers already initialized keep their values); a
        fully initialized net with an ``initializer`` given only warns."""
        if not self._is_initialized():
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. You "
                          "don't need to pass initializer if you already initialized your "
                          "net. You can use net.initialize(init=your_initializer, "
                          "force_reinit=True)to force re-initialize.", stacklevel=3)

    def _check_trainer(self, trainer):
        if not trainer:
            warnings.warn("No trainer specified, default SGD optimizer with learning rate "
                          "0.001 is used.", stacklevel=3)
            return Trainer(self.net.collect_params(), "sgd", {"learning_rate": 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("Trainer must be a Gluon Trainer instance, refer to "
                             f"gluon.Trainer:{trainer}")
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        try:
            for name in params:
                params[name].list_ctx()
        except RuntimeError:
            return False
        return True

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        return self.batch_processor._get_data_and_label(batch, ctx, batch_axis)

    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            self._train_metrics.append(_LossMetric(self.loss.name.rstrip("0123456789")))
        for metric in self._train_metrics:
            metric.name = "training " + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if "training" in metric.name:
                metric.name = metric.name.replace("training", "validation")
            else:
                metric.name = "validation " + metric.name

    @property
    def train_metrics(self):
        return self._train_metrics

    @property
    def val_metrics(self):
        return self._val_metrics

    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Run ``batch_processor.evaluate_batch`` over ``val_data`` (a DataLoader), as one
        epoch of the given handlers plus a default MetricHandler and LoggingHandler on
        ``val_metrics``."""
        if not isinstance(val_data, DataLoader):
            raise ValueError(_NOT_A_LOADER)
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = self._categorize_handlers(
            handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None, batches=None,
            batch_axis=0):
        """Train on ``train_data`` (a DataLoader) for ``epochs`` epochs or ``batches``
        batches (exactly one of them). Besides ``event_handlers``, a StoppingHandler, a
        GradientUpdateHandler, a MetricHandler, a LoggingHandler and (with ``val_data``) a
        ValidationHandler are added unless one of that kind is given. Training stops when
        any handler's ``batch_end`` or ``epoch_end`` returns True."""
        if not isinstance(train_data, DataLoader):
            raise ValueError(_NOT_A_LOADER)
        if (not epochs) == (not batches):
            raise ValueError("Fit only support exactly one type of iteration, train by number "
                             "of epochs or number of batches. Please specify one and only one "
                             f"of: epochs or batches (got epochs={epochs}, batches={batches}).")
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis
        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)
        for handler in train_begin:
            handler.train_begin(self)
        stop = False
        while not stop:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # every handler sees the batch end, even after one asked to stop
                if any([h.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for h in batch_end]):
                    break
            stop = any([handler.epoch_end(self) for handler in epoch_end])
        for handler in train_end:
            handler.train_end(self)

    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not _has(handlers, GradientUpdateHandler):
            added.append(GradientUpdateHandler())
        if not _has(handlers, MetricHandler):
            added.append(MetricHandler(metrics=self.train_metrics))
        if not _has(handlers, ValidationHandler) and val_data:
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not _has(handlers, LoggingHandler):
            added.append(LoggingHandler(metrics=self.train_metrics))
        return self._merge(handlers, added, self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not _has(handlers, MetricHandler):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not _has(handlers, LoggingHandler):
            added.append(LoggingHandler(metrics=self.val_metrics))
        return self._merge(handlers, added, self.val_metrics)

    @staticmethod
    def _merge(given, added, known_metrics):
        """``given`` + ``added`` sorted by priority (stable, default 0). When both are
        non-empty, every handler must refer only to ``known_metrics``: default handlers
        and the user's would otherwise report different metrics."""
        handlers = given + added
        if given and added:
            known = set(known_metrics)
            for handler in handlers:
                _check_handler_metric_ref(handler, known)
        handlers.sort(key=lambda handler: getattr(handler, "priority", 0))
        return handlers

    def _categorize_handlers(self, event_handlers):
        """The handlers of each event (train begin, epoch begin, batch begin, batch end,
        epoch end, train end), so only those joining an event are called at it."""
        return categorize(event_handlers)


def _has(handlers, kind):
    return any(isinstance(handler, kind) for handler in handlers)
