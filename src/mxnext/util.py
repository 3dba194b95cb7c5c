"""MXNet's ``mxnet.util`` helpers that ported code imports."""

from __future__ import annotations

import functools
import inspect
import os
import threading

from ._runtime.base import is_np_shape, set_np_shape

__all__ = ["makedirs", "get_gpu_count", "is_np_array", "np_array", "is_np_shape",
           "set_np_shape", "np_shape", "set_np", "reset_np", "use_np", "use_np_array",
           "use_np_shape", "getenv", "setenv"]


def makedirs(d: str) -> None:
    """Create ``d`` and its parents; no error if it exists."""
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def get_gpu_count() -> int:
    from ._runtime.context import num_gpus
    return num_gpus()


class _NumpyArrayScope:
    """The NumPy-array flag of a thread, as MXNet keeps it: the innermost scope entered in
    this thread is ``_NumpyArrayScope._current.value`` (``_current`` is a
    ``threading.local``); use ``np_array(active)`` rather than this class."""

    _current = threading.local()

    def __init__(self, is_np_array):
        self._old_scope = None
        self._is_np_array = bool(is_np_array)

    def __enter__(self):
        if not hasattr(_NumpyArrayScope._current, "value"):
            _NumpyArrayScope._current.value = _NumpyArrayScope(False)
        self._old_scope = _NumpyArrayScope._current.value
        _NumpyArrayScope._current.value = self
        return self

    def __exit__(self, *exc):
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True) -> _NumpyArrayScope:
    """``with np_array(active):`` turns the NumPy-array flag on (or off) in this thread."""
    return _NumpyArrayScope(active)


def is_np_array() -> bool:
    """Whether this thread is inside ``np_array(True)`` (or after ``set_np()``). mxnext has
    no ``mx.np`` arrays, so the flag changes nothing but what this returns."""
    scope = getattr(_NumpyArrayScope._current, "value", None)
    return scope._is_np_array if scope is not None else False


def set_np(shape=True, array=True) -> None:
    """Set the NumPy shape and array flags of this thread together (array needs shape)."""
    if array and not shape:
        raise ValueError("set_np: NumPy shape semantics (shape=True) is required with NumPy "
                         "array semantics (array=True)")
    _NumpyArrayScope._current.value = _NumpyArrayScope(array)
    set_np_shape(shape)


def reset_np() -> None:
    """Turn the NumPy shape and array flags off."""
    set_np(shape=False, array=False)


class np_shape:
    """``with mx.np_shape(active=True):`` runs a block in (or out of) NumPy shape semantics."""

    def __init__(self, active=True):
        self._active = active
        self._prev = None

    def __enter__(self):
        self._prev = set_np_shape(self._active)
        return self

    def __exit__(self, *exc):
        set_np_shape(self._prev)


def use_np_shape(func):
    """Decorator running a function, or every method of a class, in NumPy shape semantics."""
    if inspect.isclass(func):
        for name, member in list(vars(func).items()):
            if inspect.isfunction(member):
                setattr(func, name, use_np_shape(member))
        return func
    if not callable(func):
        raise TypeError(f"use_np_shape can only decorate classes and callable objects, "
                        f"got {type(func).__name__}")

    @functools.wraps(func)
    def in_np_shape(*args, **kwargs):
        with np_shape(True):
            return func(*args, **kwargs)
    return in_np_shape


def use_np_array(func):
    """MXNet's NumPy-array half of ``use_np``: mxnext has no ``mx.np`` arrays, so it returns
    its argument (a class or callable; anything else is a TypeError, as in MXNet)."""
    if not callable(func):
        raise TypeError(f"use_np_array can only decorate classes and callable objects, "
                        f"got {type(func).__name__}")
    return func


def use_np(func):
    """MXNet's ``use_np``: ``use_np_shape(use_np_array(func))``. mxnext has only MXNet's
    legacy arrays (``mx.nd``; no ``mx.np``/``mx.npx``): code that uses ``mx.nd`` runs as
    before, in NumPy shape semantics; code that reaches for ``mx.np`` fails at that line."""
    return use_np_shape(use_np_array(func))


def getenv(name: str):
    """The value of environment variable ``name`` (None if unset)."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set environment variable ``name`` (``None`` removes it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)
