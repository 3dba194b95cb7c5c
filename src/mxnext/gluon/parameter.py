"""MXNet 1.9's ``gluon.Parameter``, ``gluon.Constant`` and ``gluon.ParameterDict``.

A Parameter holds one copy of its value per context (``data(ctx)``) and, unless
``grad_req='null'``, a gradient buffer per copy that autograd writes (the copies are marked
variables). Its shape may hold unknown (0) dimensions until the first forward completes
it: ``initialize`` then only records what to do (deferred initialisation).

Errors that MXNet raises with ``assert`` are ``ParameterError``, an AssertionError too, so
code catching either keeps working.
"""

from __future__ import annotations

import re
import warnings
import weakref
from collections import OrderedDict

import numpy as np

from .. import autograd, initializer, ndarray, symbol
from .._runtime.base import MXNetError, is_np_shape
from .._runtime.context import Context, cpu, current_context
from .utils import _brief_print_list, _indent, shape_is_known

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]

tensor_types = (symbol.Symbol, ndarray.NDArray)

_NAMING = ("For more info on naming, please see "
           "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html")


class DeferredInitializationError(MXNetError):
    """A parameter's value was asked for before the first forward completed its shape."""


class ParameterError(MXNetError, AssertionError):
    """A parameter used against its state (MXNet asserts these)."""


