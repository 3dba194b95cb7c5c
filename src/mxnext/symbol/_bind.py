"""``Symbol``'s methods that make and run executors (``bind``, ``simple_bind``, ``eval``), and
``Executor.reshape``."""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.context import Context
from .._runtime.graph import IndexedGraph
from .._runtime.opctx import as_req
from ..executor.executor import Executor
from ..ndarray._array import NDArray
from ..ndarray._copies import filled
from ..ndarray.serialization import _STYPE_NAMES
from ..ndarray.sparse import zeros as sparse_zeros

__all__ = ["BindMethods"]


class BindMethods:
    """Mixed into ``Symbol``: everything that turns a graph into an ``Executor``."""

    __slots__ = ()

    def bind(self, ctx, args, args_grad=None, grad_req="write", aux_states=None,
             group2ctx=None, shared_exec=None):
        """An executor over the given arrays: ``args`` (a list in ``list_arguments()`` order,
        or a dict by name), ``args_grad`` (the same, entries may be missing: no gradient),
        ``grad_req`` ('write', 'add', 'null'; one for all, a list, or a dict by name),
        ``aux_states`` (list or dict)."""
        _check_ctx(ctx)
        names, aux_names = self.list_arguments(), self.list_auxiliary_states()
        args = _by_name("args", args, names, allow_missing=False)
        grads = {} if args_grad is None else _by_name("args_grad", args_grad, names, True)
        aux = _by_name("aux_states", aux_states or [], aux_names, allow_missing=False)
        reqs = _grad_reqs(grad_req, names)
        reqs = {n: (r if grads.get(n) is not None else "null") for n, r in reqs.items()}
        return Executor(self, ctx, args, grads, reqs, aux, group2ctx, shared_exec)

    def simple_bind(self, ctx, grad_req="write", type_dict=None, stype_dict=None,
                    group2ctx=None, shared_arg_names=None, shared_exec=None,
                    shared_buffer=None, **kwargs):
        """An executor with new arrays (zeros) for every argument, gradient and auxiliary
        state, their shapes inferred from ``kwargs`` (name=shape) and dtypes from
        ``type_dict`` (float32 otherwise). With ``group2ctx``, a new array of a variable made
        in ``AttrScope(ctx_group=g)`` is made on ``group2ctx[g]`` where that shares the bound
        context's memory (CPU contexts); the operators still run on ``ctx``.

        The arguments named in ``shared_arg_names`` (and their gradients) are
        ``shared_exec``'s, which must hold them with the same shape and dtype (without
        ``shared_exec``, new arrays). With ``shared_buffer`` (a dict name -> NDArray, as
        MXNet's bucketing passes), every other argument, and its gradient as ``"grad of <name>"``, is a view of the buffer's array
        of that name when that is large enough (dtypes must match), else a new array that
        replaces or joins the buffer's. Without ``shared_buffer``, arrays of ``shared_exec``
        with the same name, shape and dtype are used instead of new ones."""
        _check_ctx(ctx)
        stypes = _sparse_stypes({**_declared_stypes(self), **(stype_dict or {})},
                                self.list_arguments())
        if shared_buffer is not None and not isinstance(shared_buffer, dict):
            raise MXNetError(f"simple_bind: shared_buffer must be a dict of name -> NDArray, "
                             f"got {type(shared_buffer).__name__}")
        # MXNet: keyword arguments that are not tuples are not shapes, and are ignored
        kwargs = {k: v for k, v in kwargs.items() if isinstance(v, tuple)}
        arg_shapes, _, aux_shapes = self.infer_shape(**kwargs)
        if arg_shapes is None:
            raise MXNetError(f"simple_bind: the given shapes {kwargs} do not determine every "
                             f"argument's shape (see infer_shape_partial)")
        if type_dict is None:            # MXNet: float32 for arguments without __dtype__
            attrs = self.attr_dict()
            type_dict = {n: np.float32 for n in self.list_arguments()
                         if "__dtype__" not in attrs.get(n, {})}
        arg_types, _, aux_types = self.infer_type(**type_dict)
        names, aux_names = self.list_arguments(), self.list_auxiliary_states()
        arg_types = arg_types or [np.float32] * len(names)
        aux_types = aux_types or [np.float32] * len(aux_names)
        reqs = _grad_reqs(grad_req, names)
        shared_names = set(shared_arg_names or ())
        shared = shared_exec
        place = _placement(self, ctx, group2ctx)
        rsp_grads = _row_sparse_grads(self, stypes)

        def make(name, shape, dtype, kind):
            shape, dtype = tuple(shape), np.dtype(dtype)
            param = kind != "aux_dict" and name in shared_names
            if param and shared is not None:        # a parameter: shared_exec's
                return _from_shared(shared, kind, name, shape, dtype)
            old = None if shared is None else getattr(shared, kind).get(name)
            fits = old is not None and old.shape == shape and old.dtype == dtype
            sparse = stypes.get(name) if kind == "arg_dict" else \
                "row_sparse" if kind == "grad_dict" and name in rsp_grads else None
            if sparse:                  # never a dense array first (it can be vastly larger)
                if kind == "arg_dict" and shared_buffer is None and fits \
                        and old.stype == sparse:
                    return old
                return sparse_zeros(sparse, shape, place(name), dtype)
            if kind != "aux_dict" and not param and shared_buffer is not None:
                key = name if kind == "arg_dict" else f"grad of {name}"
                return _from_buffer(shared_buffer, key, shape, dtype, place(name))
            return old if fits else filled(shape, dtype, place(name), 0)
        args = {n: make(n, s, t, "arg_dict") for n, s, t in zip(names, arg_shapes, arg_types)}
        grads = {n: make(n, s, t, "grad_dict") for n, s, t in zip(names, arg_shapes, arg_types)
                 if reqs[n] != "null"}
        aux = {n: make(n, s, t, "aux_dict") for n, s, t in zip(aux_names, aux_shapes, aux_types)}
        return Executor(self, ctx, args, grads, reqs, aux, group2ctx, shared_exec)

    def eval(self, ctx=None, **kwargs):
        """Bind to the given arrays (name=NDArray), run forward, return the outputs."""
        ctx = ctx or Context("cpu", 0)
        return self.bind(ctx, kwargs, grad_req="null").forward()

    def _reshaped(self, executor, partial_shaping, allow_up_sizing, shapes):
        """``Executor.reshape``, as MXNet's: an array whose shape changes (it must be named in
        ``shapes`` unless ``partial_shaping``) is a view of its old memory when it is no larger,
        else a new array (only with ``allow_up_sizing``); the new executor shares the old one's
        planned memory and keeps its monitor callback."""
        sym = self
        arg_shapes, _, aux_shapes = sym.infer_shape(**shapes)
        if arg_shapes is None:
            raise MXNetError(f"Executor.reshape: the shapes {shapes} do not determine every "
                             f"argument's shape")
        names, aux_names = sym.list_arguments(), sym.list_auxiliary_states()

        def take(old, name, shape, kind):
            shape = tuple(shape)
            if old.shape == shape:
                return old
            if name not in shapes and not partial_shaping:
                raise MXNetError(f"Executor.reshape: the shape of {kind} {name!r} changes from "
                                 f"{old.shape} to {shape}; name it or pass partial_shaping=True")
            if old.stype != "default":      # sparse: no memory to view, a new empty array
                return sparse_zeros(old.stype, shape, old.context, old.dtype)
            if int(np.prod(shape)) <= old.size:
                return old._view(shape)
            if not allow_up_sizing:
                raise MXNetError(f"Executor.reshape: {kind} {name!r} grows from {old.shape} to "
                                 f"{shape}; pass allow_up_sizing=True to allocate a new array")
            return filled(shape, np.dtype(old.dtype), old.context, 0)
        args = {n: take(executor.arg_dict[n], n, s, "argument") for n, s in zip(names, arg_shapes)}
        grads = {n: take(executor.grad_dict[n], n, s, "gradient")
                 for n, s in zip(names, arg_shapes) if executor.grad_dict.get(n) is not None}
        aux = {n: take(executor.aux_dict[n], n, s, "auxiliary state")
               for n, s in zip(aux_names, aux_shapes)}
        new = Executor(sym, executor._ctx, args, grads, executor._grad_req, aux,
                       executor._group2ctx, shared_exec=executor)
        new._monitor = executor._monitor        # a monitor callback stays, as in MXNet
        return new


