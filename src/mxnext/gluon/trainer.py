"""MXNet 1.9's ``gluon.Trainer``: applies an optimizer to Parameters after
``autograd.backward``, summing the gradients of their context copies (and of the workers of
a dist KVStore) through a KVStore.

The update runs either in the KVStore (``update_on_kvstore``: push gradients, pull weights)
or here, one ``Updater`` per context after the KVStore summed the gradients. The KVStore is
created at the first ``step`` (or ``allreduce_grads``, ``update``, ``save_states``,
``load_states``), when the parameters' contexts and shapes are known.
"""

from __future__ import annotations

import math
import os

from .. import optimizer as opt
from ..kvstore import KVStoreBase
from ..kvstore import create as _create_kvstore_named
from ..optimizer._states_file import checked_load, load_states_file, save_states_file
from .parameter import Parameter, ParameterDict

__all__ = ["Trainer"]

# the largest parameter (elements) a 'local' store updates itself; above it the update runs
# here (MXNet's rule in model._create_kvstore)
_LOCAL_UPDATE_MAX = 1024 * 1024 * 16


def _capable(kv) -> bool:
    try:
        return bool(kv.is_capable(KVStoreBase.OPTIMIZER))
    except NotImplementedError:
        return False


def _create_kvstore(kvstore, num_device, params):
    """(KVStore or None, update_on_kvstore) as MXNet's ``model._create_kvstore``: no store
    for one device unless distributed; updates on the store unless
    ``MXNET_UPDATE_ON_KVSTORE=0``, the store cannot run an optimizer, or a 'local' store
    holds a parameter above 16M elements."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None
        else:
            kv = _create_kvstore_named(kvstore)
            if kvstore == "local" and any(
                    math.prod(p.shape or ()) > _LOCAL_UPDATE_MAX for p in params):
                update_on_kvstore = False
    else:
        raise TypeError(f"Trainer: kvstore must be a KVStore, a KVStore type name or None, "
                        f"got {type(kvstore).__name__}")
    if kv is None:
        return None, False
    return kv, update_on_kvstore and _capable(kv)


def _create_sparse_kvstore(kvstore, update_on_kvstore):
    """The store of a Trainer with row_sparse weights (MXNet's rule): always one, even for
    one device, and it updates them."""
    if isinstance(kvstore, str):
        kvstore = _create_kvstore_named(kvstore)
    elif not isinstance(kvstore, KVStoreBase):
        raise TypeError(f"Cannot create {kvstore!r} KVStore with row_sparse parameters. The "
                        f"type must be KVStore or str.")
    if not _capable(kvstore):
        raise ValueError(f"KVStore with sparse weight requires optimizer support, which "
                         f"{type(kvstore)} lacks")
    if update_on_kvstore is False:
        raise ValueError("Cannot set update_on_kvstore=False when sparse weights are present.")
    return kvstore


def _values(param):
    """The parameter's arrays on its contexts (row_sparse ones included)."""
    return param._check_and_get(param._data, list)


_STALE = ("Gradient of Parameter `{}` on context {} has not been updated by backward since "
          "last `step`. This could mean a bug in your model that made it only use a subset "
          "of the Parameters (Blocks) for this iteration. If you are intentionally only using "
          "a subset, call step with ignore_stale_grad=True to suppress this warning and skip "
          "updating of Parameters with stale gradient")


class Trainer:
    """Applies ``optimizer`` (a name with ``optimizer_params``, or an Optimizer) to
    ``params`` (a ParameterDict, a dict or a list of Parameters; a dict in sorted key
    order). ``kvstore`` is a type name (``'device'``, ``'local'``, ``'dist_sync'``...), a
    KVStore or None; ``compression_params`` go to its ``set_gradient_compression``.
    ``update_on_kvstore`` None lets MXNet's rules choose (``MXNET_UPDATE_ON_KVSTORE``); an
    async dist store always updates on the store.

    Parameters
    ----------
    params : ParameterDict, dict or list of Parameter
        The parameters to update (``block.collect_params()``).
    optimizer : str or Optimizer
        An optimizer name (``'sgd'``, ``'adam'``...) or an Optimizer instance.
    optimizer_params : dict, optional
        Keyword arguments for the optimizer's constructor when ``optimizer`` is a name
        (``{'learning_rate': 0.1}``).
    kvstore : str, KVStore or None, default 'device'
        How gradients are aggregated across devices or workers; None for no KVStore.
    compression_params : dict, optional
        Gradient compression for the KVStore (``{'type': '2bit', 'threshold': 0.5}``).
    update_on_kvstore : bool, optional
        Whether the KVStore runs the optimizer (True) or each device does after pulling
        the summed gradients (False); None chooses by MXNet's rules.
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        if isinstance(params, (dict, ParameterDict)):
            params = [params[key] for key in sorted(params.keys())]
        if not isinstance(params, (list, tuple)):
            raise ValueError(f"First argument must be a list or dict of Parameters, got "
                             f"{type(params)}.")
        self._params = []
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError(f"First argument must be a list or dict of Parameters, got "
                                 f"list of {type(param)}.")
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
        self._contains_sparse_weight = any(p._stype != "default" for p in self._params)
        self._contains_sparse_grad = any(p._grad_stype != "default" for p in self._params)
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        self._init_optimizer(optimizer, optimizer_params or {})
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kvstore = None
        self._reduced = False      # allreduce_grads() ran and update() has not yet
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            if contexts is not None and contexts != ctx:
                raise ValueError(f"Trainer: all Parameters must be initialized on the same "
                                 f"contexts, but Parameter {param.name!r} is initialized on "
                                 f"{ctx} while previous Parameters are on {contexts}")
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        # param_dict holds the live Parameters: later changes of lr_mult / wd_mult apply
        param_dict = dict(enumerate(self._params))
        if isinstance(optimizer, opt.Optimizer):
            if optimizer_params:
                raise ValueError(f"Trainer: optimizer_params must be empty when optimizer is "
                                 f"an Optimizer instance (not a name), got "
                                 f"{sorted(optimizer_params)}")
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        elif isinstance(optimizer, str):
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        else:
            raise TypeError(f"Trainer: optimizer must be an Optimizer or the name of one, got "
                            f"{type(optimizer).__name__}")
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    # -- the KVStore ------------------------------------------------------------------------
    def _reset_kvstore(self):
        """Forget the KVStore (a Parameter loaded new values): the next step makes a new one
        and broadcasts the values again."""
        if self._kvstore is not None and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = list(self._params)

    def _init_kvstore(self):
        config = self._kvstore_params
        if self._contains_sparse_weight:
            kvstore = _create_sparse_kvstore(config["kvstore"], config["update_on_kvstore"])
            self._distributed = "dist" in kvstore.type
            self._set_kvstore(kvstore, True)
            return
        kvstore, update_on_kvstore = _create_kvstore(config["kvstore"], len(self._contexts),
                                                     self._params)
        self._distributed = kvstore is not None and "dist" in kvstore.type
        if self._contains_sparse_grad:
            # one machine prefers pushing and pulling the gradients; several update on the
            # store
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is False and self._distributed:
                raise ValueError("Cannot set update_on_kvstore=False on dist kvstore when "
                                 "sparse gradients are present.")
        elif self._distributed and "async" in kvstore.type:
            update_on_kvstore = True
            if config["update_on_kvstore"] is False:
                raise ValueError("Please set update_on_kvstore=True when training in async "
                                 "mode.")
        if config["update_on_kvstore"] is not None:
            update_on_kvstore = config["update_on_kvstore"]
        if update_on_kvstore and kvstore is not None and not _capable(kvstore):
            if config["update_on_kvstore"]:
                raise ValueError(f"Please set update_on_kvstore=False when training with "
                                 f"{type(kvstore)}")
            update_on_kvstore = False
        self._set_kvstore(kvstore, update_on_kvstore)

    def _set_kvstore(self, kvstore, update_on_kvstore):
        if kvstore is not None:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = bool(update_on_kvstore)
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    def _init_params(self):
        """Broadcast each initialized parameter through the KVStore (rank 0's value, on every
        context); those still waiting for deferred initialization stay for later."""
        waiting = []
        for param in self._params_to_init:
            if param._deferred_init:
                waiting.append(param)
            elif self._kvstore is not None:
                arrays = _values(param)
                idx = self._param2idx[param.name]
                if param._stype != "default":
                    self._kvstore.init(idx, arrays[0])    # the store holds the truth
                else:
                    self._kvstore.broadcast(idx, arrays[0], out=arrays)
        self._params_to_init = waiting

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pull a row_sparse parameter's rows ``row_id`` from the store into ``out`` (every
        row, with ``full_idx`` on a local store: a plain pull)."""
        self._prepare()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _prepare(self):
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()

    def _refuse_on_kvstore(self, what):
        if self._kvstore is not None and self._update_on_kvstore:
            raise AssertionError(f"{what}() when parameters are updated on kvstore is not "
                                 f"supported. Try setting `update_on_kvstore` to False when "
                                 f"creating trainer.")

    # -- the optimizer ----------------------------------------------------------------------
    @property
    def optimizer(self):
        return self._optimizer

    @property
    def learning_rate(self):
        """The optimizer's current learning rate (its scheduler's, if it has one)."""
        return self._optimizer.learning_rate

    def set_learning_rate(self, lr):
        """Set the optimizer's learning rate (refused when an lr_scheduler owns it)."""
        self._optimizer.set_learning_rate(lr)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized \
                and self._optimizer.rescale_grad != scale:
            raise UserWarning("Possible change in the `batch_size` from previous `step` "
                              "detected. Optimizer gradient normalizing factor will not "
                              "change w.r.t new batch_size when update_on_kvstore=True and "
                              "when distributed kvstore is used.")
        self._optimizer.rescale_grad = scale

    # -- steps -----------------------------------------------------------------------------
    def step(self, batch_size, ignore_stale_grad=False):
        """One update of every parameter from its gradient, normalized by ``1/batch_size``
        (``allreduce_grads`` then ``update``). A parameter whose gradient no backward wrote
        since the last step raises UserWarning, or with ``ignore_stale_grad`` is skipped."""
        if self._reduced:
            raise RuntimeError("Trainer.step: the gradients were summed by allreduce_grads() "
                               "already and step would sum them again; call "
                               "update(batch_size) after allreduce_grads(), or step alone")
        self._check_and_rescale_grad(self._scale / batch_size)
        self._prepare()
        if not ignore_stale_grad:
            self._check_fresh()
        self._allreduce_grads(ignore_stale_grad)
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum each parameter's gradients over its contexts (and workers) into every copy;
        for gradient transformations between this and ``update``."""
        self._prepare()
        self._refuse_on_kvstore("allreduce_grads")
        self._allreduce_grads()
        self._reduced = self._kvstore is not None

    def update(self, batch_size, ignore_stale_grad=False):
        """The update half of ``step``, after ``allreduce_grads``."""
        self._prepare()
        self._refuse_on_kvstore("update")
        self._check_and_rescale_grad(self._scale / batch_size)
        if not ignore_stale_grad:
            self._check_fresh()
        self._update(ignore_stale_grad)
        self._reduced = False

    def _check_fresh(self):
        for param in self._params:
            if param.grad_req != "null":
                for data in _values(param):
                    if not data._fresh_grad:
                        raise UserWarning(_STALE.format(param.name, data.context))

    def _allreduce_grads(self, skip_stale=False):
        """Push each gradient (all of them on a dist store, whose workers must push the
        same keys; else, with ``skip_stale``, only those a backward wrote)."""
        kv = self._kvstore
        if kv is None:
            return
        on_kvstore = self._update_on_kvstore
        skip_stale = skip_stale and not self._distributed
        for i, param in enumerate(self._params):
            if param.grad_req != "null":
                if skip_stale and not any(d._fresh_grad for d in _values(param)):
                    continue
                if param._grad_stype != "default":
                    self._push_pull_sparse(kv, i, param)
                elif on_kvstore:
                    kv.pushpull(i, param.list_grad(), out=_values(param), priority=-i)
                else:
                    kv.pushpull(i, param.list_grad(), priority=-i)

    def _push_pull_sparse(self, kv, i, param):
        """Sparse gradients are pushed, then a dense weight (updated on the store) or the
        summed gradients are pulled back; a row_sparse weight is pulled by rows later."""
        kv.push(i, param.list_grad(), priority=-i)
        if param._stype == "default":
            pull_list = _values(param) if self._update_on_kvstore else param.list_grad()
            kv.pull(i, pull_list, priority=-i, ignore_sparse=self._distributed)

    def _update(self, ignore_stale_grad):
        scaler = getattr(self, "_amp_loss_scaler", None)    # amp.init_trainer's
        if scaler is not None and scaler.has_overflow(self._params):
            return                                          # skip the step on overflow
        on_kvstore = self._kvstore is not None and self._update_on_kvstore
        per_context = [([], [], []) for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            for (idx, grads, weights), data, grad in zip(per_context, _values(param),
                                                         param.list_grad()):
                if not data._fresh_grad and ignore_stale_grad:
                    continue
                data._fresh_grad = False
                if not on_kvstore:
                    idx.append(i)
                    grads.append(grad)
                    weights.append(data)
        if not on_kvstore:
            for updater, (idx, grads, weights) in zip(self._updaters, per_context):
                if idx:
                    updater(idx, grads, weights)

    # -- states ------------------------------------------------------------------------------
    def save_states(self, fname):
        """Write the optimizer and its states to ``fname`` (MXNet's ``.states`` pickle);
        the Parameters' lr_mult / wd_mult are not saved."""
        self._prepare()
        if self._update_on_kvstore:
            if self._params_to_init:
                raise AssertionError("Cannot save trainer states when some parameters are not "
                                     "yet initialized in kvstore.")
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            save_states_file(self._updaters[0], fname, dump_optimizer=True)

    def load_states(self, fname):
        """Load what ``save_states`` wrote (or MXNet's Trainer did); the optimizer then reads
        lr_mult / wd_mult from this Trainer's Parameters."""
        self._prepare()
        what = "Trainer.load_states"
        if self._update_on_kvstore:
            weights = {i: (p.name, _values(p)[0]) for i, p in enumerate(self._params)}
            checked_load(self._kvstore._updater,
                         lambda: self._kvstore.load_optimizer_states(fname), weights,
                         f"{what}: {fname!r}")
            self._optimizer = self._kvstore._updater.optimizer
        else:
            for j, updater in enumerate(self._updaters):
                weights = {i: (p.name, _values(p)[j]) for i, p in enumerate(self._params)}
                load_states_file(updater, fname, what, weights)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        self._optimizer.param_dict = dict(enumerate(self._params))
