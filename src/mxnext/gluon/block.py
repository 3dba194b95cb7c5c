"""MXNet 1.9's ``gluon.Block``, ``gluon.HybridBlock`` and ``gluon.SymbolBlock``.

Naming follows MXNet exactly: a block made outside any ``name_scope`` takes its prefix from
the thread's ``NameManager`` (``dense0_``); one made inside its parent's ``name_scope()``
gets the parent's prefix plus a counter per class (``hybridsequential0_dense0_``), and its
parameters live in a ParameterDict of that prefix.

A HybridBlock runs ``hybrid_forward(F, x, **params)`` with ``F = mx.nd``; hybridized, its
first call runs it once with Symbols (F = mx.sym) and every call then goes through one
``mx.nd.CachedOp`` of that graph. Unknown parameter shapes are inferred from the graph at
the first forward, hybridized or not.
"""

from __future__ import annotations

import copy
import re
import threading
import warnings
from collections import OrderedDict, defaultdict

import numpy as np

from .. import initializer, name as _name, ndarray, symbol
from .._runtime.base import MXNetError
from ..ndarray import NDArray
from ..symbol import Symbol
from .parameter import DeferredInitializationError, Parameter, ParameterDict, ParameterError
from .utils import HookHandle, _brief_print_list, _indent

__all__ = ["Block", "HybridBlock", "SymbolBlock"]


class _BlockScope:
    """A block's ``name_scope()``: children made inside get prefixes under the block's."""

    _current = threading.local()

    def __init__(self, block):
        self._block = block
        self._counter = {}
        self._old_scope = None
        self._name_scope = None

    @staticmethod
    def create(prefix, params, hint):
        """The prefix and ParameterDict of a new block of class alias ``hint``."""
        current = getattr(_BlockScope._current, "value", None)
        if current is None:
            if prefix is None:
                prefix = _name.current().get(None, hint) + "_"
            params = ParameterDict(prefix) if params is None else \
                ParameterDict(params.prefix, params)
            return prefix, params
        if prefix is None:
            count = current._counter.get(hint, 0)
            prefix = f"{hint}{count}_"
            current._counter[hint] = count + 1
        if params is None:
            parent = current._block.params
            params = ParameterDict(parent.prefix + prefix, parent._shared)
        else:
            params = ParameterDict(params.prefix, params)
        return current._block.prefix + prefix, params

    def __enter__(self):
        if self._block._empty_prefix:
            return self
        self._old_scope = getattr(_BlockScope._current, "value", None)
        _BlockScope._current.value = self
        self._name_scope = _name.Prefix(self._block.prefix)
        self._name_scope.__enter__()
        return self

    def __exit__(self, ptype, value, trace):
        if self._block._empty_prefix:
            return
        self._name_scope.__exit__(ptype, value, trace)
        self._name_scope = None
        _BlockScope._current.value = self._old_scope


