"""CheckpointHandler: saves ``<prefix>-epoch<E>batch<B>.params`` / ``.states`` (and
``<prefix>-best.*``, ``<prefix>-symbol.json``) under ``model_dir`` and resumes from the
newest of them; the file names are MXNet 1.9's, so checkpoints move between the two."""

from __future__ import annotations

import os
import re
import warnings

import numpy as np

from ....metric import EvalMetric
from ._events import BatchEnd, EpochEnd, TrainBegin
from ._improvement import comparison, worst

_RESUME_PERIODS = ("To use resume from checkpoint, you must only specify the same type of "
                   "period you used for training. For example, if you are training based on "
                   "number of epochs, you must save only based on epochs, and set "
                   "batch_period to None.")


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Saves the net's parameters and the trainer's states every ``epoch_period`` epochs
    and/or every ``batch_period`` batches, keeping the newest ``max_checkpoints``; with
    ``save_best`` also whenever ``monitor`` improves (as ``<prefix>-best``). The symbol of
    a hybridized net is saved once, after the first batch. ``resume_from_checkpoint``
    loads the newest checkpoint at train begin and trains only what is left."""

    def __init__(self, model_dir, model_prefix="model", monitor=None, verbose=0,
                 save_best=False, mode="auto", epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and estimator.val_metrics "
                             "as monitor.")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.current_batch = 0
        self.current_epoch = 0
        self.trained_epoch = self.trained_batch = -1
        self.saved_checkpoints = []
        if save_best:
            self.monitor_op = comparison(mode, monitor, "ModelCheckpoint")
            self.best = worst(self.monitor_op)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = worst(self.monitor_op)
        if self.resume_from_checkpoint:
            if estimator.max_batch:
                assert self.batch_period and not self.epoch_period, _RESUME_PERIODS
            if estimator.max_epoch:
                assert self.epoch_period and not self.batch_period, _RESUME_PERIODS
            self._resume(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _numbers(self, estimator):
        """The (epoch, batch) a checkpoint taken now is named for: counted from 0 here, or
        on from the resumed checkpoint's (an epoch-end save comes after the batch count
        moved on, a batch-end save before)."""
        if not self.resume_from_checkpoint:
            return self.current_epoch, self.current_batch
        batch = self.current_batch + self.trained_batch + (0 if estimator.max_epoch else 1)
        return self.current_epoch + self.trained_epoch + 1, batch

    def _save_checkpoint(self, estimator):
        prefix = "%s-epoch%dbatch%d" % ((self.model_prefix,) + self._numbers(estimator))
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: trained total %d batches, "
                                  "saving model at %s with prefix: %s", self.current_epoch,
                                  self.current_batch + 1, self.model_dir, prefix)
        if self.save_best:
            self._save_if_best(estimator)

    def _save_if_best(self, estimator):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                f"Skipping save best because {name} is not updated, make sure you pass one of "
                "the metric objects estimator.train_metrics and estimator.val_metrics as "
                "monitor"), stacklevel=3)
        elif self.monitor_op(value, self.best):
            prefix = self.model_prefix + "-best"
            self._save_params_and_trainer(estimator, prefix)
            if self.verbose > 0:
                estimator.logger.info("[Epoch %d] CheckpointHandler: %s improved from %0.5f to "
                                      "%0.5f, updating best model at %s with prefix: %s",
                                      self.current_epoch, name, self.best, value,
                                      self.model_dir, prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info("[Epoch %d] CheckpointHandler: %s did not improve from "
                                  "%0.5f, skipping updating best model",
                                  self.current_epoch, name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + "-symbol.json")
        graph = getattr(estimator.net, "_cached_graph", None)
        if graph:
            graph[1].save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock to "
                "construct your model, and call net.hybridize() before passing to Estimator "
                "in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, prefix):
        path = os.path.join(self.model_dir, prefix)
        estimator.net.save_parameters(path + ".params")
        estimator.trainer.save_states(path + ".states")
        if prefix.endswith("-best"):
            return
        self.saved_checkpoints.append(prefix)
        if len(self.saved_checkpoints) > self.max_checkpoints:
            oldest = os.path.join(self.model_dir, self.saved_checkpoints.pop(0))
            for suffix in (".params", ".states"):
                if os.path.exists(oldest + suffix):
                    os.remove(oldest + suffix)

    def _resume(self, estimator):
        found = _checkpoints(self.model_dir, self.model_prefix)
        if not found:
            total = (f"{estimator.max_batch} batches" if estimator.max_batch
                     else f"{estimator.max_epoch} epochs")
            estimator.logger.info("CheckpointHandler: No checkpoint found, training from "
                                  "scratch for %s", total)
            return
        self.trained_epoch = max(epoch for epoch, _ in found)
        self.trained_batch = max(batch for epoch, batch in found if epoch == self.trained_epoch)
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, continue to train "
               "for " % (self.trained_epoch, self.trained_batch))
        msg += _shorten_the_run(estimator, self.trained_epoch, self.trained_batch)
        path = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (
            self.model_prefix, self.trained_epoch, self.trained_batch))
        for suffix in (".params", ".states"):
            assert os.path.exists(path + suffix), \
                "Failed to load checkpoint, %s does not exist" % (path + suffix)
        estimator.net.load_parameters(path + ".params", ctx=estimator.context)
        estimator.trainer.load_states(path + ".states")
        estimator.logger.warning(msg)


def _checkpoints(model_dir, prefix):
    """(epoch, batch) of every ``<prefix>-epoch<E>batch<B>.params`` in ``model_dir``."""
    found = []
    for fname in os.listdir(model_dir):
        if not (fname.startswith(prefix + "-epoch") and ".params" in fname):
            continue
        match = re.fullmatch(r"epoch(\d+)batch(\d+)\.params", fname[len(prefix) + 1:])
        if match is None:
            raise ValueError("Error parsing checkpoint file, please check your checkpoints "
                             "have the format: {model_name}-epoch{epoch_number}batch"
                             "{batch_number}.params, there should also be a .states file for "
                             f"each .params file; got {fname}")
        found.append((int(match[1]), int(match[2])))
    return found


def _shorten_the_run(estimator, trained_epoch, trained_batch):
    """Cut the estimator's epoch/batch limit by what the checkpoint already trained; the
    words saying what is left."""
    left = ""
    if estimator.max_epoch:
        if trained_epoch >= estimator.max_epoch - 1:
            raise ValueError("Found checkpoint with maximum number of epoch %d reached, please "
                             "specify resume_from_checkpoint=False (default value) if you wan "
                             "to train from scratch." % estimator.max_epoch)
        estimator.max_epoch -= trained_epoch + 1
        left += "%d epochs " % estimator.max_epoch
    if estimator.max_batch:
        if trained_batch >= estimator.max_batch - 1:
            raise ValueError("Found checkpoint with maximum number of batch %d reached, please "
                             "specify resume_from_checkpoint=False (default value) if you wan "
                             "to train from scratch." % trained_batch)
        estimator.max_batch -= trained_batch + 1
        left += "%d batches " % estimator.max_batch
    return left
