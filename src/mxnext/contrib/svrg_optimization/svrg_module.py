"""``SVRGModule``: a Module trained by stochastic variance-reduced gradient (SVRG).

Every ``update_freq`` epochs it snapshots the weights into an auxiliary Module and
averages that snapshot's gradient over the whole data set (``update_full_grads``). Each
batch then steps with ``g(w, batch) - g(snapshot, batch) + full gradient``: the aux
Module runs the same batches on the snapshot to supply the middle term.
"""

from __future__ import annotations

import logging

from ... import ndarray as nd
from ...module.module import Module, _create_kvstore
from .svrg_optimizer import _SVRGOptimizer

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A Module (same arguments) that trains with SVRG; ``update_freq`` (a positive int) is
    how many epochs pass between full-gradient passes."""

    def __init__(self, symbol, data_names=("data",), label_names=("softmax_label",),
                 logger=logging, context=None, work_load_list=None, fixed_param_names=None,
                 state_names=None, group2ctxs=None, compression_params=None, update_freq=None):
        super().__init__(symbol, data_names=data_names, label_names=label_names,
                         logger=logger, context=context, work_load_list=work_load_list,
                         fixed_param_names=fixed_param_names, state_names=state_names,
                         group2ctxs=group2ctxs, compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError(f"SVRGModule: update_freq must be an integer (epochs between "
                            f"full-gradient passes), got {type(update_freq).__name__}")
        if update_freq <= 0:
            raise ValueError(f"SVRGModule: update_freq must be a positive integer, "
                             f"got {update_freq}")
        self.update_freq = update_freq
        self._mod_aux = Module(symbol, data_names, label_names, logger, context,
                               work_load_list, fixed_param_names, state_names, group2ctxs,
                               compression_params)
        self._param_dict = None
        self._ctx_len = len(self._context)

    # -- binding and running both modules -----------------------------------------------
    def _reset_bind(self):
        super()._reset_bind()
        self._mod_aux._reset_bind()

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req="write"):
        super().bind(data_shapes, label_shapes, for_training, inputs_need_grad, force_rebind,
                     shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def reshape(self, data_shapes, label_shapes=None):
        super().reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def forward(self, data_batch, is_train=None):
        super().forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        super().backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        super().prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)

    # -- optimizer ------------------------------------------------------------------------
    def init_optimizer(self, kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),), force_init=False):
        """Install ``_SVRGOptimizer`` around ``optimizer``; with a KVStore, also a
        ``<name>_full`` key per parameter where full gradients are summed."""
        self._param_dict = [{name: nd.zeros(value.shape, ctx=ctx)
                             for name, value in self.get_params()[0].items()}
                            for ctx in self._context]
        svrg = self._create_optimizer(_SVRGOptimizer.__name__, optimizer, kvstore,
                                      optimizer_params)
        super().init_optimizer(kvstore=kvstore, optimizer=svrg,
                               optimizer_params=optimizer_params, force_init=force_init)
        if self._kvstore:
            group = self._exec_group
            for idx, (name, on_devs) in enumerate(zip(group.param_names, group.param_arrays)):
                self._kvstore.init(name + "_full", nd.zeros(self._arg_params[name].shape))
                if self._update_on_kvstore:
                    self._kvstore.pull(name + "_full", on_devs, priority=-idx)

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer`` (registered name ``optimizer``): Module's index-to-name
        map plus one index per ``<name>_full`` key, ``rescale_grad`` 1/batch as Module."""
        from ... import optimizer as opt
        batch_size = self._exec_group.batch_size
        kv, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv and "dist" in kv.type and "_sync" in kv.type:
            batch_size *= kv.num_workers
        names = self._exec_group.param_names
        if update_on_kvstore:
            idx2name = dict(enumerate(names))
        else:
            idx2name = {i * self._ctx_len + k: n for k in range(self._ctx_len)
                        for i, n in enumerate(names)}
        for name in self._param_dict[0]:
            idx2name[max(idx2name) + 1] = name + "_full"
        params = dict(optimizer_params)
        params.setdefault("rescale_grad", 1.0 / batch_size)
        params["default_optimizer"] = default_opt
        params["param_idx2name"] = idx2name
        return opt.create(optimizer, **params)

    # -- the SVRG steps -------------------------------------------------------------------
    def update_full_grads(self, train_data):
        """Snapshot the weights into the aux Module and average its gradients over all of
        ``train_data`` (a padded last batch counts as the fraction it holds)."""
        names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        train_data.reset()
        nbatch = padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for k in range(self._ctx_len):
                for index, name in enumerate(names):
                    grad = self._mod_aux._exec_group.grad_arrays[index][k]
                    if grad is not None:                        # None: a fixed parameter
                        self._param_dict[k][name] = nd.broadcast_add(
                            self._param_dict[k][name], grad, axis=0)
            padding = batch.pad
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in names:
            grad_list = []
            for k in range(self._ctx_len):
                self._param_dict[k][name] /= true_num_batch
                grad_list.append(self._param_dict[k][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients of every device (and worker) in ``<key>_full``, then hand
        each device its share."""
        self._kvstore.push(key + "_full", value)
        self._kvstore._barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        for k in range(self._ctx_len):
            self._param_dict[k][key] = value[k] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """In place: ``g(w, batch) - g(snapshot, batch) + full gradient`` per array."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        group, aux_group = self._exec_group, self._mod_aux._exec_group
        for k in range(self._ctx_len):
            for index, name in enumerate(group.param_names):
                if group.grad_arrays[index][k] is None:          # a fixed parameter
                    continue
                group.grad_arrays[index][k] = self._svrg_grads_update_rule(
                    group.grad_arrays[index][k], aux_group.grad_arrays[index][k],
                    self._param_dict[k][name])

    def update(self):
        """Replace this batch's gradients by the SVRG ones, then step as Module does."""
        self._update_svrg_gradients()
        super().update()

    def _begin_epoch(self, epoch, train_data):
        if epoch % self.update_freq == 0:
            self.update_full_grads(train_data)
        train_data.reset()
