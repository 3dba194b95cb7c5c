"""oneDNN primitives over plain (row-major, C-contiguous) numpy arrays: a ``Plan`` holds one
primitive, the layouts it chose and the reorders between them and the arrays; ``cached``
keeps one plan per shape and attributes."""

from __future__ import annotations

import ctypes
import threading
from collections import OrderedDict

import numpy as np

from . import _dnnl as d

_CACHE_MAX = 512


class Desc:
    """An owned memory descriptor: float32, ``dims``, row-major (or any layout: ``any``; or
    the format ``tag``; or ``strides`` in elements, such as a transposed matrix's)."""

    __slots__ = ("lib", "md")

    def __init__(self, lib, dims, any: bool = False, tag: int | None = None, strides=None):
        self.lib, self.md = lib, ctypes.c_void_p()
        if strides is not None:
            lib.check("dnnl_memory_desc_create_with_strides", ctypes.byref(self.md),
                      len(dims), dims_of(dims), d.F32, dims_of(strides))
            return
        if tag is None:
            tag = d.TAG_ANY if any else d.TAG_A + len(dims) - 1
        lib.check("dnnl_memory_desc_create_with_tag", ctypes.byref(self.md), len(dims),
                  dims_of(dims), d.F32, tag)

    def __del__(self):
        if self.md:
            self.lib.dnnl_memory_desc_destroy(self.md)


def dims_of(values) -> d.Dims:
    return d.Dims(*values)


def attr_user_scratchpad(lib):
    """A primitive attribute asking for the scratchpad as an argument: each call brings its
    own, so threads may run one primitive at once."""
    attr = ctypes.c_void_p()
    lib.check("dnnl_primitive_attr_create", ctypes.byref(attr))
    lib.check("dnnl_primitive_attr_set_scratchpad_mode", attr, d.SCRATCHPAD_USER)
    return attr


class _Arg:
    __slots__ = ("arg", "user", "md", "reorder", "size")

    def __init__(self, arg, user, md, reorder, size):
        self.arg, self.user, self.md, self.reorder, self.size = arg, user, md, reorder, size


class Plan:
    """Primitive descriptor ``pd`` made into a primitive run on row-major arrays: ``plain``
    maps each argument to its row-major ``Desc``; those in ``outputs`` are written."""

    def __init__(self, lib, pd, plain: dict, outputs=()):
        self.lib, self.pd, self.prim = lib, pd, ctypes.c_void_p()
        self._owned = [self.prim]
        self.args: list[_Arg] = []
        self.plain = plain              # keeps the user descriptors alive
        lib.check("dnnl_primitive_create", ctypes.byref(self.prim), pd)
        for arg, user in plain.items():
            md = lib.dnnl_primitive_desc_query_md(pd, d.QUERY_EXEC_ARG_MD, arg)
            if not md or not lib.dnnl_memory_desc_get_size(md):
                md = user.md    # one the primitive does not describe (a runtime scale)
            reorder = None
            if not lib.dnnl_memory_desc_equal(md, user.md):
                src, dst = (md, user.md) if arg in outputs else (user.md, md)
                reorder = self._reorder(src, dst)
            self.args.append(_Arg(arg, user, md, reorder, lib.dnnl_memory_desc_get_size(md)))
        self.extra = []                 # (arg, md, bytes): scratchpad, workspace
        for arg in (d.ARG_SCRATCHPAD, d.ARG_WORKSPACE):
            md = lib.dnnl_primitive_desc_query_md(pd, d.QUERY_MD[arg], 0)
            size = lib.dnnl_memory_desc_get_size(md) if md else 0
            if size:
                self.extra.append((arg, md, size))
        self.outputs = set(outputs)
        self._bound = threading.local()     # each thread's _Bound memories

    def _reorder(self, src, dst):
        lib, rpd, prim = self.lib, ctypes.c_void_p(), ctypes.c_void_p()
        lib.check("dnnl_reorder_primitive_desc_create", ctypes.byref(rpd), src, lib.engine,
                  dst, lib.engine, None)
        try:
            lib.check("dnnl_primitive_create", ctypes.byref(prim), rpd)
        finally:
            lib.dnnl_primitive_desc_destroy(rpd)
        self._owned.append(prim)
        return prim

    def run(self, arrays: dict, workspace: np.ndarray | None = None) -> None:
        """Execute on ``arrays`` (argument -> C-contiguous float32 array of the argument's
        row-major shape); ``workspace``, when given, is the workspace buffer."""
        b = getattr(self._bound, "memories", None)
        if b is None:
            b = self._bound.memories = _Bound(self)
        lib, stream, keep, after = self.lib, self.lib.stream(), [], []

        def point(memory, array):
            status = lib.dnnl_memory_set_data_handle(memory, array.ctypes.data)
            if status:
                raise d.DnnlError("dnnl_memory_set_data_handle", status)
        for a, user, inner in zip(self.args, b.user, b.inner):
            point(user, arrays[a.arg])
            if inner is None:
                continue
            buf = np.empty(a.size, np.uint8)
            keep.append(buf)
            point(inner, buf)
            if a.arg in self.outputs:
                after.append((a.reorder, b.reorder_args[a.arg]))
            else:
                _execute(lib, a.reorder, stream, b.reorder_args[a.arg])
        for (arg, _, size), mem in zip(self.extra, b.extra):
            buf = workspace if arg == d.ARG_WORKSPACE and workspace is not None \
                else np.empty(size, np.uint8)
            keep.append(buf)
            point(mem, buf)
        _execute(lib, self.prim, stream, b.exec_args)
        for reorder, args in after:
            _execute(lib, reorder, stream, args)

    def workspace_size(self) -> int:
        return next((size for arg, _, size in self.extra if arg == d.ARG_WORKSPACE), 0)

    def __del__(self):
        for p in getattr(self, "_owned", ()):
            if p:
                self.lib.dnnl_primitive_destroy(p)
        if getattr(self, "pd", None):
            self.lib.dnnl_primitive_desc_destroy(self.pd)


