"""``BaseModule``: the training loop (``fit``), evaluation (``score``) and prediction
(``predict``, ``iter_predict``) every module shares, written against the abstract
``bind`` / ``init_params`` / ``forward`` / ``backward`` / ``update`` interface."""

from __future__ import annotations

import logging
import time
import warnings
from collections import namedtuple

import numpy as np

from .. import ndarray as nd
from .._atomic_write import write_atomic
from ..initializer import Uniform
from .._checkpoint import load_params_file
from ..ndarray import serialization
from .errors import ModuleError

__all__ = ["BaseModule", "BatchEndParam"]

# what batch-end and score-end callbacks receive, as MXNet's mx.model.BatchEndParam
BatchEndParam = namedtuple("BatchEndParam", ["epoch", "nbatch", "eval_metric", "locals"])


def _as_list(obj):
    return obj if isinstance(obj, list) else [obj]


def _metric(eval_metric):
    from .. import metric
    return eval_metric if isinstance(eval_metric, metric.EvalMetric) else \
        metric.create(eval_metric)


# MXNet's default initializer (it keeps no state, so one instance serves every call)
DEFAULT_INIT = Uniform(0.01)


class BaseModule:
    """State flags: ``binded``, ``for_training``, ``inputs_need_grad``,
    ``params_initialized``, ``optimizer_initialized``."""

    def __init__(self, logger=logging):
        self.logger = logger
        self.binded = False
        self.for_training = False
        self.inputs_need_grad = False
        self.params_initialized = False
        self.optimizer_initialized = False
        self._symbol = None
        self._total_exec_bytes = 0

    def _require(self, call, bound=True, params=False, optimizer=False):
        if bound and not self.binded:
            raise ModuleError(f"{call}: call bind() first")
        if params and not self.params_initialized:
            raise ModuleError(f"{call}: call init_params() (or set_params) first")
        if optimizer and not self.optimizer_initialized:
            raise ModuleError(f"{call}: call init_optimizer() first")

    def _keeps_binding(self, force_rebind):
        """``bind``'s guard (``force_rebind`` drops the binding first): whether the module
        is already bound, which ``bind`` then ignores, as MXNet, with a warning."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning("Already bound, ignoring bind()")
        return self.binded

    def _keeps_optimizer(self, force_init, note="ignoring."):
        """``init_optimizer``'s guard: whether an optimizer is set already and stays, as
        MXNet, with a warning (``note`` ends it as MXNet's module classes do)."""
        self._require("init_optimizer", params=True)
        if self.optimizer_initialized and not force_init:
            self.logger.warning(f"optimizer already initialized, {note}")
            return True
        return False

    # -- high-level API --------------------------------------------------------------------
    def forward_backward(self, data_batch):
        """``forward(data_batch, is_train=True)`` then ``backward()``."""
        self.forward(data_batch, is_train=True)
        self.backward()

    def score(self, eval_data, eval_metric, num_batch=None, batch_end_callback=None,
              score_end_callback=None, reset=True, epoch=0, sparse_row_id_fn=None):
        """Run ``eval_data`` (at most ``num_batch`` batches) and return the metric's
        ``[(name, value)]``."""
        self._require("score", params=True)
        if reset:
            eval_data.reset()
        eval_metric = _metric(eval_metric)
        eval_metric.reset()
        done = 0
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            self._update_metric_of(eval_metric, batch)
            if batch_end_callback is not None:
                param = BatchEndParam(epoch, nbatch, eval_metric, locals())
                for cb in _as_list(batch_end_callback):
                    cb(param)
            done += 1
        if score_end_callback:
            param = BatchEndParam(epoch, done, eval_metric, locals())
            for cb in _as_list(score_end_callback):
                cb(param)
        return eval_metric.get_name_value()

    def _update_metric_of(self, eval_metric, batch):
        if isinstance(batch, list):
            self.update_metric(eval_metric, [b.label for b in batch], pre_sliced=True)
        else:
            self.update_metric(eval_metric, batch.label)

    def iter_predict(self, eval_data, num_batch=None, reset=True, sparse_row_id_fn=None):
        """Yield ``(outputs, nbatch, batch)`` per batch, padding cut off the outputs."""
        self._require("iter_predict", params=True)
        if reset:
            eval_data.reset()
        for nbatch, batch in enumerate(eval_data):
            if num_batch is not None and nbatch == num_batch:
                break
            self.prepare(batch, sparse_row_id_fn=sparse_row_id_fn)
            self.forward(batch, is_train=False)
            pad = batch.pad or 0
            yield [o[0:o.shape[0] - pad] for o in self.get_outputs()], nbatch, batch

    def predict(self, eval_data, num_batch=None, merge_batches=True, reset=True,
                always_output_list=False, sparse_row_id_fn=None):
        """Outputs over ``eval_data`` (a DataIter, or one NDArray / numpy batch).

        With ``merge_batches`` the batches are concatenated per output, and a single output
        comes back alone unless ``always_output_list``; without, a list per batch."""
        from ..io import DataBatch, DataIter
        self._require("predict", params=True)
        if isinstance(eval_data, (nd.NDArray, np.ndarray)):
            if isinstance(eval_data, np.ndarray):
                eval_data = nd.array(eval_data)
            self.forward(DataBatch([eval_data]))
            return self.get_outputs()[0]
        if not isinstance(eval_data, DataIter):
            raise ModuleError(f"predict: eval_data must be an NDArray or a DataIter, got "
                              f"{type(eval_data).__name__}")
        output_list = [[o.copy() for o in outputs] for outputs, _, _ in
                       self.iter_predict(eval_data, num_batch, reset, sparse_row_id_fn)]
        if not output_list or not merge_batches:
            return output_list
        num_outputs = len(output_list[0])
        if any(len(outs) != num_outputs for outs in output_list):
            raise ModuleError("predict: cannot merge batches whose numbers of outputs differ "
                              "(bucketing?); pass merge_batches=False")
        merged = [nd.concat(*[outs[i] for outs in output_list], dim=0)
                  for i in range(num_outputs)]
        return merged[0] if num_outputs == 1 and not always_output_list else merged

    def fit(self, train_data, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", optimizer="sgd",
            optimizer_params=(("learning_rate", 0.01),), eval_end_callback=None,
            eval_batch_end_callback=None, initializer=DEFAULT_INIT, arg_params=None,
            aux_params=None, allow_missing=False, force_rebind=False, force_init=False,
            begin_epoch=0, num_epoch=None, validation_metric=None, monitor=None,
            sparse_row_id_fn=None):
        """Train on ``train_data`` for epochs ``begin_epoch .. num_epoch-1``: bind, init
        parameters and optimizer, then per batch forward, backward, update and the metric;
        after each epoch log the training metric and time, call ``epoch_end_callback(epoch,
        symbol, arg_params, aux_params)`` and score ``eval_data``."""
        if num_epoch is None:
            raise ModuleError("fit: num_epoch is required")
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer,
                         arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        eval_metric = _metric(eval_metric)
        for epoch in range(begin_epoch, num_epoch):
            tic = time.time()
            eval_metric.reset()
            self._begin_epoch(epoch, train_data)
            batches = iter(train_data)
            next_batch = next(batches)
            nbatch, end = 0, False
            while not end:
                batch = next_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(batch)
                self.update()
                self._update_metric_of(eval_metric, batch)
                try:
                    next_batch = next(batches)
                    self.prepare(next_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end = True
                if monitor is not None:
                    monitor.toc_print()
                if end:
                    name_values = eval_metric.get_global_name_value()
                if batch_end_callback is not None:
                    param = BatchEndParam(epoch, nbatch, eval_metric, locals())
                    for cb in _as_list(batch_end_callback):
                        cb(param)
                nbatch += 1
            for name, value in name_values:
                self.logger.info("Epoch[%d] Train-%s=%f", epoch, name, value)
            self.logger.info("Epoch[%d] Time cost=%.3f", epoch, time.time() - tic)
            # sync the devices' parameters to the module's copy, and back
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for cb in _as_list(epoch_end_callback):
                    cb(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, value in res:
                    self.logger.info("Epoch[%d] Validation-%s=%f", epoch, name, value)
            train_data.reset()

    def _begin_epoch(self, epoch, train_data):
        """Called by ``fit`` before each epoch's first batch (SVRGModule's full-gradient
        pass); nothing here."""

    # -- symbol and parameters -------------------------------------------------------------
    @property
    def symbol(self):
        return self._symbol

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Called before each forward. ``sparse_row_id_fn(data_batch)`` gives, per
        row_sparse parameter, the rows the batch reads, which MXNet pulls from the KVStore
        here. A module here holds every parameter whole on each device and ``update``
        pulls whole parameters back, so those rows are already in place: the function is
        called and its answer checked, and nothing needs pulling. Without a KVStore that
        updates the parameters MXNet only warns, and so does this."""
        if sparse_row_id_fn is None:
            return
        if not getattr(self, "_kvstore", None) or not getattr(self, "_update_on_kvstore",
                                                              False):
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. No need "
                                      "to call sparse_row_id_fn."), stacklevel=2)
            return
        row_ids = sparse_row_id_fn(data_batch)
        if not isinstance(row_ids, dict):
            raise ModuleError(f"prepare: sparse_row_id_fn must return a dict of parameter "
                              f"name -> row ids, got {type(row_ids).__name__}")

    def save_params(self, fname):
        """Write the parameters as MXNet's ``.params`` file (``arg:`` / ``aux:`` keys)."""
        write_atomic(fname, self._params_bytes())

    def _params_bytes(self):
        """What ``save_params`` writes."""
        arg_params, aux_params = self.get_params()
        arrays = {f"arg:{k}": v.asnumpy() for k, v in arg_params.items()}
        arrays.update({f"aux:{k}": v.asnumpy() for k, v in aux_params.items()})
        return serialization.dumps(arrays)

    def load_params(self, fname):
        """Set the parameters from a ``.params`` file written by ``save_params``."""
        arg_params, aux_params = load_params_file(fname)
        self.set_params(arg_params, aux_params)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign parameter values (``init_params`` with no initializer)."""
        self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init,
                         allow_extra=allow_extra)

    def get_states(self, merge_multi_context=True):
        self._require("get_states", params=True)
        return []

    def set_states(self, states=None, value=None):
        self._require("set_states", params=True)
        if states or value:
            raise ModuleError("set_states: this module has no states")

    def install_monitor(self, mon):
        raise NotImplementedError

    def get_input_grads(self, merge_multi_context=True):
        raise NotImplementedError

    @property
    def data_names(self):
        raise NotImplementedError

    @property
    def output_names(self):
        raise NotImplementedError

    @property
    def data_shapes(self):
        raise NotImplementedError

    @property
    def label_shapes(self):
        raise NotImplementedError

    @property
    def output_shapes(self):
        raise NotImplementedError

    def get_params(self):
        raise NotImplementedError

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        raise NotImplementedError

    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None,
             grad_req="write"):
        raise NotImplementedError

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        raise NotImplementedError

    def forward(self, data_batch, is_train=None):
        raise NotImplementedError

    def backward(self, out_grads=None):
        raise NotImplementedError

    def get_outputs(self, merge_multi_context=True):
        raise NotImplementedError

    def update(self):
        raise NotImplementedError

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        raise NotImplementedError