def _check_ctx(ctx):
    if not isinstance(ctx, Context):
        raise TypeError(f"bind: ctx must be a Context, got {type(ctx).__name__}")


def _by_name(what, arrays, names, allow_missing):
    if isinstance(arrays, (list, tuple)):
        if len(arrays) != len(names):
            raise ValueError(f"bind: {what} has {len(arrays)} arrays for {len(names)} names "
                             f"({', '.join(names)})")
        arrays = dict(zip(names, arrays))
    elif not isinstance(arrays, dict):
        raise TypeError(f"bind: {what} must be a list of NDArrays or a dict of str to NDArray, "
                        f"got {type(arrays).__name__}")
    out = {}
    for n in names:
        a = arrays.get(n)
        if a is None:
            if not allow_missing:
                raise ValueError(f"bind: key {n!r} is missing in {what}")
            continue
        if not isinstance(a, NDArray):
            raise TypeError(f"bind: {what}[{n!r}] must be an NDArray, got {type(a).__name__}")
        out[n] = a
    return out


def _grad_reqs(grad_req, names):
    if isinstance(grad_req, str):
        reqs = dict.fromkeys(names, grad_req)
    elif isinstance(grad_req, (list, tuple)):
        if len(grad_req) != len(names):
            raise ValueError(f"bind: grad_req has {len(grad_req)} entries for {len(names)} "
                             f"arguments")
        reqs = dict(zip(names, grad_req))
    elif isinstance(grad_req, dict):
        reqs = {n: grad_req.get(n, "null") for n in names}
    else:
        raise TypeError(f"bind: grad_req must be a str, list or dict, got {grad_req!r}")
    for n, r in reqs.items():
        as_req(r)                                  # unknown strings are an error
        if r == "inplace":
            reqs[n] = "write"
    return reqs


