"""MXNet 1.9's ``gluon.HybridBlock``: it runs ``hybrid_forward(F, x, **params)`` with
``F = mx.nd``; hybridized, its first call runs it once with Symbols (F = mx.sym) and every
call then goes through one ``mx.nd.CachedOp`` of that graph. Unknown parameter shapes are
inferred from the graph at the first forward, hybridized or not."""

from __future__ import annotations

import warnings

from .. import ndarray, symbol
from .._runtime.base import MXNetError
from ..ndarray import NDArray
from ._block import Block
from ._nested import _compatible_format, _flatten, _gather_type_ctx_info, _regroup
from ._parameter import DeferredInitializationError, ParameterError

__all__ = ["HybridBlock"]


class HybridBlock(Block):
    """A Block whose computation, ``hybrid_forward(F, x, *args, **params)``, works on
    NDArrays (F = mx.nd) and Symbols (F = mx.sym) alike, so ``hybridize()`` can run it as
    one compiled graph."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._cached_graph = ()
        self._cached_op = None
        self._cached_op_args = []
        self._out_format = None
        self._in_format = None
        self._active = False
        self._flags = []
        self._callback = None
        self._monitor_all = False

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if isinstance(value, HybridBlock):
            self._clear_cached_op()

    def register_child(self, block, name=None):
        if not isinstance(block, HybridBlock):
            raise ValueError(f"Children of HybridBlock must also be HybridBlock, but {block} "
                             f"has type {type(block)}. If you are using Sequential, please try "
                             f"HybridSequential instead.")
        super().register_child(block, name)
        self._clear_cached_op()

    def _get_graph(self, *args):
        """(the input variables, the output Symbol) of ``hybrid_forward`` run on Symbols;
        inputs are ``data``, or ``data0``, ``data1`` ... for several."""
        if not self._cached_graph:
            flat_args, self._in_format = _flatten(args, "input")
            real = sum(a is not None for a in flat_args)
            if real == 0:
                raise ValueError(f"All args are None and we do not support such a case. "
                                 f"Received args={args}")
            inputs, syms, cnt = [], [], 0
            for a in flat_args:
                if a is None:
                    inputs.append(None)
                    continue
                var = symbol.var(f"data{cnt}" if real > 1 else "data")
                cnt += 1
                inputs.append(var)
                syms.append(var)
            grouped = _regroup(inputs, self._in_format)
            params = {k: v.var() for k, v in self._reg_params.items()}
            with self.name_scope():
                out = self.hybrid_forward(symbol, *grouped, **params)
            out, self._out_format = _flatten(out, "output")
            self._cached_graph = syms, symbol.Group(out) if len(out) > 1 else out[0]
        return self._cached_graph

    def _build_cache(self, *args):
        data, out = self._get_graph(*args)
        data_names = {d.name: i for i, d in enumerate(data)}
        params = self.collect_params()
        input_names = out.list_inputs()
        for name in input_names:
            if name not in params._params and name not in data_names:
                raise ParameterError(f"Unknown input to HybridBlock: {name}")
        unused = [f"{i}-th" for n, i in data_names.items() if n not in input_names]
        if unused:
            warnings.warn(f"The {', '.join(unused)} input to HybridBlock is not used by any "
                          f"computation. Is this intended?", stacklevel=4)
        unused = [n for n in params.keys() if n not in input_names]
        if unused:
            warnings.warn(f"Parameter {', '.join(unused)} is not used by any computation. Is "
                          f"this intended?", stacklevel=4)
        data_indices, param_indices = [], []
        self._cached_op_args = []
        for i, name in enumerate(input_names):
            if name in data_names:
                data_indices.append(i)
                self._cached_op_args.append((True, data_names[name]))
            else:
                param_indices.append(i)
                self._cached_op_args.append((False, params[name]))
        flags = [("data_indices", data_indices), ("param_indices", param_indices)] + \
            list(self._flags)
        self._cached_op = ndarray.CachedOp(out, flags)

    def _deferred_infer_shape(self, *args):
        try:
            self.infer_shape(*args)
        except Exception as e:
            raise ValueError(f"Deferred initialization failed because shape cannot be "
                             f"inferred. {e}") from e

    def _call_cached_op(self, *args):
        if self._cached_op is None:
            self._build_cache(*args)
        if len(args) == 1 and self._in_format == [0] and isinstance(args[0], NDArray):
            flat = args                                   # the common case, one array
        else:
            flat, fmt = _flatten(args, "input")
            if fmt != self._in_format and not _compatible_format(fmt, self._in_format):
                raise ValueError(f"The argument structure of HybridBlock does not match the "
                                 f"cached version. Stored format = {self._in_format}, input "
                                 f"format = {fmt}")
            flat = [a for a in flat if a is not None]
        try:
            cargs = [flat[i] if is_arg else i.data() for is_arg, i in self._cached_op_args]
        except DeferredInitializationError:
            self._deferred_infer_shape(*args)
            cargs = []
            for is_arg, i in self._cached_op_args:
                if not is_arg:
                    i._finish_deferred_init()
                cargs.append(flat[i] if is_arg else i.data())
        if self._callback is not None and self._cached_op._hook != (self._callback,
                                                                   self._monitor_all):
            self._cached_op.register_op_hook(self._callback, self._monitor_all)
        out = self._cached_op(*cargs)
        if self._out_format == 0:
            return out
        return _regroup([out] if isinstance(out, NDArray) else out, self._out_format)

    def _clear_cached_op(self):
        self._cached_graph = ()
        self._cached_op = None

    def hybridize(self, active=True, backend=None, backend_opts=None, clear=True,
                  partition_if_dynamic=False, **kwargs):
        """From the next call on, run as one CachedOp (``static_alloc``, ``static_shape``,
        ``inline_limit``, ``forward_bulk_size``, ``backward_bulk_size`` are its flags);
        ``active=False`` goes back to imperative calls."""
        if backend is not None:
            raise MXNetError(f"hybridize: backend={backend!r} is not supported; mxnext has no "
                             f"subgraph partitioning backends (backend must be None)")
        if backend_opts:
            raise MXNetError(f"hybridize: backend_opts={backend_opts!r} is not supported; "
                             f"they are options of a subgraph partitioning backend, which "
                             f"mxnext does not have (backend_opts must be None or {{}})")
        self._active = active
        self._flags = list(kwargs.items())
        if clear:
            self._clear_cached_op()
        if active and (self._forward_hooks or self._forward_pre_hooks):
            warnings.warn(f'"{self}" is being hybridized while still having forward '
                          f'hook/pre-hook. If "{self}" is a child of HybridBlock, the hooks '
                          f'will not take effect.')
        super().hybridize(active, **kwargs)

    def optimize_for(self, x, *args, backend=None, clear=False, **kwargs):
        """Hybridize with the CachedOp ``kwargs`` flags and run ``x, *args`` once, building
        the graph. Partitioning ``backend``s are not provided."""
        if backend is not None:
            raise MXNetError(f"optimize_for: backend={backend!r} is not supported; mxnext has "
                             f"no subgraph partitioning backends (backend must be None)")
        self.hybridize(True, clear=clear, **kwargs)
        self(x, *args)

    def cast(self, dtype):
        self._clear_cached_op()
        super().cast(dtype)

    def _infer_attrs(self, infer_fn, attr, *args):
        inputs, out = self._get_graph(*args)
        flat = [a for a in _flatten(args, "input")[0] if a is not None]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            arg_attrs, _, aux_attrs = getattr(out, infer_fn)(
                **{i.name: getattr(a, attr) for i, a in zip(inputs, flat)})
        if arg_attrs is None:
            raise ValueError(str(caught[0].message) if caught else
                             f"{infer_fn}: the graph's inputs cannot be inferred")
        known = dict(zip(out.list_arguments(), arg_attrs))
        known.update(zip(out.list_auxiliary_states(), aux_attrs))
        for p in self.collect_params().values():
            if p.name in known:
                setattr(p, attr, known[p.name])

    def infer_shape(self, *args):
        """Complete the parameters' shapes from the inputs' (through the symbol graph)."""
        self._infer_attrs("infer_shape", "shape", *args)

    def infer_type(self, *args):
        """Set the parameters' dtypes from the inputs' (through the symbol graph)."""
        self._infer_attrs("infer_type", "dtype", *args)

    def export(self, path, epoch=0, remove_amp_cast=True):
        """Write ``path-symbol.json`` and ``path-%04d.params`` (``arg:``/``aux:`` names) as
        MXNet does, for ``SymbolBlock.imports`` and ``mx.mod.Module``. The block must have
        run once hybridized. Returns the two file names."""
        if not self._cached_graph:
            raise RuntimeError("Please first call block.hybridize() and then run forward with "
                               "this block at least once before calling export.")
        sym = self._cached_graph[1]
        sym_file = f"{path}-symbol.json"
        sym.save(sym_file, remove_amp_cast=remove_amp_cast)
        arg_names = set(sym.list_arguments())
        aux_names = set(sym.list_auxiliary_states())
        arg_dict = {}
        for name, param in self.collect_params().items():
            if name in arg_names:
                arg_dict[f"arg:{name}"] = param._reduce()
            elif name in aux_names:
                arg_dict[f"aux:{name}"] = param._reduce()
        params_file = f"{path}-{epoch:04d}.params"
        ndarray.save(params_file, arg_dict)
        return sym_file, params_file

    def register_op_hook(self, callback, monitor_all=False):
        self._callback = callback
        self._monitor_all = monitor_all
        super().register_op_hook(callback, monitor_all)

    def forward(self, x, *args):
        """Run ``hybrid_forward`` on NDArrays (through the CachedOp when hybridized) or
        Symbols."""
        if isinstance(x, NDArray) and not args:
            has_sym, has_nd, ctxs, ctx = False, True, None, x.context
        else:
            has_sym, has_nd, ctxs, ctx = _gather_type_ctx_info([x, *args])
        if has_sym and has_nd:
            raise ValueError("In HybridBlock, we do not support mixed NDArrays and Symbols "
                             "types for the input. Please check the type of the args.\n")
        if not has_sym and not has_nd:
            raise ValueError("In HybridBlock, there must be one NDArray or one Symbol in the "
                             "input. Please check the type of the args.\n")
        if has_nd:
            if self._active:
                if ctxs is not None and len(ctxs) > 1:
                    raise ValueError(f"Find multiple contexts in the input, After hybridized, "
                                     f"the HybridBlock only supports one input context. You can "
                                     f"print the ele.ctx in the input arguments to inspect their "
                                     f"contexts. Find all contexts = {ctxs}")
                with ctx:
                    return self._call_cached_op(x, *args)
            with ctx:
                try:
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                except DeferredInitializationError:
                    self._deferred_infer_shape(x, *args)
                    for v in self.params.values():
                        v._finish_deferred_init()
                    params = {k: v.data(ctx) for k, v in self._reg_params.items()}
                try:
                    return self.hybrid_forward(ndarray, x, *args, **params)
                except MXNetError as e:
                    if _names_a_block(self, e):
                        raise
                    raise _in_block(self, e, (x, *args)) from e
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation with ``F`` (mx.nd or mx.sym); subclasses override it."""
        raise NotImplementedError


def _names_a_block(block, error) -> bool:
    """Whether ``error`` already says where it comes from: a child's error named by the child,
    or one ``block``'s own code raised naming its class."""
    return bool(getattr(error, "_mxnext_block", None)) or type(block).__name__ in str(error)


def _in_block(block, error, inputs):
    """``error`` (from an op ``block`` ran eagerly) again, saying which block ran it on what
    shapes, as the hybridized path names the graph node."""
    shapes = ", ".join(str(getattr(a, "shape", type(a).__name__)) for a in inputs)
    message = f"Error in block {block.name!r} ({type(block).__name__}) called on {shapes}: {error}"
    try:
        named = type(error)(message)
    except Exception:       # an error class with another constructor
        named = MXNetError(message)
    named._mxnext_block = block.name
    return named