class Parameter:
    """A weight of a Block: ``name``, ``grad_req`` ('write', 'add', 'null'), ``shape`` (0 for
    a dimension the first forward infers), ``dtype``, ``lr_mult``/``wd_mult`` for the
    optimizer, ``init`` (an initializer or its name) and whether initialisation may wait
    for the shape (``allow_deferred_init``)."""

    def __init__(self, name, grad_req="write", shape=None, dtype=np.float32, lr_mult=1.0,
                 wd_mult=1.0, init=None, allow_deferred_init=False, differentiable=True,
                 stype="default", grad_stype="default"):
        self._var = None
        self._data = None
        self._grad = None
        self._ctx_list = None
        self._ctx_map = None
        self._trainer = None
        self._deferred_init = ()
        self._differentiable = differentiable
        self._allow_deferred_init = allow_deferred_init
        self._grad_req = None
        if isinstance(shape, int):
            shape = (shape,)
        self._shape = shape
        self.name = name
        self._dtype = dtype
        self.lr_mult = lr_mult
        self.wd_mult = wd_mult
        self.grad_req = grad_req
        self.init = init
        for what, value in (("stype", stype), ("grad_stype", grad_stype)):
            if value not in ("default", "row_sparse", "csr"):
                raise ParameterError(f"Parameter {name!r}: {what} must be 'default', "
                                 f"'row_sparse' or 'csr', got {value!r}")
        self._stype = stype
        self._grad_stype = grad_stype

    def __repr__(self):
        return f"Parameter {self.name} (shape={self.shape}, dtype={self.dtype})"

    # -- attributes -------------------------------------------------------------------
    @property
    def grad_req(self):
        return self._grad_req

    @grad_req.setter
    def grad_req(self, req):
        if req not in ("write", "add", "null"):
            raise ValueError(f"Parameter {self.name!r}: grad_req must be one of 'write', "
                             f"'add', or 'null', got {req!r}")
        if not self._differentiable:
            req = "null"
        if self._grad_req == req:
            return
        self._grad_req = req
        if req == "null" and self._grad is not None:
            self._grad = None
            self._data = [d.detach() for d in self._data]
        elif self._data is not None:
            self._init_grad()

    @property
    def dtype(self):
        return self._dtype

    @dtype.setter
    def dtype(self, dtype):
        self.cast(dtype)

    @property
    def shape(self):
        """The shape; an unknown dimension is 0, or -1 in numpy-shape semantics."""
        if self._shape is None or not is_np_shape():
            return self._shape
        return tuple(d if d != 0 else -1 for d in self._shape)

    @shape.setter
    def shape(self, new_shape):
        if self._shape is None:
            self._shape = tuple(new_shape) if new_shape is not None else None
            return
        if len(self._shape) != len(new_shape) or any(
                old not in (-1, 0, new) for new, old in zip(new_shape, self._shape)):
            raise ParameterError(f"Parameter {self.name!r}: expected shape {new_shape} is "
                                 f"incompatible with given shape {self._shape}")
        self._shape = tuple(new_shape)

    @property
    def stype(self):
        return self._stype

    def _set_trainer(self, trainer):
        if self._stype != "default" and self._trainer and trainer and \
                self._trainer() is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter {self.name!r} because "
                               f"it was already set. More than one trainers for a "
                               f"{self._stype} Parameter is not supported.")
        self._trainer = weakref.ref(trainer) if trainer is not None else None

    # -- values per context ---------------------------------------------------------------
    def _check_and_get(self, arr_list, ctx):
        if arr_list is not None:
            if ctx is list:
                return arr_list
            if ctx is None:
                if len(arr_list) == 1:
                    return arr_list[0]
                ctx = current_context()
            row = self._ctx_map[ctx.device_typeid & 1]
            if ctx.device_id < len(row):
                idx = row[ctx.device_id]
                if idx is not None:
                    return arr_list[idx]
            raise RuntimeError(f"Parameter {self.name!r} was not initialized on context "
                               f"{ctx}. It was only initialized on {self._ctx_list}.")
        if self._deferred_init:
            raise DeferredInitializationError(
                f"Parameter {self.name!r} has not been initialized yet because initialization "
                f"was deferred. Actual initialization happens during the first forward pass. "
                f"Please pass one batch of data through the network before accessing "
                f"Parameters. You can also avoid deferred initialization by specifying "
                f"in_units, num_features, etc., for network layers.")
        raise RuntimeError(f"Parameter {self.name!r} has not been initialized. Note that you "
                           f"should initialize parameters and create Trainer with "
                           f"Block.collect_params() instead of Block.params because the later "
                           f"does not include Parameters of nested child Blocks")

    def _load_init(self, data, ctx, cast_dtype=False, dtype_source="current"):
        """Take ``data`` (loaded from a file) as the value, on ``ctx``."""
        if cast_dtype and dtype_source not in ("current", "saved"):
            raise ValueError(f"Parameter {self.name!r}: dtype_source must be 'current' or "
                             f"'saved', got {dtype_source!r}")
        if self.shape:
            unknown = -1 if is_np_shape() else 0
            if len(self.shape) != len(data.shape) or any(
                    mine not in (unknown, saved) for mine, saved in zip(self.shape, data.shape)):
                raise ParameterError(f"Failed loading Parameter {self.name!r} from saved "
                                     f"params: shape incompatible expected {self.shape} "
                                     f"vs saved {data.shape}")
            self.shape = tuple(s if s != unknown else d for s, d in zip(self.shape, data.shape))
        if self.dtype and np.dtype(self.dtype) != np.dtype(data.dtype):
            if not cast_dtype:
                raise ParameterError(
                    f"Failed loading Parameter {self.name!r} from saved params: dtype "
                    f"incompatible expected {np.dtype(self.dtype).type} vs saved "
                    f"{np.dtype(data.dtype).type}. Set cast_dtype=True to cast the dtype of "
                    f"saved params.")
            if dtype_source == "current":
                data = data.astype(self.dtype, copy=False)
            else:
                self._dtype = data.dtype
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            if self._deferred_init:
                if ctx is not None and set(ctx) != set(self._deferred_init[1]):
                    raise ParameterError(f"Failed to load Parameter {self.name!r} on {ctx} "
                                         f"because it was previous initialized on "
                                         f"{self.list_ctx()}.")
                ctx = self._deferred_init[1]
            elif ctx is None:
                ctx = [cpu()]
            self._init_impl(data, ctx)
        else:
            if ctx is not None and set(ctx) != set(self.list_ctx()):
                raise ParameterError(f"Failed to load Parameter {self.name!r} on {ctx} because "
                                     f"it was previous initialized on {self.list_ctx()}.")
            self.set_data(data)
        self._deferred_init = ()

    def _finish_deferred_init(self):
        """Initialise now that the shape is known (the first forward calls this)."""
        if not self._deferred_init:
            return
        init, ctx, default_init, data = self._deferred_init
        self._deferred_init = ()
        if not shape_is_known(self.shape):
            raise ParameterError(f"Cannot initialize Parameter {self.name!r} because it has "
                                 f"invalid shape: {self.shape}. Please specify in_units, "
                                 f"in_channels, etc for `Block`s.")
        with autograd.pause():
            if data is None:
                data = ndarray.zeros(shape=self.shape, dtype=self.dtype, ctx=cpu())
                initializer.create(default_init)(
                    initializer.InitDesc(self.name, {"__init__": init}), data)
            self._init_impl(data, ctx)

    def _init_impl(self, data, ctx_list):
        self._ctx_list = list(ctx_list)
        self._ctx_map = [[], []]
        for i, ctx in enumerate(self._ctx_list):
            row = self._ctx_map[ctx.device_typeid & 1]
            row.extend([None] * (ctx.device_id + 1 - len(row)))
            row[ctx.device_id] = i
        self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(d.shape, dtype=d.dtype, ctx=d.context) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _reduce(self):
        """The value on cpu: the mean over the contexts."""
        block = self.list_data()
        if len(block) == 1:
            return block[0].copyto(cpu())
        return ndarray.add_n(*(w.copyto(cpu()) for w in block)) / len(block)

    # -- public ------------------------------------------------------------------------
    def initialize(self, init=None, ctx=None, default_init=None, force_reinit=False):
        """Allocate and fill the value on ``ctx`` (a Context or a list; default the current
        one) with ``init``, else the parameter's own ``init``, else ``default_init``. With an
        unknown shape and ``allow_deferred_init`` it waits for the first forward."""
        if default_init is None:
            default_init = initializer.Uniform()
        if self._data is not None and not force_reinit:
            warnings.warn(f"Parameter '{self.name}' is already initialized, ignoring. Set "
                          f"force_reinit=True to re-initialize.", stacklevel=2)
            return
        self._data = self._grad = None
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if init is None:
            init = default_init if self.init is None else self.init
        if not shape_is_known(self.shape):
            if self._allow_deferred_init:
                self._deferred_init = (init, ctx, default_init, None)
                return
            raise ValueError(f"Cannot initialize Parameter {self.name!r} because it has "
                             f"invalid shape: {self.shape}.")
        self._deferred_init = (init, ctx, default_init, None)
        self._finish_deferred_init()

    def reset_ctx(self, ctx):
        """Move the value (the mean over the current contexts) onto ``ctx``."""
        if ctx is None:
            ctx = [current_context()]
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data:
            data = self._reduce()
            with autograd.pause():
                self._init_impl(data, ctx)
        elif self._deferred_init:
            init, _, default_init, data = self._deferred_init
            self._deferred_init = (init, ctx, default_init, data)
        else:
            raise ValueError(f"Cannot reset context for Parameter {self.name!r} because it "
                             f"has not been initialized.")

    def set_data(self, data):
        """Write ``data`` into the value on every context (or keep it for a deferred
        initialisation)."""
        self.shape = data.shape
        if self._data is None:
            if not self._deferred_init:
                raise ParameterError(f"Parameter {self.name!r} has not been initialized")
            self._deferred_init = self._deferred_init[:3] + (data,)
            return
        trainer = self._trainer() if self._trainer else None
        if trainer is not None and getattr(trainer, "_kv_initialized", False) and \
                getattr(trainer, "_update_on_kvstore", False) and \
                self not in getattr(trainer, "_params_to_init", ()):
            trainer._reset_kvstore()
        for arr in self._data:
            arr[:] = data

    def _check_dense(self, what, ctx=None):
        if self._stype != "default":
            raise RuntimeError(f"Cannot return a copy of Parameter {self.name!r} on ctx {ctx} "
                               f"via {what}() because its storage type is {self._stype}. "
                               f"Please use row_sparse_data() instead.")

    def data(self, ctx=None):
        """The value on ``ctx`` (the only one, or the current context's)."""
        if self._stype != "default":
            self._check_dense("data", ctx)
        return self._check_and_get(self._data, ctx)

    def list_data(self):
        """The values on every context, in initialisation order."""
        if self._stype != "default":
            self._check_dense("list_data")
        return self._check_and_get(self._data, list)

    def _check_row_sparse(self, what):
        if self._stype != "row_sparse":
            raise RuntimeError(f"Cannot return copies of Parameter {self.name!r} via {what}() "
                               f"because its storage type is {self._stype}. Please use data() "
                               f"instead.")

    def row_sparse_data(self, row_id):
        """The whole value on ``row_id``'s context (mxnext stores row_sparse parameters
        dense)."""
        self._check_row_sparse("row_sparse_data")
        return self._check_and_get(self._data, row_id.context)

    def list_row_sparse_data(self, row_id):
        self._check_row_sparse("list_row_sparse_data")
        return self._check_and_get(self._data, list)

    def _check_grad(self):
        if self._data is not None and self._grad is None:
            raise RuntimeError(f"Cannot get gradient array for Parameter {self.name!r} "
                               f"because grad_req='null'")

    def grad(self, ctx=None):
        """The gradient buffer on ``ctx``."""
        self._check_grad()
        return self._check_and_get(self._grad, ctx)

    def list_grad(self):
        self._check_grad()
        return self._check_and_get(self._grad, list)

    def list_ctx(self):
        """The contexts the value lives on (or will, once a deferred init completes)."""
        if self._data is None:
            if self._deferred_init:
                return self._deferred_init[1]
            raise RuntimeError(f"Parameter {self.name!r} has not been initialized")
        return self._ctx_list

    def zero_grad(self):
        """Set the gradient buffers to 0."""
        if self._grad is None:
            return
        for g in self._grad:
            ndarray.zeros_like(g, out=g)

    def var(self):
        """The Symbol variable standing for this parameter in a graph (made once)."""
        if self._var is None:
            self._var = symbol.var(self.name, shape=self.shape, dtype=self.dtype,
                                   lr_mult=self.lr_mult, wd_mult=self.wd_mult, init=self.init,
                                   stype=self._stype)
        return self._var

    def cast(self, dtype):
        """Convert the value and gradient to ``dtype``."""
        self._dtype = dtype
        self._var = None
        if self._data is None:
            return
        with autograd.pause():
            self._data = [d.astype(dtype) for d in self._data]
            if self._grad is None:
                return
            self._grad = [g.astype(dtype) for g in self._grad]
            autograd.mark_variables(self._data, self._grad, self.grad_req)


