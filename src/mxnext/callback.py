"""MXNet's ``mx.callback``: what ``fit`` calls at the end of a batch (given a
``BatchEndParam``) or of an epoch (given ``epoch, symbol, arg_params, aux_params``).
They log through the root ``logging`` logger in MXNet 1.x's formats."""

from __future__ import annotations

import logging
import math
import time

from ._checkpoint import save_checkpoint

__all__ = ["module_checkpoint", "do_checkpoint", "log_train_metric", "Speedometer",
           "ProgressBar", "LogValidationMetricsCallback"]


def module_checkpoint(mod, prefix, period=1, save_optimizer_states=False):
    """An epoch-end callback: ``mod.save_checkpoint(prefix, epoch + 1, ...)`` every
    ``period`` epochs."""
    period = max(1, int(period))

    def _callback(iter_no, sym=None, arg=None, aux=None):
        if (iter_no + 1) % period == 0:
            mod.save_checkpoint(prefix, iter_no + 1, save_optimizer_states)
    return _callback


def do_checkpoint(prefix, period=1):
    """An epoch-end callback: ``mx.model.save_checkpoint`` of epoch ``epoch + 1`` every
    ``period`` epochs (``prefix-symbol.json``, ``prefix-%04d.params``)."""
    period = max(1, int(period))

    def _callback(iter_no, sym, arg, aux):
        if (iter_no + 1) % period == 0:
            save_checkpoint(prefix, iter_no + 1, sym, arg, aux)
    return _callback


def log_train_metric(period, auto_reset=False):
    """A batch-end callback logging the training metric every ``period`` batches
    (``Iter[epoch] Batch[n] Train-name=value``), then resetting its local part if
    ``auto_reset``."""
    def _callback(param):
        if param.nbatch % period == 0 and param.eval_metric is not None:
            for name, value in param.eval_metric.get_name_value():
                logging.info("Iter[%d] Batch[%d] Train-%s=%f", param.epoch, param.nbatch,
                             name, value)
            if auto_reset:
                param.eval_metric.reset_local()
    return _callback


class Speedometer:
    """A batch-end callback logging samples/s and the training metric every ``frequent``
    batches; with ``auto_reset`` the metric's local part is reset after each log, so each
    line covers the batches since the last (``Batch [20-40]``)."""

    def __init__(self, batch_size, frequent=50, auto_reset=True):
        self.batch_size = batch_size
        self.frequent = frequent
        self.auto_reset = auto_reset
        self.init = False
        self.tic = 0.0
        self.last_count = 0

    def __call__(self, param):
        count = param.nbatch
        if self.last_count > count:          # a new epoch started
            self.init = False
        self.last_count = count
        if not self.init:
            self.init = True
            self.tic = time.time()
            return
        if count % self.frequent:
            return
        elapsed = time.time() - self.tic
        speed = self.frequent * self.batch_size / elapsed if elapsed > 0 else float("inf")
        metric = param.eval_metric
        if metric is None:
            logging.info("Iter[%d] Batch [%d]\tSpeed: %.2f samples/sec", param.epoch, count,
                         speed)
        else:
            pairs = metric.get_name_value()
            values = [x for pair in pairs for x in pair]
            fmt = "\tSpeed: %.2f samples/sec" + "\t%s=%f" * len(pairs)
            if self.auto_reset:
                metric.reset_local()
                logging.info("Epoch[%d] Batch [%d-%d]" + fmt, param.epoch,
                             count - self.frequent, count, speed, *values)
            else:
                logging.info("Epoch[%d] Batch [0-%d]" + fmt, param.epoch, count, speed,
                             *values)
        self.tic = time.time()


class ProgressBar:
    """A batch-end callback logging a bar of ``length`` characters, filled to the share of
    the epoch's ``total`` batches done: ``[========--------] 50%``."""

    def __init__(self, total, length=80):
        self.total = total
        self.bar_len = length

    def __call__(self, param):
        share = param.nbatch / float(self.total)
        filled = int(round(self.bar_len * share))
        bar = "=" * filled + "-" * (self.bar_len - filled)
        logging.info("[%s] %s%s\r", bar, math.ceil(100.0 * share), "%")


class LogValidationMetricsCallback:
    """An eval-end callback logging each validation metric: ``Epoch[e] Validation-name=v``."""

    def __call__(self, param):
        if not param.eval_metric:
            return
        for name, value in param.eval_metric.get_name_value():
            logging.info("Epoch[%d] Validation-%s=%f", param.epoch, name, value)
