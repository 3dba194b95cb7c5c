"""``BucketingModule``: one ``Module`` per bucket key (e.g. a sequence length), made on
first sight by ``sym_gen(key)`` and sharing the default bucket's parameters, memory and
optimizer."""

from __future__ import annotations

import logging
import warnings

import numpy as np

from .. import ndarray as nd
from ..name import NameManager
from .base_module import DEFAULT_INIT, BaseModule
from .errors import ModuleError
from .module import Module, _check_input_names

__all__ = ["BucketingModule"]


class BucketingModule(BaseModule):
    """``sym_gen(bucket_key)`` returns ``(symbol, data_names, label_names)``; every batch's
    ``bucket_key`` selects (or makes) the module that runs it."""

    def __init__(self, sym_gen, default_bucket_key=None, logger=logging, context=None,
                 work_load_list=None, fixed_param_names=None, state_names=None,
                 group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        if default_bucket_key is None:
            raise ModuleError("BucketingModule: default_bucket_key is required")
        self._default_bucket_key = default_bucket_key
        self._sym_gen = sym_gen
        symbol, data_names, label_names = self._call_sym_gen(default_bucket_key)
        self._fixed_param_names = list(fixed_param_names or [])
        self._state_names = list(state_names or [])
        _check_input_names(symbol, list(data_names or []), "data", True)
        _check_input_names(symbol, list(label_names or []), "label", False)
        _check_input_names(symbol, self._state_names, "state", True)
        _check_input_names(symbol, self._fixed_param_names, "fixed_param", True)
        self._module_kwargs = dict(logger=logger, context=context,
                                   work_load_list=work_load_list,
                                   fixed_param_names=self._fixed_param_names,
                                   state_names=self._state_names, group2ctxs=group2ctxs,
                                   compression_params=compression_params)
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None
        self._params_dirty = False
        self._monitor = None
        self._grad_req = None

    def _call_sym_gen(self, key):
        with NameManager():
            return self._sym_gen(key)

    def _new_module(self, key, symbol=None):
        sym, data_names, label_names = self._call_sym_gen(key)
        return Module(sym if symbol is None else symbol, data_names, label_names,
                      **self._module_kwargs)

    def _reset_bind(self):
        self.binded = False
        self._buckets = {}
        self._curr_module = None
        self._curr_bucket_key = None

    # -- names and shapes ------------------------------------------------------------------
    @property
    def default_bucket_key(self):
        return self._default_bucket_key

    @property
    def data_names(self):
        if self.binded:
            return self._curr_module.data_names
        return self._call_sym_gen(self._default_bucket_key)[1]

    @property
    def output_names(self):
        if self.binded:
            return self._curr_module.output_names
        return self._call_sym_gen(self._default_bucket_key)[0].list_outputs()

    @property
    def data_shapes(self):
        self._require("data_shapes")
        return self._curr_module.data_shapes

    @property
    def label_shapes(self):
        self._require("label_shapes")
        return self._curr_module.label_shapes

    @property
    def output_shapes(self):
        self._require("output_shapes")
        return self._curr_module.output_shapes

    @property
    def symbol(self):
        self._require("symbol")
        return self._curr_module.symbol

    # -- parameters ------------------------------------------------------------------------
    def get_params(self):
        self._require("get_params", bound=False, params=True)
        self._curr_module._params_dirty = self._params_dirty
        params = self._curr_module.get_params()
        self._params_dirty = False
        return params

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._curr_module.set_params(arg_params, aux_params, allow_missing=allow_missing,
                                     force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require("init_params")
        self._curr_module.init_params(initializer=initializer, arg_params=arg_params,
                                      aux_params=aux_params, allow_missing=allow_missing,
                                      force_init=force_init, allow_extra=allow_extra)
        self._params_dirty = False
        self.params_initialized = True

    def get_states(self, merge_multi_context=True):
        self._require("get_states", params=True)
        return self._curr_module.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require("set_states", params=True)
        self._curr_module.set_states(states, value)

    # -- binding ---------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None,
             grad_req="write"):
        """Bind the default bucket's module; other buckets bind when first switched to."""
        params = self.get_params() if self.params_initialized else None
        if self._keeps_binding(force_rebind):
            return
        if shared_module is not None:
            raise ModuleError("bind: shared_module is not supported for BucketingModule")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.binded = True
        self._grad_req = grad_req
        key = self._default_bucket_key
        module = self._buckets.get(key) or self._new_module(key)
        module.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                    force_rebind=False, shared_module=None, grad_req=grad_req)
        self._curr_module, self._curr_bucket_key = module, key
        self._buckets[key] = module
        if params is not None:
            self.set_params(*params)

    def switch_bucket(self, bucket_key, data_shapes, label_shapes=None):
        """Make ``bucket_key``'s module current, binding it (sharing the default bucket's
        module) if new."""
        self._require("switch_bucket")
        module = self._buckets.get(bucket_key)
        if module is None:
            module = self._buckets[bucket_key] = self._new_module(bucket_key)
        if not module.binded:
            module.bind(data_shapes, label_shapes, self._curr_module.for_training,
                        self._curr_module.inputs_need_grad, force_rebind=False,
                        shared_module=self._buckets[self._default_bucket_key],
                        grad_req=self._grad_req)
            if self._monitor is not None:
                module.install_monitor(self._monitor)
        self._curr_module, self._curr_bucket_key = module, bucket_key

    # -- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if self._keeps_optimizer(force_init):
            return
        self._curr_module.init_optimizer(kvstore, optimizer, optimizer_params,
                                         force_init=force_init)
        for module in self._buckets.values():
            if module is not self._curr_module:
                module.borrow_optimizer(self._curr_module)
        self.optimizer_initialized = True

    # -- running ---------------------------------------------------------------------------
    def prepare(self, data_batch, sparse_row_id_fn=None):
        self._require("prepare")
        original = self._curr_bucket_key
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self.switch_bucket(original, None, None)

    def forward(self, data_batch, is_train=None):
        self._require("forward", params=True)
        self.switch_bucket(data_batch.bucket_key, data_batch.provide_data,
                           data_batch.provide_label)
        self._curr_module.forward(data_batch, is_train=is_train)

    def backward(self, out_grads=None):
        self._require("backward", params=True)
        self._curr_module.backward(out_grads=out_grads)

    def update(self):
        self._require("update", params=True, optimizer=True)
        self._params_dirty = True
        self._curr_module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require("get_outputs", params=True)
        return self._curr_module.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require("get_input_grads", params=True)
        return self._curr_module.get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._require("update_metric", params=True)
        self._curr_module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._require("install_monitor")
        self._monitor = mon
        for module in self._buckets.values():
            module.install_monitor(mon)

    # -- checkpoints -----------------------------------------------------------------------
    def save_checkpoint(self, prefix, epoch, remove_amp_cast=False):
        """Write ``prefix-%04d.params``, one ``prefix-<key>-symbol.json`` per bucket and
        the bucket keys (integers) in ``prefix.buckets``."""
        if not self._buckets:
            raise ModuleError("save_checkpoint: the BucketingModule has no buckets")
        self.save_params(f"{prefix}-{epoch:04d}.params")
        for key in self._buckets:
            symbol = self._call_sym_gen(key)[0]
            symbol.save(f"{prefix}-{key}-symbol.json", remove_amp_cast=remove_amp_cast)
        nd.save(f"{prefix}.buckets", nd.array(list(self._buckets), dtype=np.int32))

    @staticmethod
    def load(prefix, epoch, sym_gen=None, default_bucket_key=None, **kwargs):
        """A BucketingModule over a ``save_checkpoint`` of one (bind it before use)."""
        from .. import symbol
        from .._checkpoint import load_params
        if sym_gen is None or default_bucket_key is None:
            raise ModuleError("BucketingModule.load: sym_gen and default_bucket_key are "
                              "required")
        keys = [int(k) for k in nd.load(f"{prefix}.buckets")[0].asnumpy()]
        syms = {k: symbol.load(f"{prefix}-{k}-symbol.json") for k in keys}
        return BucketingModule.load_dict(syms, sym_gen, default_bucket_key,
                                         *load_params(prefix, epoch), **kwargs)

    @staticmethod
    def load_dict(sym_dict=None, sym_gen=None, default_bucket_key=None, arg_params=None,
                  aux_params=None, **kwargs):
        """A BucketingModule over ``{bucket_key: symbol}`` and the given parameters."""
        if sym_dict is None or arg_params is None or aux_params is None \
                or default_bucket_key is None:
            raise ModuleError("BucketingModule.load_dict: sym_dict, arg_params, aux_params "
                              "and default_bucket_key are required")
        mod = BucketingModule(sym_gen, default_bucket_key, **kwargs)
        for key, sym in sym_dict.items():
            mod._buckets[key] = mod._new_module(key, symbol=sym)
        if default_bucket_key not in mod._buckets:
            mod._buckets[default_bucket_key] = mod._new_module(default_bucket_key)
        mod._curr_module = mod._buckets[default_bucket_key]
        mod._curr_module._arg_params = arg_params
        mod._curr_module._aux_params = aux_params
        mod._curr_module.params_initialized = True
        mod.params_initialized = True
        return mod
