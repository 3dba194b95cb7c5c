"""LoggingHandler: what an Estimator reports while it trains or validates (the messages
and their formats are MXNet 1.9's, so logs read the same)."""

from __future__ import annotations

import time

from ._events import BatchBegin, BatchEnd, EpochBegin, EpochEnd, TrainBegin, TrainEnd
from .utils import _check_metrics


def _with_metrics(msg, metrics):
    values = "".join("%s: %.4f, " % metric.get() for metric in metrics)
    return (msg + values).rstrip(", ")


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Logs the optimizer and learning rate at train begin, ``metrics`` at every epoch end
    (``log_interval='epoch'``) or also every ``log_interval`` batches (an int), and a
    summary at train end. It runs last (priority +inf) so it sees updated metrics."""

    def __init__(self, log_interval="epoch", metrics=None, priority=float("inf")):
        if not isinstance(log_interval, int) and log_interval != "epoch":
            raise ValueError("log_interval must be either an integer or string 'epoch'")
        self.metrics = _check_metrics(metrics)
        self.priority = priority
        self.log_interval = log_interval
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s with current learning rate "
                              "%.4f ", type(trainer.optimizer).__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        took = time.time() - self.train_start
        msg = "Train finished using total %ds with %d epochs. " % (took, self.current_epoch)
        estimator.logger.info(_with_metrics(msg, self.metrics))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.log_interval_time += time.time() - self.batch_start
            self.processed_samples += kwargs["batch"][0].shape[0]
            if self.batch_index % self.log_interval == 0:
                msg = "[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs " % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info(_with_metrics(msg, self.metrics))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # the Estimator names its training metrics 'training ...': without one, this
        # handler is logging a validation pass
        if any("training" in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        msg = "[Epoch %d] Finished in %.3fs, " % (self.current_epoch,
                                                  time.time() - self.epoch_start)
        estimator.logger.info(_with_metrics(msg, self.metrics))
        self.current_epoch += 1
        self.batch_index = 0
