"""MXNet's ``Executor``: a Symbol bound to arrays, run forward and backward many times."""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError, ShapeError
from ..ndarray._array import NDArray
from ..ndarray._copies import push_copy
from ..ndarray.sparse import zeros as sparse_zeros
from ._dynamic import run_nodes
from ._instance import Instance
from ._program import Program
from ._stypes import infer_stypes

__all__ = ["Executor"]


class Executor:
    """Made by ``Symbol.bind`` / ``simple_bind``. ``outputs`` are overwritten by each
    ``forward``; gradients land in ``grad_arrays`` (accumulated where ``grad_req='add'``)."""

    def __init__(self, symbol, ctx, args, grads, grad_req, aux, group2ctx=None,
                 shared_exec=None):
        self._symbol = symbol
        self._ctx = ctx
        self._group2ctx = group2ctx
        self._grad_req = grad_req
        self.arg_dict, self.aux_dict, self.grad_dict = args, aux, grads
        # MXNet's storage fallback: the graph runs on dense shadows of sparse arrays
        self._sparse_in = [(a, _dense_shadow(a)) for a in (*args.values(), *aux.values())
                           if _is_sparse(a)]
        self._sparse_grads = [(g, _dense_shadow(g)) for g in grads.values() if _is_sparse(g)]
        shadow = {id(a): d for a, d in self._sparse_in + self._sparse_grads}
        args, aux, grads = ({n: shadow.get(id(a), a) for n, a in d.items()}
                            for d in (args, aux, grads))
        arrays = {**args, **aux}
        program = Program(symbol._outputs, grad_req,
                          {n: a.shape for n, a in arrays.items()},
                          {n: np.dtype(a.dtype) for n, a in arrays.items()}, ctx,
                          grad_dtypes={n: np.dtype(g.dtype) for n, g in grads.items()
                                       if g is not None})
        self._program = program
        self.arg_dict = {n: self.arg_dict[n] for n in program.arg_names}
        self.aux_dict = {n: self.aux_dict[n] for n in program.aux_names}
        # every argument, as MXNet: the array given (also with grad_req 'null') or None
        self.grad_dict = {n: self.grad_dict.get(n) for n in program.arg_names}
        self._instance = Instance(program, arrays, {n: g for n, g in grads.items()
                                                    if grad_req.get(n, "null") != "null"},
                                  share=None if shared_exec is None else shared_exec._instance)
        self.outputs = self._instance.outputs
        self._sparse_out = self._bind_sparse_outputs(ctx) if self._sparse_in else []
        self._monitor = None

    def _bind_sparse_outputs(self, ctx) -> list:
        """MXNet's storage-type inference from the bound arrays: outputs of a sparse storage
        type become sparse arrays (the indices of ``outputs`` that are)."""
        program = self._program
        stypes = infer_stypes(program, {n: a.stype for d in (self.arg_dict, self.aux_dict)
                                        for n, a in d.items()})
        eids = program.graph.outputs[:program.num_outputs]
        sparse = [k for k, eid in enumerate(eids) if stypes[eid] != "default"]
        if sparse:
            self.outputs = list(self.outputs)
            for k in sparse:
                self.outputs[k] = sparse_zeros(stypes[eids[k]], program.shapes[eids[k]],
                                               ctx=ctx, dtype=program.dtypes[eids[k]])
        return sparse

    # -- MXNet's views of the arrays ------------------------------------------------------
    @property
    def arg_arrays(self) -> list:
        return [self.arg_dict[n] for n in self._program.arg_names]

    @property
    def grad_arrays(self) -> list:
        return [self.grad_dict[n] for n in self._program.arg_names]

    @property
    def aux_arrays(self) -> list:
        return [self.aux_dict[n] for n in self._program.aux_names]

    @property
    def output_dict(self) -> dict:
        return dict(zip(self._program.output_names, self.outputs))

    # -- running --------------------------------------------------------------------------
    def forward(self, is_train=False, **kwargs):
        """Run the graph (``is_train``: training behaviour of Dropout, BatchNorm ...) after
        copying ``kwargs`` (name=NDArray or array-like) into the argument arrays; returns
        ``outputs``."""
        for name, value in kwargs.items():
            dst = self.arg_dict.get(name)
            if dst is None:
                raise MXNetError(f"Executor.forward: unknown argument {name!r}; arguments are "
                                 f"{', '.join(self._program.arg_names)}")
            if isinstance(value, NDArray):
                value.copyto(dst)
            else:
                dst[:] = value
        for sparse, dense in self._sparse_in:
            sparse.copyto(dense)
        if self._monitor is None:
            self._instance.run(is_train)
        else:
            self._instance.run(is_train, bulk=False, each=self._monitor_node)
        if self._sparse_out:
            # the sparse outputs: the forward graph again, op by op, each op's storage
            # dispatch (its sparse kernel: MXNet's values and stored positions)
            values = run_nodes(self._program.forward_outputs, {**self.arg_dict, **self.aux_dict})
            for k in self._sparse_out:
                self.outputs[k]._take(values[k])
        return self.outputs

    def backward(self, out_grads=None, is_train=True):
        """Run the gradient graph. ``out_grads`` (an NDArray, a list with one per output, or
        a dict by output name) are the head gradients; a loss output (SoftmaxOutput,
        MakeLoss ...) needs none."""
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, NDArray):
            out_grads = [out_grads]
        elif isinstance(out_grads, dict):
            out_grads = [out_grads.get(n) for n in self._program.output_names]
        inst = self._instance
        for k, head in enumerate(inst.head_arrays):
            if head is None:
                continue
            if k >= len(out_grads) or out_grads[k] is None:
                raise MXNetError(f"Executor.backward: output {k} "
                                 f"({self._program.output_names[k]!r}) is not a loss function, "
                                 f"so its head gradient is required (pass out_grads, or make "
                                 f"the output a loss with MakeLoss)")
            if _is_sparse(out_grads[k]):
                out_grads[k].copyto(head)
            else:
                push_copy(out_grads[k], head)
        if self._monitor is None:
            inst.run(is_train, backward=True)
        else:
            inst.run(is_train, backward=True, bulk=False, each=self._monitor_node)
        for sparse, dense in self._sparse_grads:
            sparse[:] = dense

    # -- arrays in and out -----------------------------------------------------------------
    def copy_params_from(self, arg_params, aux_params=None, allow_extra_params=False):
        """Copy the arrays of ``arg_params`` (and ``aux_params``) into this executor's."""
        for params, own, kind in ((arg_params, self.arg_dict, "argument"),
                                  (aux_params or {}, self.aux_dict, "auxiliary state")):
            for name, value in params.items():
                if name in own:
                    if tuple(value.shape) != own[name].shape:
                        raise ShapeError(f"copy_params_from: {kind} {name!r} has shape "
                                         f"{tuple(value.shape)}, the executor's is "
                                         f"{own[name].shape}")
                    value.copyto(own[name])
                elif not allow_extra_params:
                    raise MXNetError(f"copy_params_from: {name!r} is not an {kind} of the "
                                     f"executor (allow_extra_params=True ignores it)")

    def reshape(self, partial_shaping=False, allow_up_sizing=False, **kwargs):
        """A new executor for new input shapes, sharing every array whose shape stays."""
        return self._symbol._reshaped(self, partial_shaping, allow_up_sizing, kwargs)

    def set_monitor_callback(self, callback, monitor_all=False):
        """Call ``callback(name, array)`` with every node's outputs, forward and backward (with
        ``monitor_all``, its inputs too) as the node is pushed, so what the callback pushes
        reads them before a later node overwrites shared memory. As MXNet's, this turns bulk
        execution off: every node is pushed as its own operator."""
        self._monitor = (callback, monitor_all)

    def _monitor_node(self, nid, pushed):
        callback, monitor_all = self._monitor
        for name, arr in self._instance.monitored(nid, pushed, monitor_all, var_names=True):
            callback(name, arr)

    # -- the plan ---------------------------------------------------------------------------
    def get_optimized_symbol(self):
        """The forward graph as this executor runs it (after common subexpression
        elimination)."""
        return type(self._symbol)(self._program.forward_outputs)

    def debug_str(self) -> str:
        """Every node with its inputs and the storage of its outputs, then the memory planned
        against the naive total (every output its own buffer)."""
        from ._debug import describe
        return describe(self._program)


def _is_sparse(a) -> bool:
    return a is not None and a.stype != "default"


def _dense_shadow(a):
    """The dense array the graph reads or writes in place of sparse ``a``."""
    return a.tostype("default")