class _ValueInit(initializer.Initializer):
    """The initializer of a Constant: copies its value."""

    def __init__(self, value):
        super().__init__()
        self._value = value

    def _init_weight(self, _, arr):
        self._value.copyto(arr)


class Constant(Parameter):
    """A parameter that keeps ``value`` and takes no gradient (``grad_req`` stays 'null')."""

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ValueInit(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.')
        self._grad_req = "null"


class ParameterDict:
    """Parameters by full name, all starting with ``prefix``; a dict built with ``shared``
    takes parameters of that name from it first (how blocks share weights)."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` when absent; when present,
        ``kwargs`` must agree with it (a 0 in a shape matches any size and gets filled)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = self._params[name] = Parameter(name, **kwargs)
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None and len(v) == len(existing):
                merged = _merge_shapes(v, existing)
                if merged is not None:
                    param._shape = merged
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and v != existing:
                raise ParameterError(f"Cannot retrieve Parameter {name!r} because desired "
                                     f"attribute does not match with stored for attribute "
                                     f"{k!r}: desired {v!r} vs stored {existing!r}.")
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created from ``value`` when absent."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               f"to create a new constant.")
            param = self._params[name] = Constant(name, value)
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterError(f"Parameter {name!r} already exists but it is not a "
                                     f"constant.")
            if isinstance(value, ndarray.NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise ParameterError(f"Constant {name!r} already exists but it's value "
                                     f"doesn't match new value")
        return param

    def update(self, other):
        """Add ``other``'s parameters; a name present in both must be the same Parameter."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ParameterError(f"Cannot update self with other because they have "
                                     f"different Parameters with the same name {k!r}")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``init`` is the default for those without one)."""
        if init is None:
            init = initializer.Uniform()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        seen = []
        for p in self.values():
            seen.extend(c for c in p.list_ctx() if c not in seen)
        return seen

    def setattr(self, name, value):
        """Set attribute ``name`` (``grad_req``, ``lr_mult`` ...) of every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the values (mean over contexts) by name less ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but "
                                 f"Parameter's name '{param.name}' does not start with "
                                 f"'{strip_prefix}'. this may be due to your Block shares "
                                 f"parameters from other Blocks or you forgot to use 'with "
                                 f"name_scope()' when creating child blocks. {_NAMING}")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by ``save`` (names get ``restore_prefix`` back)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ParameterError(f"restore_prefix is '{restore_prefix}' but Parameters "
                                         f"name '{name}' does not start with "
                                         f"'{restore_prefix}'. {_NAMING}")
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra,
                       restore_prefix, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load from a dict of name -> NDArray (``arg:``/``aux:`` prefixes dropped)."""
        lprefix = len(restore_prefix)
        arg_dict = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                    for k, v in param_dict.items()}
        source = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' is missing in {source}, which contains "
                        f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                        f"source and target networks have the same prefix.{_NAMING}")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' loaded from {source} is not present in "
                        f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}"
                        f". Set ignore_extra to True to ignore. Please make sure source and "
                        f"target networks have the same prefix.{_NAMING}")
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def select(self, pattern):
        """A ParameterDict (same prefix) of the parameters whose name matches the regex."""
        ret = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        ret.update({k: v for k, v in self.items() if regex.match(k)})
        return ret


def _merge_shapes(wanted, existing):
    """``wanted`` and ``existing`` with unknown (0/-1) dims filled from the other, or None
    where they disagree."""
    merged = []
    for a, b in zip(wanted, existing):
        if a == b or a in (0, -1):
            merged.append(b)
        elif b in (0, -1):
            merged.append(a)
        else:
            return None
    return tuple(merged)
