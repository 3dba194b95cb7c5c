"""MXNet's older training API, ``mx.model.FeedForward`` (deprecated in MXNet in favour of
``mx.mod.Module``, and still imported by its scripts).

Training runs through ``mx.mod.Module`` (``BucketingModule`` when the symbol is a
``sym_gen``), so several contexts and a kvstore work as they do there; prediction and
scoring bind one executor on the first context. Validation metrics are logged by that
fit loop, so ``eval_end_callback`` defaults to None rather than MXNet's
``LogValidationMetricsCallback()``, which would log them twice.
"""

from __future__ import annotations

import logging
import warnings

import numpy as np

from .. import io
from .. import metric as _metric
from .. import ndarray as nd
from .. import symbol as sym
from .._runtime.base import MXNetError
from .._runtime.context import Context, cpu
from ..initializer import Uniform
from ..module import BucketingModule, Module
from ..module.base_module import BatchEndParam
from .._checkpoint import load_checkpoint, save_checkpoint

__all__ = ["FeedForward"]


class FeedForward:
    """A network ``symbol`` (or ``sym_gen(bucket_key)``) with its parameters, trained by
    ``fit`` on ``ctx`` (a context or a list); ``kwargs`` go to the optimizer."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer="sgd",
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn("mxnext.model.FeedForward is deprecated, as in MXNet; use "
                      "mxnext.mod.Module instead", DeprecationWarning, stacklevel=2)
        if isinstance(symbol, sym.Symbol):
            self.symbol, self.sym_gen = symbol, None
        elif callable(symbol):
            self.symbol, self.sym_gen = None, symbol
        else:
            raise TypeError(f"FeedForward: symbol must be a Symbol or a callable "
                            f"sym_gen(bucket_key), got {type(symbol).__name__}")
        self.arg_params, self.aux_params = arg_params, aux_params
        self.allow_extra_params = allow_extra_params
        if allow_extra_params and self.symbol is not None:
            self._drop_extra_params()
        self.ctx = [cpu()] if ctx is None else [ctx] if isinstance(ctx, Context) else list(ctx)
        self.num_epoch, self.epoch_size = num_epoch, epoch_size
        self.optimizer, self.initializer = optimizer, initializer
        self.numpy_batch_size = numpy_batch_size
        self.begin_epoch = begin_epoch
        self.kwargs = kwargs.copy()
        self._pred_exec = None

    def _drop_extra_params(self):
        args, auxs = set(self.symbol.list_arguments()), set(self.symbol.list_auxiliary_states())
        if self.arg_params:
            self.arg_params = {k: v for k, v in self.arg_params.items() if k in args}
        if self.aux_params:
            self.aux_params = {k: v for k, v in self.aux_params.items() if k in auxs}

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_pred_exec"] = None
        return state

    # -- data --------------------------------------------------------------------------
    def _init_iter(self, X, y, is_train):
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError("FeedForward: y must be given when X is an array")
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError(f"FeedForward: y must be an array when X is one, got "
                                f"{type(y).__name__}")
            if X.shape[0] != y.shape[0]:
                raise ValueError(f"FeedForward: X has {X.shape[0]} examples but y has "
                                 f"{y.shape[0]} labels")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.reshape((y.shape[0],))
            if y.ndim != 1:
                raise ValueError(f"FeedForward: y must be 1-D (or 2-D with one column), got "
                                 f"shape {tuple(y.shape)}")
            batch_size = min(X.shape[0], self.numpy_batch_size)
            if is_train:
                return io.NDArrayIter(X, y, batch_size, shuffle=True,
                                      last_batch_handle="roll_over")
            return io.NDArrayIter(X, y, batch_size, shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError(f"FeedForward: X must be a DataIter, NDArray or numpy.ndarray, "
                            f"got {type(X).__name__}")
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None or isinstance(eval_data, io.DataIter):
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            data, label = eval_data
            if data is None:
                raise ValueError("FeedForward: eval_data's data is None")
            if label is None and isinstance(data, io.DataIter):
                return data
            data = np.array(data) if isinstance(data, list) else data
            label = np.array(label) if isinstance(label, list) else label
            return self._init_iter(data, label, is_train=True)
        raise TypeError(f"FeedForward: eval_data must be a DataIter or a (data, label) pair "
                        f"of arrays, got {type(eval_data).__name__}")

    # -- training ----------------------------------------------------------------------
    def fit(self, X, y=None, eval_data=None, eval_metric="acc", epoch_end_callback=None,
            batch_end_callback=None, kvstore="local", logger=None, work_load_list=None,
            monitor=None, eval_end_callback=None, eval_batch_end_callback=None):
        """Train for epochs ``begin_epoch .. num_epoch-1`` on ``X`` (a DataIter, or arrays
        with labels ``y``); ``eval_data`` (a DataIter or a (data, label) pair) is scored
        after each epoch. The trained parameters end in ``arg_params``/``aux_params``."""
        if self.num_epoch is None:
            raise MXNetError("FeedForward.fit: num_epoch is not set (give it to the "
                             "constructor)")
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        data_names = [d[0] for d in data.provide_data]
        label_names = [d[0] for d in data.provide_label]
        common = dict(logger=logger or logging, context=self.ctx, work_load_list=work_load_list)
        if self.sym_gen is not None:
            self.symbol = self.sym_gen(data.default_bucket_key)
            mod = BucketingModule(lambda key: (self.sym_gen(key), data_names, label_names),
                                  default_bucket_key=data.default_bucket_key, **common)
        else:
            mod = Module(self.symbol, data_names=data_names, label_names=label_names, **common)
        if self.epoch_size is not None:
            data = io.ResizeIter(data, self.epoch_size, reset_internal=False)
        mod.fit(data, eval_data=eval_data, eval_metric=eval_metric,
                epoch_end_callback=epoch_end_callback, batch_end_callback=batch_end_callback,
                kvstore=kvstore, optimizer=self.optimizer, optimizer_params=self.kwargs,
                eval_end_callback=eval_end_callback,
                eval_batch_end_callback=eval_batch_end_callback,
                initializer=self.initializer, arg_params=self.arg_params,
                aux_params=self.aux_params, allow_missing=True,
                begin_epoch=self.begin_epoch, num_epoch=self.num_epoch, monitor=monitor)
        self.arg_params, self.aux_params = mod.get_params()
        self._pred_exec = None

    # -- inference ---------------------------------------------------------------------
    def _predictor(self, data_iter):
        """An executor on the first context for ``data_iter``'s shapes, with the model's
        parameters (rebound only when the shapes changed)."""
        if self.arg_params is None:
            raise MXNetError("FeedForward: the model has no parameters yet (fit or load it)")
        shapes = {d[0]: tuple(d[1]) for d in data_iter.provide_data}
        if self._pred_exec is not None and all(
                self._pred_exec.arg_dict[k].shape == s for k, s in shapes.items()):
            return self._pred_exec
        types = {k: v.dtype for k, v in self.arg_params.items()}
        types.update({d[0]: getattr(d, "dtype", np.float32) for d in data_iter.provide_data})
        all_shapes = {k: v.shape for k, v in self.arg_params.items()}
        all_shapes.update(shapes)
        ex = self.symbol.simple_bind(self.ctx[0], grad_req="null", type_dict=types,
                                     **all_shapes)
        ex.copy_params_from(self.arg_params, self.aux_params,
                            allow_extra_params=self.allow_extra_params)
        self._pred_exec = ex
        return ex

    def _batches(self, X, num_batch, reset):
        """(executor, batch) for each batch of ``X`` after its forward pass."""
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        ex = self._predictor(X)
        names = [d[0] for d in X.provide_data]
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            for name, arr in zip(names, batch.data):
                arr.copyto(ex.arg_dict[name])
            ex.forward(is_train=False)
            yield ex, batch

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """The outputs for ``X`` (numpy; a list when the network has several), on the first
        context; with ``return_data`` also ``(data, label)`` of the batches read."""
        outs, datas, labels = [], [], []
        for ex, batch in self._batches(X, num_batch, reset):
            real = batch.data[0].shape[0] - (batch.pad or 0)
            outs.append([o[:real].asnumpy() for o in ex.outputs])
            if return_data:
                datas.append([d[:real].asnumpy() for d in batch.data])
                labels.append([lb[:real].asnumpy() for lb in batch.label])

        def joined(parts):
            cols = [np.concatenate(col) for col in zip(*parts)]
            return cols[0] if len(cols) == 1 else cols

        outputs = joined(outs)
        return (outputs, joined(datas), joined(labels)) if return_data else outputs

    def score(self, X, eval_metric="acc", num_batch=None, batch_end_callback=None,
              reset=True):
        """The value of ``eval_metric`` over ``X`` (the first one, for a composite)."""
        if not isinstance(eval_metric, _metric.EvalMetric):
            eval_metric = _metric.create(eval_metric)
        for i, (ex, batch) in enumerate(self._batches(X, num_batch, reset)):
            eval_metric.update(batch.label, ex.outputs)
            for cb in (batch_end_callback if isinstance(batch_end_callback, list)
                       else [batch_end_callback] if batch_end_callback else []):
                cb(BatchEndParam(0, i, eval_metric, locals()))
        return eval_metric.get()[1]

    # -- files -------------------------------------------------------------------------
    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """Write the checkpoint ``prefix-symbol.json`` and ``prefix-%04d.params`` of
        ``epoch`` (``num_epoch`` by default)."""
        epoch = self.num_epoch if epoch is None else epoch
        if epoch is None:
            raise MXNetError("FeedForward.save: give epoch (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params or {},
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward over the checkpoint ``prefix``/``epoch``, continuing from it."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None,
               optimizer="sgd", initializer=Uniform(0.01), eval_data=None,
               eval_metric="acc", epoch_end_callback=None, batch_end_callback=None,
               kvstore="local", logger=None, work_load_list=None, eval_end_callback=None,
               eval_batch_end_callback=None, **kwargs):
        """A FeedForward made and fitted in one call."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model
