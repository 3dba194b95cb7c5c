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
    the format ``tag``)."""

    __slots__ = ("lib", "md")

    def __init__(self, lib, dims, any: bool = False, tag: int | None = None):
        self.lib, self.md = lib, ctypes.c_void_p()
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
        lib, stream, mems = self.lib, self.lib.stream(), []
        try:
            def memory(md, ptr):
                m = ctypes.c_void_p()
                lib.check("dnnl_memory_create", ctypes.byref(m), md, lib.engine,
                          ctypes.c_void_p(ptr))
                mems.append(m)
                return m
            exec_args, after, keep = [], [], []
            for a in self.args:
                user = memory(a.user.md, arrays[a.arg].ctypes.data)
                if a.reorder is None:
                    exec_args.append((a.arg, user))
                    continue
                buf = np.empty(a.size, np.uint8)
                keep.append(buf)
                inner = memory(a.md, buf.ctypes.data)
                exec_args.append((a.arg, inner))
                if a.arg in self.outputs:
                    after.append((a.reorder, inner, user))
                else:
                    _execute(lib, a.reorder, stream, [(d.ARG_SRC, user), (d.ARG_DST, inner)])
            for arg, md, size in self.extra:
                buf = workspace if arg == d.ARG_WORKSPACE and workspace is not None \
                    else np.empty(size, np.uint8)
                keep.append(buf)
                exec_args.append((arg, memory(md, buf.ctypes.data)))
            _execute(lib, self.prim, stream, exec_args)
            for reorder, inner, user in after:
                _execute(lib, reorder, stream, [(d.ARG_SRC, inner), (d.ARG_DST, user)])
        finally:
            for m in mems:
                lib.dnnl_memory_destroy(m)

    def workspace_size(self) -> int:
        return next((size for arg, _, size in self.extra if arg == d.ARG_WORKSPACE), 0)

    def __del__(self):
        for p in getattr(self, "_owned", ()):
            if p:
                self.lib.dnnl_primitive_destroy(p)
        if getattr(self, "pd", None):
            self.lib.dnnl_primitive_desc_destroy(self.pd)


def _execute(lib, prim, stream, args) -> None:
    arr = (d.ExecArg * len(args))(*[d.ExecArg(a, m) for a, m in args])
    lib.check("dnnl_primitive_execute", prim, stream, len(args), arr)


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
