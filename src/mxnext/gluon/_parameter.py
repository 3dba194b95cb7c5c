"""MXNet 1.9's ``gluon.Parameter`` and the errors of parameters.

A Parameter holds one copy of its value per context (``data(ctx)``) and, unless
``grad_req='null'``, a gradient buffer per copy that autograd writes (the copies are marked
variables). Its shape may hold unknown (0) dimensions until the first forward completes
it: ``initialize`` then only records what to do (deferred initialisation).

Errors that MXNet raises with ``assert`` are ``ParameterError``, an AssertionError too, so
code catching either keeps working.
"""

from __future__ import annotations

import warnings
import weakref

import numpy as np

from .. import autograd, initializer, ndarray, symbol
from .._runtime.base import MXNetError, is_np_shape
from .._runtime.context import Context, cpu, current_context
from .utils import shape_is_known

__all__ = ["DeferredInitializationError", "ParameterError", "Parameter", "tensor_types"]

tensor_types = (symbol.Symbol, ndarray.NDArray)


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
        self._trainer_ref = None
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

    @property
    def _trainer(self):
        """The Trainer set last (held weakly: a Parameter does not keep its Trainer alive)."""
        return self._trainer_ref() if self._trainer_ref is not None else None

    @_trainer.setter
    def _trainer(self, trainer):
        # MXNet's attribute: subclasses copy it (GluonNLP's WeightDropParameter)
        self._trainer_ref = weakref.ref(trainer) if trainer is not None else None

    def _set_trainer(self, trainer):
        """Remember the Trainer (a row_sparse parameter's values come through its store)."""
        current = self._trainer
        if self._stype != "default" and current and trainer and current is not trainer:
            raise RuntimeError(f"Failed to set the trainer for Parameter {self.name!r} because "
                               f"it was already set. More than one trainers for a "
                               f"{self._stype} Parameter is not supported.")
        self._trainer_ref = weakref.ref(trainer) if trainer is not None else None

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
        self._adopt_saved_shape(data.shape)
        data = self._adopt_saved_dtype(data, cast_dtype, dtype_source)
        if data.stype != self._stype:
            data = data.tostype(self._stype)
        if isinstance(ctx, Context):
            ctx = [ctx]
        if self._data is None:
            self._init_impl(data, self._first_load_contexts(ctx))
        else:
            self._check_load_contexts(ctx, self.list_ctx())
            self.set_data(data)
        self._deferred_init = ()

    def _adopt_saved_shape(self, saved):
        """Fill the unknown dimensions of the shape from ``saved``, which must agree with
        the known ones."""
        if not self.shape:
            return
        unknown = -1 if is_np_shape() else 0
        if len(self.shape) != len(saved) or any(
                mine not in (unknown, s) for mine, s in zip(self.shape, saved)):
            raise ParameterError(f"Failed loading Parameter {self.name!r} from saved "
                                 f"params: shape incompatible expected {self.shape} "
                                 f"vs saved {saved}")
        self.shape = tuple(s if s != unknown else d for s, d in zip(self.shape, saved))

    def _adopt_saved_dtype(self, data, cast_dtype, dtype_source):
        """``data`` where its dtype is this parameter's; otherwise, with ``cast_dtype``, cast
        to this dtype (``dtype_source`` 'current') or adopted as it ('saved')."""
        if not self.dtype or np.dtype(self.dtype) == np.dtype(data.dtype):
            return data
        if not cast_dtype:
            raise ParameterError(
                f"Failed loading Parameter {self.name!r} from saved params: dtype "
                f"incompatible expected {np.dtype(self.dtype).type} vs saved "
                f"{np.dtype(data.dtype).type}. Set cast_dtype=True to cast the dtype of "
                f"saved params.")
        if dtype_source == "current":
            return data.astype(self.dtype, copy=False)
        self.cast(data.dtype)            # the values held already take the saved dtype too
        return data

    def _first_load_contexts(self, ctx):
        """Where a load into an uninitialised parameter goes: the contexts of a pending
        deferred initialisation (``ctx`` must then name the same), else ``ctx``, else cpu."""
        if self._deferred_init:
            self._check_load_contexts(ctx, self._deferred_init[1])
            return self._deferred_init[1]
        return [cpu()] if ctx is None else ctx

    def _check_load_contexts(self, ctx, current):
        if ctx is not None and set(ctx) != set(current):
            raise ParameterError(f"Failed to load Parameter {self.name!r} on {ctx} because "
                                 f"it was previous initialized on {current}.")

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
        if data.stype != self._stype:
            data = data.tostype(self._stype)
        self._data = [data.copyto(ctx) for ctx in self._ctx_list]
        self._init_grad()

    def _init_grad(self):
        if self.grad_req == "null":
            self._grad = None
            return
        self._grad = [ndarray.zeros(d.shape, dtype=d.dtype, ctx=d.context,
                                    stype=self._grad_stype) for d in self._data]
        autograd.mark_variables(self._data, self._grad, self.grad_req)

    def _reduce(self):
        """The value on cpu: the mean over the contexts (a row_sparse one: every row, from
        the Trainer's store)."""
        if self._stype != "default":
            data = ndarray.zeros(self.shape, dtype=self.dtype, ctx=cpu(), stype=self._stype)
            if self._trainer is None:
                return self._data[0].copyto(data)
            all_rows = ndarray.arange(0, self.shape[0], dtype="int64", ctx=cpu())
            self._trainer._row_sparse_pull(self, data, all_rows, full_idx=True)
            return data
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
        trainer = self._trainer
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

    def _get_row_sparse(self, ctx, row_id):
        """The value(s) on ``ctx`` with the rows ``row_id`` pulled from the Trainer's store."""
        if not isinstance(row_id, ndarray.NDArray):
            raise TypeError(f"row_id must have NDArray type, but {type(row_id)} is given")
        if self._trainer is None:
            raise RuntimeError(f"Cannot get row_sparse data for Parameter {self.name!r} when "
                               f"no Trainer is created with it.")
        results = self._check_and_get(self._data, ctx)
        self._trainer._row_sparse_pull(self, results, row_id)
        return results

    def row_sparse_data(self, row_id):
        """The value on ``row_id``'s context holding (only) the rows ``row_id``."""
        self._check_row_sparse("row_sparse_data")
        return self._get_row_sparse(row_id.context, row_id)

    def list_row_sparse_data(self, row_id):
        """The values on every context holding (only) the rows ``row_id``."""
        self._check_row_sparse("list_row_sparse_data")
        return self._get_row_sparse(list, row_id)

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