def _from_shared(shared_exec, kind, name, shape, dtype) -> NDArray:
    """``shared_exec``'s array ``name`` (``kind``: arg_dict, grad_dict), which must fit."""
    what = "argument" if kind == "arg_dict" else "gradient of argument"
    old = getattr(shared_exec, kind).get(name)
    if old is None:
        raise MXNetError(f"simple_bind: shared_arg_names names {name!r}, but shared_exec has "
                         f"no {what} {name!r} to share")
    if old.shape != shape or old.dtype != dtype:
        raise MXNetError(f"simple_bind: shared_arg_names names {name!r}, whose {what} in "
                         f"shared_exec is {old.shape} {np.dtype(old.dtype)}, but this executor "
                         f"needs {shape} {dtype}")
    return old


def _from_buffer(buffer: dict, key, shape, dtype, ctx) -> NDArray:
    """MXNet's ReshapeOrCreate: a view of ``buffer[key]`` when it holds enough elements,
    else a new zero array put into ``buffer`` under ``key``."""
    old = buffer.get(key)
    size = int(np.prod(shape, dtype=np.int64))
    if old is not None and old.size >= size and old.context == ctx:
        if old.dtype != dtype:
            raise MXNetError(f"simple_bind: shared_buffer[{key!r}] is {np.dtype(old.dtype)}, "
                             f"but this executor needs {dtype} for it")
        return old._view(shape)
    buffer[key] = filled(shape, dtype, ctx, 0)
    return buffer[key]


def _placement(sym, ctx, group2ctx):
    """name -> the context of a new array for that variable: its ``ctx_group``'s context in
    ``group2ctx`` when both are CPU contexts (one host memory, so the operators on ``ctx``
    read it as is), else ``ctx``."""
    if not group2ctx:
        return lambda name: ctx
    attrs = sym.attr_dict()

    def place(name):
        group = attrs.get(name, {}).get("__ctx_group__")
        target = group2ctx.get(group) if group is not None else None
        if target is not None and target.device_type == "cpu" == ctx.device_type:
            return target
        return ctx
    return place


_SPARSE_GRAD_OPS = ("Embedding", "_contrib_SparseEmbedding")


def _row_sparse_grads(sym, stypes) -> set:
    """The variables whose gradient MXNet stores row_sparse (its backward storage inference):
    the weight of an Embedding with ``sparse_grad``, or of a SparseEmbedding, and the rhs of
    ``dot(csr, rhs)`` (untransposed) where the lhs is a CSR argument (``stypes``)."""
    names = set()
    for node in IndexedGraph(sym._outputs).nodes:
        if node.op is None or not node.inputs or node.inputs[-1].node.op is not None:
            continue
        if node.op.name in _SPARSE_GRAD_OPS:
            wanted = getattr(node.params, "sparse_grad", True)
        elif node.op.name == "dot":
            lhs = node.inputs[0].node
            wanted = (lhs.op is None and stypes.get(lhs.name) == "csr"
                      and not node.params.transpose_a and not node.params.transpose_b)
        else:
            continue
        if wanted:
            names.add(node.inputs[-1].node.name)
    return names


_STYPE_OF_ATTR = {str(i): name for i, name in _STYPE_NAMES.items()}   # "1" -> "row_sparse"


def _declared_stypes(sym) -> dict:
    """The storage types variables declare (``mx.sym.var(stype=...)``, the attribute
    ``__storage_type__``): MXNet's executor takes them for arguments stype_dict leaves out."""
    return {name: _STYPE_OF_ATTR.get(attrs["__storage_type__"], "default")
            for name, attrs in sym.attr_dict().items() if "__storage_type__" in attrs}


def _sparse_stypes(stype_dict, names) -> dict:
    """The arguments ``stype_dict`` makes sparse (name -> 'csr' or 'row_sparse')."""
    out = {}
    for name, stype in (stype_dict or {}).items():
        if stype in (None, "default"):
            continue
        if stype not in ("csr", "row_sparse"):
            raise MXNetError(f"simple_bind: stype_dict[{name!r}]: expected 'default', 'csr' or "
                             f"'row_sparse', got {stype!r}")
        if name in names:
            out[name] = stype
    return out
