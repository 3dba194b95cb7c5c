"""Exception family and the small helpers MXNet's Python code imports from ``mxnet.base``.

Only pure-Python helpers carry over: MXNet's ctypes layer (``_LIB``, ``check_call``,
``c_str``, the handle types, error registration for its C library) has no counterpart in a
library without a C core.
"""

from __future__ import annotations

import difflib
import os
import platform
import threading

import ml_dtypes
import numpy as np

__all__ = ["MXNetError", "EngineError", "ParamError", "OpNotFound", "PluginError", "PluginWarning",
           "ShapeError", "TypeInferError", "NotImplementedForSymbol",
           "NotSupportedForSparseNDArray", "describe_error", "did_you_mean", "py_str", "string_types",
           "numeric_types", "integer_types", "mx_real_t", "data_dir", "data_dir_default",
           "classproperty", "with_metaclass", "is_np_shape", "set_np_shape",
           "FLAG_TO_DTYPE", "DTYPE_TO_FLAG", "MXNET_BFLOAT16", "as_dtype"]

# mshadow's type flags: the ``.params`` format and ``__dtype__`` attributes use them.
# int16, uint16, uint32 and uint64 (8..11) are mshadow's and MXNet 2.x's; MXNet 1.9 neither
# stores nor loads them. bfloat16 is numpy's through ml_dtypes.
FLAG_TO_DTYPE = {0: np.dtype("<f4"), 1: np.dtype("<f8"), 2: np.dtype("<f2"), 3: np.dtype("u1"),
                 4: np.dtype("<i4"), 5: np.dtype("i1"), 6: np.dtype("<i8"), 7: np.dtype("?"),
                 8: np.dtype("<i2"), 9: np.dtype("<u2"), 10: np.dtype("<u4"), 11: np.dtype("<u8"),
                 12: np.dtype(ml_dtypes.bfloat16)}
DTYPE_TO_FLAG = {dt.newbyteorder("="): flag for flag, dt in FLAG_TO_DTYPE.items()}

# MXNet's Python spelling of bfloat16 (a 2-byte record; numpy had no bfloat16)
MXNET_BFLOAT16 = np.dtype([("bfloat16", np.uint16)])


def as_dtype(value) -> np.dtype:
    """``np.dtype(value)``, reading MXNet's bfloat16 record dtype as ml_dtypes' bfloat16."""
    dtype = np.dtype(value)
    return FLAG_TO_DTYPE[12] if dtype == MXNET_BFLOAT16 else dtype


class _Semantics(threading.local):
    np_shape = False


_semantics = _Semantics()


def is_np_shape() -> bool:
    """Whether this thread uses MXNet's NumPy shape semantics (``np_shape``). In mxnext shapes
    mean the same either way (0-d and zero-size arrays always work); what follows it is the
    file format, as in MXNet: ``mx.nd.save`` writes V3 records then, and a file loads only in
    the semantics it was saved in."""
    return _semantics.np_shape


def set_np_shape(active) -> bool:
    """Turn NumPy shape semantics on or off for this thread; returns the previous state."""
    prev, _semantics.np_shape = _semantics.np_shape, bool(active)
    return prev


# -- type groups ported code tests against (Python 3 spellings of MXNet's) ----------------
integer_types = (int, np.int32, np.int64)
numeric_types = (float, int, np.generic)
string_types = (str,)
mx_real_t = np.float32          # MXNet's default real type


def py_str(x) -> str:
    """Text from what a C-style API hands back: UTF-8 ``bytes`` are decoded, ``str`` passes."""
    return x if isinstance(x, str) else bytes(x).decode("utf-8")


def _as_list(obj):
    """``obj`` itself if it is a list or tuple, else ``[obj]``."""
    return obj if isinstance(obj, (list, tuple)) else [obj]


# -- errors ---------------------------------------------------------------------------------
class MXNetError(RuntimeError):
    """Root of every error mxnext raises on purpose."""


class EngineError(MXNetError):
    """An engine misuse (e.g. a blocking wait from inside a worker) or a failed pushed function."""


class ParamError(MXNetError, ValueError):
    """A bad operator parameter: names the op, the field, the value and what is allowed."""