def _flatten(args, inout_str):
    """Nested lists of arrays/symbols as a flat list and a format to rebuild them: 0 for
    one array, -1 for None, n > 0 for a symbol of n outputs, a list for a list."""
    if isinstance(args, NDArray):
        return [args], 0
    if isinstance(args, Symbol):
        n = len(args.list_outputs())
        return [args], n if n > 1 else 0
    if args is None:
        return [None], -1
    if not isinstance(args, (list, tuple)):
        raise ValueError(f"HybridBlock {inout_str} must be (nested) list of Symbol or NDArray, "
                         f"but got {args} of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        f, fmt = _flatten(a, inout_str)
        flat.extend(f)
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    """Inverse of ``_flatten``."""
    def merge(args, fmt):
        if isinstance(fmt, int):
            if fmt < -1:
                raise ValueError(f"Unsupported encoded format {fmt}.")
            if fmt == 0:
                return args[0], args[1:]
            if fmt == -1:
                if args[0] is not None:
                    raise ValueError(f"We do not support passing types that are not None when "
                                     f"the initial HybridBlock has received NoneType and has "
                                     f"been hybridized. Received arg = {args[0]}, fmt = {fmt}.")
                return None, args[1:]
            return args[:fmt], args[fmt:]
        ret = []
        for f in fmt:
            res, args = merge(args, f)
            ret.append(res)
        return ret, args
    return merge(args, fmt)[0]


def _gather_type_ctx_info(args):
    """(has a Symbol, has an NDArray, the set of contexts, the first context) of nested
    ``args``."""
    has_sym = has_nd = False
    ctxs, first = set(), None
    stack = list(args)
    while stack:
        a = stack.pop(0)
        if isinstance(a, NDArray):
            has_nd = True
            if first is None:
                first = a.context
            ctxs.add(a.context)
        elif isinstance(a, Symbol):
            has_sym = True
        elif isinstance(a, (list, tuple)):
            stack[:0] = list(a)
    return has_sym, has_nd, ctxs, first


class Block:
    """Base of every layer and model: holds child blocks and parameters; subclasses
    define ``forward``. Make children inside ``with self.name_scope():``."""

    def __init__(self, prefix=None, params=None):
        self._empty_prefix = prefix == ""
        self._prefix, self._params = _BlockScope.create(prefix, params, self._alias())
        self._name = self._prefix[:-1] if self._prefix.endswith("_") else self._prefix
        self._scope = _BlockScope(self)
        self._children = OrderedDict()
        self._reg_params = {}
        self._forward_hooks = OrderedDict()
        self._forward_pre_hooks = OrderedDict()

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self.__dict__.items() if isinstance(block, Block))
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __setattr__(self, name, value):
        """Blocks and Parameters assigned as attributes are registered."""
        existing = self.__dict__.get(name)
        if isinstance(existing, (Parameter, Block)) and not isinstance(value, type(existing)):
            raise TypeError(f"Changing attribute type for {name} from {type(existing)} to "
                            f"{type(value)}is not allowed.")
        if isinstance(value, Block):
            self.register_child(value, name)
        elif isinstance(value, Parameter):
            if name in self._reg_params:
                raise ParameterError(f"Overriding Parameter attribute {name} is not allowed. If "
                                     f"you want to share parameters between blocks, please "
                                     f"set 'params' at Block construction instead.")
            self._reg_params[name] = value
        object.__setattr__(self, name, value)

    def _check_container_with_block(self):
        children = set(self._children.values())

        def unregistered(data):
            if isinstance(data, (list, tuple)):
                return any(unregistered(d) for d in data)
            if isinstance(data, dict):
                return any(unregistered(d) for d in data.values())
            return isinstance(data, Block) and data not in children
        for k, v in self.__dict__.items():
            if isinstance(v, (list, tuple, dict)) and not (k.startswith("__") or
                                                            k == "_children"):
                if unregistered(v):
                    warnings.warn(f'"{type(self).__name__}.{k}" is an unregistered container '
                                  f'with Blocks. Note that Blocks inside the list, tuple or dict '
                                  f'will not be registered automatically. Make sure to register '
                                  f'them using register_child() or switching to '
                                  f'nn.Sequential/nn.HybridSequential instead. ', stacklevel=3)

    def _alias(self):
        return type(self).__name__.lower()

    @property
    def prefix(self):
        return self._prefix

    @property
    def name(self):
        return self._name

    def name_scope(self):
        """``with block.name_scope():`` names children (and ops) under this block's prefix."""
        return self._scope

    @property
    def params(self):
        """This block's own ParameterDict (children's not included)."""
        return self._params

    def collect_params(self, select=None):
        """A ParameterDict of this block's and its descendants' parameters; ``select`` a
        regex (``'.*weight|.*bias'``) keeps the names it matches."""
        self._check_container_with_block()
        ret = ParameterDict(self._params.prefix)
        if not select:
            ret.update(self.params)
        else:
            pattern = re.compile(select)
            ret.update({k: v for k, v in self.params.items() if pattern.match(k)})
        for child in self._children.values():
            ret.update(child.collect_params(select=select))
        return ret

    def _collect_params_with_prefix(self, prefix=""):
        """Parameters by structural name, ``<child attribute>.<...>.<parameter attribute>``
        (``0.weight``): the keys of ``save_parameters``."""
        if prefix:
            prefix += "."
        ret = {prefix + key: val for key, val in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def save_parameters(self, filename, deduplicate=False):
        """Save the parameters under their structural names (MXNet 1.9's format); with
        ``deduplicate`` a shared parameter is saved once."""
        params = self._collect_params_with_prefix()
        if deduplicate:
            by_param = {v: k for k, v in params.items()}
            params = {k: v for v, k in by_param.items()}
        ndarray.save(filename, {key: val._reduce() for key, val in params.items()})

    def save_params(self, filename):
        """Deprecated: save under the parameters' full names less this block's prefix."""
        warnings.warn("save_params is deprecated. Please use save_parameters. Note that if you "
                      "want load from SymbolBlock later, please use export instead. For "
                      "details, see https://mxnet.io/api/python/docs/tutorials/packages/gluon/"
                      "blocks/save_load_params.html")
        try:
            self.collect_params().save(filename, strip_prefix=self.prefix)
        except ValueError as e:
            raise ValueError(f"{e}\nsave_params is deprecated. Using save_parameters may "
                             f"resolve this error.") from e

    def load_parameters(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
                        cast_dtype=False, dtype_source="current"):
        """Load a file of ``save_parameters`` (or, when no name has a '.', of the legacy
        ``save_params``) onto ``ctx``."""
        loaded = ndarray.load(filename)
        params = self._collect_params_with_prefix()
        if not loaded and not params:
            return
        if not any("." in k for k in loaded):
            del loaded
            self.collect_params().load(filename, ctx, allow_missing, ignore_extra, self.prefix,
                                       cast_dtype=cast_dtype, dtype_source=dtype_source)
            return
        if not allow_missing:
            names_of = defaultdict(list)          # a shared parameter is saved once
            for k, v in params.items():
                names_of[v].append(k)
            for name, param in params.items():
                if not any(n in loaded for n in names_of[param]):
                    raise ParameterError(f"Parameter '{name}' is missing in file "
                                         f"'{filename}', which contains parameters: "
                                         f"{_brief_print_list(loaded.keys())}. Set "
                                         f"allow_missing=True to ignore missing parameters.")
        for name, value in loaded.items():
            if name not in params:
                if not ignore_extra:
                    raise ValueError(f"Parameter '{name}' loaded from file '{filename}' is not "
                                     f"present in ParameterDict, which contains parameters "
                                     f"{_brief_print_list(params.keys())}. Set "
                                     f"ignore_extra=True to ignore. ")
                continue
            params[name]._load_init(value, ctx, cast_dtype=cast_dtype,
                                    dtype_source=dtype_source)

    def load_params(self, filename, ctx=None, allow_missing=False, ignore_extra=False):
        warnings.warn("load_params is deprecated. Please use load_parameters.")
        self.load_parameters(filename, ctx, allow_missing, ignore_extra)

    def save(self, prefix):
        """Save the structure (``<prefix>-model.json``: names, graphs of hybridized blocks)
        and parameters (``<prefix>-model.params``), as MXNet 1.9's ``Block.save``."""
        from . import _structure
        _structure.save(self, prefix)

    def load(self, prefix):
        """Load what ``save(prefix)`` wrote into this block, built the same way."""
        from . import _structure
        _structure.load(self, prefix)

    def register_child(self, block, name=None):
        """Register ``block`` as a child (name: its attribute, else its position)."""
        if name is None:
            name = str(len(self._children))
        self._children[name] = block

    def register_forward_pre_hook(self, hook):
        """``hook(block, inputs)`` before every forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_pre_hooks, hook)
        return handle

    def register_forward_hook(self, hook):
        """``hook(block, inputs, outputs)`` after every forward; returns a HookHandle."""
        handle = HookHandle()
        handle.attach(self._forward_hooks, hook)
        return handle

    def apply(self, fn):
        """Call ``fn(block)`` on every descendant, then this block; returns self."""
        for child in self._children.values():
            child.apply(fn)
        fn(self)
        return self

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize the parameters of this block and its descendants (default
        ``init.Uniform()``)."""
        self.collect_params().initialize(init if init is not None else initializer.Uniform(),
                                         ctx, verbose, force_reinit)

    def hybridize(self, active=True, **kwargs):
        """Hybridize the HybridBlock descendants (a plain Block itself runs imperatively)."""
        for child in self._children.values():
            child.hybridize(active, **kwargs)

    def cast(self, dtype):
        """Cast the parameters of this block and its descendants to ``dtype``."""
        for child in self._children.values():
            child.cast(dtype)
        for param in self.params.values():
            param.cast(dtype)

    def register_op_hook(self, callback, monitor_all=False):
        for child in self._children.values():
            child.register_op_hook(callback, monitor_all)

    def __call__(self, *args):
        if not self._forward_pre_hooks and not self._forward_hooks:
            return self.forward(*args)
        for hook in self._forward_pre_hooks.values():
            hook(self, args)
        out = self.forward(*args)
        for hook in self._forward_hooks.values():
            hook(self, args, out)
        return out

    def forward(self, *args):
        """The computation; subclasses override it."""
        raise NotImplementedError

    def summary(self, *inputs):
        """Print each layer's output shape and parameter count for a forward of ``inputs``
        (the block must not be hybridized)."""
        from .summary import print_summary
        print_summary(self, inputs)


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
                return self.hybrid_forward(ndarray, x, *args, **params)
        params = {k: v.var() for k, v in self._reg_params.items()}
        with self.name_scope():
            return self.hybrid_forward(symbol, x, *args, **params)

    def hybrid_forward(self, F, x, *args, **kwargs):
        """The computation with ``F`` (mx.nd or mx.sym); subclasses override it."""
        raise NotImplementedError


def _compatible_format(fmt, stored):
    """Whether call format ``fmt`` matches ``stored`` up to trailing Nones (defaults)."""
    if not isinstance(fmt, list) or not isinstance(stored, list):
        return False
    short, long_ = (fmt, stored) if len(fmt) < len(stored) else (stored, fmt)
    return len(short) != len(long_) and long_[:len(short)] == short and \
        all(f == -1 for f in long_[len(short):])


def _common_prefix(names):
    if not names:
        return ""
    prefix = names[0]
    for name in names:
        while not name.startswith(prefix):
            prefix = prefix[:-1]
    return prefix


class SymbolBlock(HybridBlock):
    """A HybridBlock made from a Symbol graph: ``outputs`` computed from the variables
    ``inputs``; the graph's other arguments and auxiliary states become its parameters
    (taken from ``params`` where it has them)."""

    @staticmethod
    def imports(symbol_file, input_names, param_file=None, ctx=None, allow_missing=False,
                ignore_extra=False):
        """A SymbolBlock of an exported model: ``symbol_file`` (``-symbol.json``), the names
        of its data inputs, and optionally the ``.params`` to load onto ``ctx``."""
        sym = symbol.load(symbol_file)
        if isinstance(input_names, str):
            input_names = [input_names]
        if param_file is None:
            inputs = [symbol.var(i, dtype=np.float32) for i in input_names]
        else:
            inputs = [symbol.var(i) for i in input_names]
        ret = SymbolBlock(sym, inputs)
        if param_file is not None:
            ret.collect_params().load(param_file, ctx, allow_missing, ignore_extra,
                                      cast_dtype=True, dtype_source="saved")
        return ret

    def __init__(self, outputs, inputs, params=None):
        super().__init__(prefix=None, params=None)
        self._prefix = ""
        self._params = ParameterDict("", params)
        if isinstance(inputs, Symbol) and len(inputs.list_outputs()) == 1:
            inputs = [inputs]
        if isinstance(outputs, (list, tuple)) and len(outputs) == 1:
            outputs = outputs[0]
        syms, self._in_format = _flatten(inputs, "input")
        out, self._out_format = _flatten(outputs, "output")
        out = symbol.Group(out) if len(out) > 1 else out[0]
        input_names = set()
        for s in syms:
            if len(s.get_internals().list_outputs()) != 1:
                raise ParameterError(f"Input symbols must be variable, but {s} is an output "
                                     f"of operators")
            input_names.add(s.name)
        for name, attrs in out.attr_dict().items():
            if attrs.get("__storage_type__", "0") not in ("0", "-1") and \
                    name not in input_names:
                raise ParameterError(f"SymbolBlock doesn't support Parameter {name!r} because "
                                     f"its storage type is not 'default'.")
        arg_types, aux_types = _infer_param_types(syms, out)
        for arg, dtype in zip(out.list_arguments(), arg_types):
            if arg not in input_names:
                self.params.get(arg, allow_deferred_init=True, dtype=dtype)
        for aux, dtype in zip(out.list_auxiliary_states(), aux_types):
            if aux not in input_names:
                self.params.get(aux, grad_req="null", allow_deferred_init=True, dtype=dtype)
        self._cached_graph = syms, out
        cut = len(_common_prefix(list(self._params.keys())))
        self._reg_params = {k[cut:]: v for k, v in self._params.items()}

    def __repr__(self):
        syms, out = self._cached_graph
        return (f"{type(self).__name__}(\n{out} : {len(syms)} -> "
                f"{len(out.list_outputs())}\n)")

    def forward(self, x, *args):
        if isinstance(x, NDArray):
            with x.context:
                return self._call_cached_op(x, *args)
        if not isinstance(x, Symbol):
            raise TypeError(f"HybridBlock requires the first argument to forward be either "
                            f"Symbol or NDArray, but got {type(x)}")
        flat, fmt = _flatten([x, *args], "input")
        if fmt != self._in_format:
            raise ValueError(f"SymbolBlock: invalid input format {fmt}, expected "
                             f"{self._in_format}")
        ret = copy.copy(self._cached_graph[1])
        ret._compose(**{k.name: v for k, v in zip(self._cached_graph[0], flat)})
        return _regroup(list(ret), self._out_format)

    def _clear_cached_op(self):
        graph = self._cached_graph
        super()._clear_cached_op()
        self._cached_graph = graph

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


def _infer_param_types(inputs, out):
    """The dtypes of ``out``'s arguments and auxiliary states from its inputs' ``__dtype__``
    attributes (float32 where nothing says otherwise)."""
    from .._runtime.base import FLAG_TO_DTYPE
    given = {}
    for s in inputs:
        flag = s.attr("__dtype__")
        if flag is not None:
            given[s.name] = FLAG_TO_DTYPE[int(flag)]
    arg_types = aux_types = None
    if given:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                arg_types, _, aux_types = out.infer_type_partial(**given)
            except MXNetError:
                arg_types = aux_types = None
    n_args, n_aux = len(out.list_arguments()), len(out.list_auxiliary_states())
    arg_types = [np.dtype(t).type if t is not None else np.float32
                 for t in (arg_types or [None] * n_args)]
    aux_types = [np.dtype(t).type if t is not None else np.float32
                 for t in (aux_types or [None] * n_aux)]
    return arg_types, aux_types
