"""``Module``: a Symbol with its parameters, bound on one or more contexts, trained
through an optimizer (locally or in a KVStore)."""

from __future__ import annotations

import logging
import os
import warnings

import numpy as np

from .. import ndarray as nd
from .._runtime.base import ShapeError
from .._runtime.context import Context, cpu
from ..initializer import InitDesc
from ..io import DataDesc
from ..optimizer._states_file import checked_load, load_states_file, save_states_file
from ._checkpoint_pair import check_pair, params_digest, save_pair
from .base_module import DEFAULT_INIT, BaseModule
from .errors import ModuleError
from .executor_group import DataParallelExecutorGroup, _as_descs

__all__ = ["Module"]

_PARAM_SUFFIXES = ("_weight", "_bias", "_gamma", "_beta")


def _check_input_names(symbol, names, typename, throw):
    args = symbol.list_arguments()
    for name in names:
        if name in args:
            continue
        candidates = [a for a in args if not a.endswith(_PARAM_SUFFIXES)]
        msg = (f"Module(..., {typename}_names={list(names)}): input {name!r} is not among "
               f"symbol.list_arguments(); inputs that are not parameters: {candidates}")
        if throw:
            raise ModuleError(msg)
        warnings.warn(msg, stacklevel=3)


def _descs(names, shapes, kind, throw):
    descs = _as_descs(shapes or [])
    if sorted(names) != sorted(d.name for d in descs):
        msg = (f"bind: {kind}_shapes name {[d.name for d in descs]}, which do not match "
               f"{kind}_names {list(names)}")
        if throw:
            raise ModuleError(msg)
        warnings.warn(msg, stacklevel=3)
    return descs


def _create_kvstore(kvstore, num_device, arg_params):
    """(kvstore or None, update_on_kvstore), as MXNet's ``model._create_kvstore``: one
    device and a non-distributed type need no store."""
    from .. import kvstore as kvs
    update_on_kvstore = os.environ.get("MXNET_UPDATE_ON_KVSTORE", "1") not in ("0", "")
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, kvs.KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = kvs.create(kvstore)
            if kvstore == "local" and arg_params:
                largest = max(int(np.prod(p.shape)) for p in arg_params.values())
                if largest > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise ModuleError(f"init_optimizer: kvstore must be a KVStore, a type name or None, "
                          f"got {type(kvstore).__name__}")
    return kv, (update_on_kvstore if kv is not None else False)