class OpNotFound(MXNetError, KeyError):
    """An operator name that no plugin registered."""

    def __str__(self) -> str:  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


class PluginError(MXNetError):
    """A plugin failed to load or register, or two plugins conflict."""


class PluginWarning(UserWarning):
    """A plugin failed to load (and was skipped), one of its definitions was refused, or a
    request about plugins was ignored."""


def describe_error(exc: BaseException) -> str:
    """``"Type: message"`` for an error a plugin raised; ``sys.exit(code)`` says so."""
    if isinstance(exc, SystemExit):
        return f"SystemExit: the plugin called sys.exit({exc.code!r})"
    return f"{type(exc).__name__}: {exc}"


class ShapeError(MXNetError, ValueError):
    """Shape inference failed or shapes disagree."""


class TypeInferError(MXNetError, TypeError):
    """Type inference failed or dtypes disagree."""


class _UnavailableFor(MXNetError):
    """A function called on an array kind it does not support; the message names both."""

    _kind = ""

    def __init__(self, function, alias=None, *args):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self) -> str:
        alias = f' (namely operator "{self.alias}")' if self.alias else ""
        args = f" with arguments ({', '.join(self.args)})" if self.args else ""
        return f"Function {self.function}{alias}{args} {self._kind}"


class NotImplementedForSymbol(_UnavailableFor):
    """An NDArray-only function called on a Symbol."""

    _kind = "is not implemented for Symbol and only available in NDArray."


class NotSupportedForSparseNDArray(_UnavailableFor):
    """A dense-only function called on a sparse array."""

    _kind = "is not supported for SparseNDArray and only available in NDArray."


def did_you_mean(name: str, choices, n: int = 3) -> str:
    """`` (did you mean 'a', 'b'?)`` or an empty string."""
    close = difflib.get_close_matches(name, list(choices), n=n, cutoff=0.6)
    return f" (did you mean {', '.join(repr(c) for c in close)}?)" if close else ""


# -- data directory -------------------------------------------------------------------------
def data_dir_default() -> str:
    """``%APPDATA%\\mxnet`` on Windows, ``~/.mxnet`` elsewhere (MXNet's location)."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """Where downloads (datasets, model weights) go: ``$MXNET_HOME``, else the default."""
    return os.getenv("MXNET_HOME", data_dir_default())


# -- class-level properties -----------------------------------------------------------------
class _MXClassPropertyDescriptor:
    """A property read (and optionally set) on the class itself."""

    def __init__(self, fget, fset=None):
        self.fget, self.fset = fget, fset

    def __get__(self, obj, cls=None):
        return self.fget.__get__(obj, type(obj) if cls is None else cls)()

    def __set__(self, obj, value):
        if not self.fset:
            raise MXNetError(f"cannot set class property of {getattr(obj, '__name__', obj)!r}: "
                             f"it has no setter")
        cls = obj if isinstance(obj, type) else type(obj)
        return self.fset.__get__(None, cls)(value)

    def setter(self, func):
        self.fset = func if isinstance(func, (classmethod, staticmethod)) else classmethod(func)
        return self


class _MXClassPropertyMetaClass(type):
    """Metaclass that routes ``Cls.prop = value`` to a class property's setter."""

    def __setattr__(cls, key, value):
        prop = cls.__dict__.get(key)
        if isinstance(prop, _MXClassPropertyDescriptor):
            return prop.__set__(cls, value)
        return super().__setattr__(key, value)


def classproperty(func):
    """Decorator: a read-only property of the class (settable with ``.setter`` when the class
    uses ``with_metaclass(_MXClassPropertyMetaClass)``)."""
    return _MXClassPropertyDescriptor(
        func if isinstance(func, (classmethod, staticmethod)) else classmethod(func))


def with_metaclass(meta, *bases):
    """A stand-in base: ``class C(with_metaclass(Meta, B))`` makes ``C`` with metaclass ``Meta``
    and bases ``(B,)`` exactly (the stand-in leaves no trace in ``C.__mro__``)."""

    class _StandIn(meta):
        def __new__(cls, name, _stand_in_bases, namespace):
            return meta(name, bases, namespace)

    return type.__new__(_StandIn, "_WithMetaclassBase", (), {})
