"""MXNet's ``Executor``: a Symbol bound to arrays, run forward and backward many times."""

from __future__ import annotations

import numpy as np

from .._runtime import tape as _tape
from .._runtime.base import MXNetError, ShapeError
from ..ndarray._array import NDArray
from ..ndarray._backward import backward as _backward
from ..ndarray._copies import push_copy
from ..ndarray.ndarray import zeros as nd_zeros
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
        # with a sparse array bound, the graph runs node by node through each op's storage
        # dispatch (MXNet's FComputeEx: sparse kernels on the sparse arrays themselves)
        self._by_node = any(_is_sparse(a) for d in (args, aux, grads) for a in d.values())
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
        if self._by_node:
            self._instance = None
            self._heads = None               # the outputs recorded by the last forward
            self.outputs = self._node_outputs(ctx)
        else:
            share = getattr(shared_exec, "_instance", None)
            self._instance = Instance(program, arrays, {n: g for n, g in grads.items()
                                                        if grad_req.get(n, "null") != "null"},
                                      share=share)
            self.outputs = self._instance.outputs
        self._monitor = None

    def _node_outputs(self, ctx) -> list:
        """The output arrays of a graph run node by node, in the storage types MXNet's
        storage-type inference gives from the bound arrays' (``forward`` fills them)."""
        program = self._program
        stypes = infer_stypes(program, {n: a.stype for d in (self.arg_dict, self.aux_dict)
                                        for n, a in d.items()})
        outs = []
        for eid in program.graph.outputs[:program.num_outputs]:
            shape, dtype = program.shapes[eid], program.dtypes[eid]
            outs.append(sparse_zeros(stypes[eid], shape, ctx=ctx, dtype=dtype)
                        if stypes[eid] != "default" else nd_zeros(shape, ctx, dtype=dtype))
        return outs

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
        if self._by_node:
            self._forward_by_node(is_train)
        elif self._monitor is None:
            self._instance.run(is_train)
        else:
            self._instance.run(is_train, bulk=False, each=self._monitor_node)
        return self.outputs

    def _forward_by_node(self, is_train):
        """One imperative call per node, recorded for ``backward`` when training with
        gradients asked for (the arguments are marked as autograd variables only for the
        call: the user's own recording never sees them)."""
        program, req = self._program, self._grad_req
        arrays = {**self.arg_dict, **self.aux_dict}
        wrt = [n for n in program.arg_names if is_train and req.get(n, "null") != "null"
               and self.grad_dict[n] is not None] if program.grads else []
        saved = [(arrays[n], arrays[n]._ag) for n in wrt]
        _tape.mark_variables([arrays[n] for n in wrt], [self.grad_dict[n] for n in wrt],
                             [req[n] for n in wrt])
        state = _tape.state
        scope = (state.recording, state.training)
        state.recording, state.training = bool(wrt), is_train     # autograd.record / pause
        try:
            values = run_nodes(program.forward_outputs, arrays)
        finally:
            state.recording, state.training = scope
            for a, ag in saved:
                a._ag = ag
        self._heads = values if wrt else None
        for out, value in zip(self.outputs, values):
            if out.stype != "default":
                out._take(value)
            else:
                push_copy(value if value.stype == "default" else value.tostype("default"), out)
        if self._monitor is not None:
            callback = self._monitor[0]
            for name, out in zip(program.output_names, self.outputs):
                callback(name, out)

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
        if self._by_node:
            self._backward_by_node(out_grads)
            return
        inst = self._instance
        for k, head in enumerate(inst.head_arrays):
            if head is None:
                continue
            if k >= len(out_grads) or out_grads[k] is None:
                raise _head_required(self._program, k)
            if _is_sparse(out_grads[k]):
                out_grads[k].copyto(head)
            else:
                push_copy(out_grads[k], head)
        if self._monitor is None:
            inst.run(is_train, backward=True)
        else:
            inst.run(is_train, backward=True, bulk=False, each=self._monitor_node)

    def _backward_by_node(self, out_grads):
        """Autograd through the nodes the last ``forward(is_train=True)`` recorded; a loss
        output (no head gradient in the plan) takes none."""
        if self._heads is None:
            raise MXNetError("Executor.backward: call forward(is_train=True) first (no "
                             "gradient is asked for, or the last forward was not training)")
        heads = self._program.head_grads
        grads = []
        for k, eid in enumerate(heads):
            given = out_grads[k] if k < len(out_grads) else None
            if eid is not None and given is None:
                raise _head_required(self._program, k)
            grads.append(None if eid is None else given)
        _backward(self._heads, grads, retain_graph=True)

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


def _head_required(program, k) -> MXNetError:
    return MXNetError(f"Executor.backward: output {k} ({program.output_names[k]!r}) is not a "
                      f"loss function, so its head gradient is required (pass out_grads, or "
                      f"make the output a loss with MakeLoss)")
