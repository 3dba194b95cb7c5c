"""``SequentialModule``: modules chained so each one's outputs are the next one's data."""

from __future__ import annotations

import copy
import logging

from .base_module import DEFAULT_INIT, BaseModule
from .errors import ModuleError

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """``add(module, take_labels=False, auto_wiring=False)`` appends a module: with
    ``take_labels`` it gets the batch's labels (and updates the metric); with
    ``auto_wiring`` the previous outputs are renamed to its ``data_names``."""

    META_TAKE_LABELS = "take_labels"
    META_AUTO_WIRING = "auto_wiring"
    _META_KEYS = (META_TAKE_LABELS, META_AUTO_WIRING)

    def __init__(self, logger=logging):
        super().__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None

    def add(self, module, **kwargs):
        """Append ``module``; returns self, so calls chain."""
        unknown = sorted(set(kwargs) - set(self._META_KEYS))
        if unknown:
            raise ModuleError(f"SequentialModule.add: unknown meta {unknown}; known: "
                              f"{list(self._META_KEYS)}")
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = self.params_initialized = self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(self.META_TAKE_LABELS, False))

    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._require("data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._require("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require("output_shapes")
        return self._modules[-1].output_shapes

    def get_params(self):
        self._require("get_params", params=True)
        arg_params, aux_params = {}, {}
        for module in self._modules:
            args, auxs = module.get_params()
            arg_params.update(args)
            aux_params.update(auxs)
        return arg_params, aux_params

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        if self.params_initialized and not force_init:
            return
        self._require("init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)
        for kind in (0, 1):                  # no name may appear in two modules
            owner = {}
            for i, module in enumerate(self._modules):
                for name in module.get_params()[kind]:
                    if name in owner:
                        raise ModuleError(f"SequentialModule: parameter {name!r} of module "
                                          f"{i} is already used by module {owner[name]}")
                    owner[name] = i
        self.params_initialized = True

    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None,
             grad_req="write"):
        """Bind each module to the previous one's output shapes; every module after the
        first computes its input gradients when training."""
        if self.binded and not force_rebind:
            self.logger.warning("Already bound, ignoring bind()")
            return
        if inputs_need_grad and not for_training:
            raise ModuleError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise ModuleError("bind: shared_module is not supported for SequentialModule")
        if not self._modules:
            raise ModuleError("bind: the SequentialModule is empty")
        self.binded = True
        self.for_training, self.inputs_need_grad = for_training, inputs_need_grad
        self._label_shapes = label_shapes
        shapes = data_shapes
        for i, module in enumerate(self._modules):
            if self._metas[i].get(self.META_AUTO_WIRING, False):
                names = module.data_names
                if len(names) != len(shapes):
                    raise ModuleError(f"bind: module {i} takes {len(names)} data inputs; "
                                      f"the previous module gives {len(shapes)}")
                shapes = [(name, shape) for name, (_, shape) in zip(names, shapes)]
            module.bind(data_shapes=shapes,
                        label_shapes=label_shapes if self._takes_labels(i) else None,
                        for_training=for_training,
                        inputs_need_grad=bool(inputs_need_grad or (for_training and i > 0)),
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            shapes = module.output_shapes
        if not any(self._takes_labels(i) for i in range(len(self._modules))):
            self._label_shapes = None

    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        if self._keeps_optimizer(force_init):
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    def forward(self, data_batch, is_train=None):
        self._require("forward", params=True)
        batch = copy.copy(data_batch)        # keeps pad, bucket_key, ...
        for i, module in enumerate(self._modules):
            module.forward(batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            batch.data = module.get_outputs()
            if getattr(batch, "provide_data", None) is not None:
                names = [name for name, _ in module.output_shapes]
                batch.provide_data = [(n, x.shape) for n, x in zip(names, batch.data)]

    def backward(self, out_grads=None):
        self._require("backward", params=True)
        for i in range(len(self._modules) - 1, -1, -1):
            self._modules[i].backward(out_grads=out_grads)
            if i:
                out_grads = self._modules[i].get_input_grads()

    def update(self):
        self._require("update", params=True, optimizer=True)
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require("get_outputs", params=True)
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require("get_input_grads", params=True)
        if not self.inputs_need_grad:
            raise ModuleError("get_input_grads: bound with inputs_need_grad=False")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._require("update_metric", params=True)
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._require("install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