def _exec_args(pairs):
    """A ``dnnl_exec_arg_t`` array of (argument, memory) pairs and its length."""
    return len(pairs), (d.ExecArg * len(pairs))(*[d.ExecArg(a, m) for a, m in pairs])


def _execute(lib, prim, stream, args) -> None:
    lib.check("dnnl_primitive_execute", prim, stream, *args)


class _Bound:
    """One thread's oneDNN memory objects for a plan's arguments, made once: a run only
    points them at its arrays (``dnnl_memory_set_data_handle``)."""

    def __init__(self, plan: Plan):
        self.lib, self.owned = plan.lib, []
        self.user = [self._memory(a.user.md) for a in plan.args]
        self.inner = [None if a.reorder is None else self._memory(a.md) for a in plan.args]
        self.extra = [self._memory(md) for _, md, _ in plan.extra]
        self.reorder_args = {}
        for a, user, inner in zip(plan.args, self.user, self.inner):
            if inner is not None:
                src, dst = (inner, user) if a.arg in plan.outputs else (user, inner)
                self.reorder_args[a.arg] = _exec_args([(d.ARG_SRC, src), (d.ARG_DST, dst)])
        self.exec_args = _exec_args(
            [(a.arg, user if inner is None else inner)
             for a, user, inner in zip(plan.args, self.user, self.inner)] +
            [(arg, mem) for (arg, _, _), mem in zip(plan.extra, self.extra)])

    def _memory(self, md):
        m = ctypes.c_void_p()
        self.lib.check("dnnl_memory_create", ctypes.byref(m), md, self.lib.engine, None)
        self.owned.append(m)
        return m

    def __del__(self):
        for m in self.owned:
            self.lib.dnnl_memory_destroy(m)


def create_pd(lib, fn: str, *args):
    """A primitive descriptor from ``fn(&pd, *args)``; None where oneDNN implements no such
    primitive (the caller then falls back)."""
    pd = ctypes.c_void_p()
    status = getattr(lib, fn)(ctypes.byref(pd), *args)
    if status == d.UNIMPLEMENTED:
        return None
    if status:
        raise d.DnnlError(fn, status)
    return pd


_cache: OrderedDict = OrderedDict()
_cache_lock = threading.Lock()


def cached(key, build):
    """The plan for ``key`` on this thread's OpenMP thread count (a primitive runs on the
    count it was created under), ``build()`` at its first use (None: not implemented,
    remembered as well); the least recently used of more than ``_CACHE_MAX`` is dropped."""
    key = (key, d.threads())
    with _cache_lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    plan = build()
    with _cache_lock:
        _cache[key] = plan
        while len(_cache) > _CACHE_MAX:
            _cache.popitem(last=False)
    return plan


def cache_size() -> int:
    return len(_cache)