class Module(BaseModule):
    """``symbol`` with inputs ``data_names`` and ``label_names``; every other argument is a
    parameter, trained unless in ``fixed_param_names``. ``state_names`` are inputs kept
    across batches (``set_states``). ``context`` may be a list: the batch is split
    across the contexts by ``work_load_list``."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None):
        super().__init__(logger=logger)
        context = cpu() if context is None else context
        self._context = [context] if isinstance(context, Context) else list(context)
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ModuleError(f"Module: work_load_list has {len(work_load_list)} entries for "
                              f"{len(self._context)} contexts")
        self._work_load_list = list(work_load_list)
        self._group2ctxs = group2ctxs
        self._symbol = symbol
        data_names = list(data_names or [])
        label_names = list(label_names or [])
        state_names = list(state_names or [])
        fixed_param_names = list(fixed_param_names or [])
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)
        inputs = data_names + label_names + state_names
        self._param_names = [a for a in symbol.list_arguments() if a not in inputs]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names, self._label_names = data_names, label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()
        self._compression_params = compression_params
        self._arg_params = self._aux_params = None
        self._params_dirty = False
        self._optimizer = self._kvstore = self._update_on_kvstore = self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    # -- checkpoints -----------------------------------------------------------------------
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module over the checkpoint ``prefix``/``epoch`` (``Module`` keyword arguments in
        ``kwargs``); bind it before use. With ``load_optimizer_states`` the ``.states``
        file is loaded at ``init_optimizer``."""
        from .. import symbol
        from .._checkpoint import load_params_file
        params_name = f"{prefix}-{epoch:04d}.params"
        with open(params_name, "rb") as f:
            data = f.read()
        mod = Module(symbol=symbol.load(f"{prefix}-symbol.json"), **kwargs)
        mod._arg_params, mod._aux_params = load_params_file(params_name, data)
        mod.params_initialized = True
        if load_optimizer_states:
            states_name = f"{prefix}-{epoch:04d}.states"
            check_pair(params_name, params_digest(data), states_name, "Module.load")
            mod._preload_opt_states = states_name
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False,
                        remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states`` as a pair that ``Module.load``
        checks (``_checkpoint_pair``)."""
        self._symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
        param_name = f"{prefix}-{epoch:04d}.params"
        state_name = f"{prefix}-{epoch:04d}.states"
        states = self._states_bytes() if save_optimizer_states else None
        if states is not None:
            save_pair(param_name, self._params_bytes(), state_name, states)
        else:
            self.save_params(param_name)
            if save_optimizer_states:       # a store that keeps its states its own way
                self.save_optimizer_states(state_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            logging.info('Saved optimizer state to "%s"', state_name)

    def _states_bytes(self):
        """What ``save_optimizer_states`` writes, or None when a KVStore writes it."""
        self._require("save_optimizer_states", optimizer=True)
        updater = (getattr(self._kvstore, "_updater", None) if self._update_on_kvstore
                   else self._updater)
        return updater.get_states() if hasattr(updater, "get_states") else None

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = self._label_shapes = None

    # -- names and shapes ------------------------------------------------------------------
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        self._require("data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        self._require("label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require("output_shapes")
        return self._exec_group.get_output_shapes()

    # -- parameters ------------------------------------------------------------------------
    def get_params(self):
        """(arg_params, aux_params): the module's copies, averaged over the devices."""
        self._require("get_params", bound=False, params=True)
        if self._params_dirty:
            self._sync_params_from_devices()
        return self._arg_params, self._aux_params

    def init_params(self, initializer=DEFAULT_INIT, arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Give every parameter a value: from ``arg_params`` / ``aux_params`` when they
        hold it, otherwise from ``initializer`` (told the variable's attributes, so an
        ``__init__`` attribute wins); a parameter missing from given dicts is an error
        unless ``allow_missing``."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        self._require("init_params")
        attrs = self._symbol.attr_dict()

        def fill(name, arr, given):
            if given is not None and name in given:
                if tuple(given[name].shape) != arr.shape:
                    raise ShapeError(f"init_params: parameter {name!r} has shape "
                                     f"{tuple(given[name].shape)}, the symbol needs "
                                     f"{arr.shape}")
                if given[name] is not arr:
                    given[name].copyto(arr)
                return
            if given is not None and not allow_missing:
                raise ModuleError(f"init_params: parameter {name!r} is not in the given "
                                  f"params (pass allow_missing=True to initialize it)")
            if initializer is not None:
                initializer(InitDesc(name, attrs.get(name)), arr)

        for name, arr in sorted(self._arg_params.items()):
            fill(name, arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            fill(name, arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params,
                                    allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Copy values onto the devices; without ``allow_missing`` every parameter must be
        given (as ``init_params``)."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # -- binding ---------------------------------------------------------------------------
    def bind(self, data_shapes, label_shapes=None, for_training=True,
             inputs_need_grad=False, force_rebind=False, shared_module=None,
             grad_req="write"):
        """Make the executors: ``data_shapes`` / ``label_shapes`` are DataDesc or (name,
        shape) pairs; ``shared_module``'s parameters and memory are shared."""
        if self._keeps_binding(force_rebind):
            return
        if not for_training and inputs_need_grad:
            raise ModuleError("bind: inputs_need_grad=True needs for_training=True")
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        self._data_shapes = _descs(self._data_names, data_shapes, "data", True)
        self._label_shapes = (_descs(self._label_names, label_shapes, "label", False)
                              if label_shapes is not None else None)
        if label_shapes is None:
            _descs(self._label_names, [], "label", False)
        shared_group = None
        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded
                    and shared_module.params_initialized):
                raise ModuleError("bind: shared_module must be a bound Module with "
                                  "initialized parameters")
            shared_group = shared_module._exec_group
            if len(shared_group.execs) < len(self._context):
                raise ModuleError("bind: shared_module has fewer contexts than this module")
        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, state_names=self._state_names, group2ctxs=self._group2ctxs)
        self.binded = True
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters given before binding (Module.load, or a rebind)
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            group = self._exec_group
            self._arg_params = {n: nd.zeros(arrs[0].shape, dtype=arrs[0].dtype,
                                            stype=arrs[0].stype)
                                for n, arrs in zip(group.param_names, group.param_arrays)}
            self._aux_params = {n: nd.zeros(arrs[0].shape, dtype=arrs[0].dtype)
                                for n, arrs in zip(group.aux_names, group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)

    def reshape(self, data_shapes, label_shapes=None):
        """Rebind for new input shapes (e.g. a last, smaller batch)."""
        self._require("reshape")
        self._data_shapes = _descs(self._data_names, data_shapes, "data", True)
        self._label_shapes = (_descs(self._label_names, label_shapes, "label", False)
                              if label_shapes is not None else None)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # -- optimizer -------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Set the optimizer (a name or an Optimizer; ``rescale_grad`` defaults to
        1/batch_size) and the KVStore that sums the devices' gradients."""
        from .. import optimizer as opt
        if self._keeps_optimizer(force_init, "ignoring..."):
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore is not None and "dist" in kvstore.type and "_sync" in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size
        names = self._exec_group.param_names
        ndev = len(self._context)
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * ndev + k: n for k in range(ndev) for i, n in enumerate(names)}
        if isinstance(optimizer, str):
            params = dict(optimizer_params)
            params.setdefault("rescale_grad", rescale_grad)
            optimizer = opt.create(optimizer, sym=self._symbol, param_idx2name=idx2name,
                                   **params)
        elif isinstance(optimizer, opt.Optimizer):
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(f"Optimizer created manually outside Module but rescale_grad "
                              f"is not normalized to 1.0/batch_size/num_workers "
                              f"({optimizer.rescale_grad} vs. {rescale_grad}). Is this "
                              f"intended?", stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()
        else:
            raise ModuleError(f"init_optimizer: optimizer must be a name or an Optimizer, "
                              f"got {type(optimizer).__name__}")
        self._optimizer, self._kvstore = optimizer, kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore is not None:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(optimizer)
            for name, on_devs in zip(names, self._exec_group.param_arrays):
                if update_on_kvstore:
                    kvstore.broadcast(name, self._arg_params[name], out=on_devs)
                else:
                    kvstore.init(name, self._arg_params[name])
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, KVStore and updater (bucketing)."""
        if not shared_module.optimizer_initialized:
            raise ModuleError("borrow_optimizer: the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    def save_optimizer_states(self, fname):
        """Write the optimizer's states (pickle bytes, MXNet's ``.states`` format)."""
        self._require("save_optimizer_states", optimizer=True)
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            save_states_file(self._updater, fname)

    def load_optimizer_states(self, fname):
        """Load a ``.states`` file written by ``save_optimizer_states``; states that do not
        fit the bound parameters raise ``StatesFormatError`` and are not loaded."""
        self._require("load_optimizer_states", optimizer=True)
        group, what = self._exec_group, "Module.load_optimizer_states"
        if self._update_on_kvstore:
            weights = {name: (name, arrays[0])
                       for name, arrays in zip(group.param_names, group.param_arrays)}
            checked_load(getattr(self._kvstore, "_updater", None),
                         lambda: self._kvstore.load_optimizer_states(fname), weights,
                         f"{what}: {fname!r}")
        else:
            ndev = len(self._context)
            weights = {i * ndev + k: (name, w)
                       for i, (name, arrays) in enumerate(zip(group.param_names,
                                                              group.param_arrays))
                       for k, w in enumerate(arrays)}
            load_states_file(self._updater, fname, what, weights)

    # -- running ---------------------------------------------------------------------------
    def forward(self, data_batch, is_train=None):
        """Run the executors on ``data_batch`` (rebinding first when its shapes differ
        from the bound ones); ``is_train`` defaults to ``for_training``."""
        self._require("forward", params=True)
        bound = tuple(d.shape for d in self._data_shapes)
        new = tuple(d.shape for d in data_batch.data)
        if bound != new:
            if getattr(data_batch, "provide_data", None):
                dshapes = data_batch.provide_data
            else:
                dshapes = [DataDesc(d.name, s, d.dtype, d.layout)
                           for d, s in zip(self._data_shapes, new)]
            if getattr(data_batch, "provide_label", None):
                lshapes = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                lshapes = [DataDesc(d.name, l.shape, d.dtype, d.layout)
                           for d, l in zip(self._label_shapes, data_batch.label)]
            else:
                lshapes = None
            self.reshape(dshapes, lshapes)
        self._exec_group.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward through every executor (``out_grads`` for outputs that are not losses)."""
        self._require("backward", params=True)
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Apply the optimizer to every trained parameter: in the KVStore, or here after
        the KVStore (if any) summed the devices' gradients."""
        self._require("update", params=True, optimizer=True)
        self._params_dirty = True
        group = self._exec_group
        if self._update_on_kvstore:
            for name, weights, grads in zip(group.param_names, group.param_arrays,
                                            group.grad_arrays):
                if grads[0] is not None:
                    self._kvstore.pushpull(name, grads, out=weights)
            return
        ndev = len(self._context)
        per_device = [[] for _ in range(ndev)]
        for i, (name, weights, grads) in enumerate(zip(group.param_names,
                                                       group.param_arrays,
                                                       group.grad_arrays)):
            if grads[0] is None:
                continue
            if self._kvstore is not None:
                self._kvstore.pushpull(name, grads)
            for k, (w, g) in enumerate(zip(weights, grads)):
                per_device[k].append((i * ndev + k, g, w))
        for updates in per_device:
            if updates:
                idx, grads, weights = zip(*updates)
                self._updater(list(idx), list(grads), list(weights))

    def get_outputs(self, merge_multi_context=True):
        """The outputs: one array each (merged over devices) or a list per device."""
        self._require("get_outputs", params=True)
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._require("get_input_grads", params=True)
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._require("get_states", params=True)
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        """Set the ``state_names`` inputs from ``states`` (per state, per device) or to
        ``value``."""
        self._require("set_states", params=True)
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        """``mon.install(executor)`` for each executor."""
        self._require("install_monitor")
        self._exec_group.install_monitor(mon)
