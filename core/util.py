"""MXNet's ``mxnet.util`` helpers that ported code imports."""

from __future__ import annotations

import os

__all__ = ["makedirs", "get_gpu_count", "is_np_array", "is_np_shape", "use_np", "use_np_array",
           "use_np_shape", "getenv", "setenv"]


def makedirs(d: str) -> None:
    """Create ``d`` and its parents; no error if it exists."""
    os.makedirs(os.path.expanduser(d), exist_ok=True)


def get_gpu_count() -> int:
    from .context import num_gpus
    return num_gpus()


def is_np_array() -> bool:
    """mxnext implements MXNet's legacy ``mx.nd`` semantics only (no ``mx.np`` mode)."""
    return False


def is_np_shape() -> bool:
    """Legacy shape semantics: no 0-d or zero-size-as-unknown switch (always False)."""
    return False


def _legacy_mode_decorator(name):
    def decorate(func):
        if not callable(func):  # classes are callable too
            raise TypeError(f"{name} can only decorate classes and callable objects, "
                            f"got {type(func).__name__}")
        return func
    decorate.__name__ = decorate.__qualname__ = name
    return decorate


use_np = _legacy_mode_decorator("use_np")
use_np.__doc__ = """Decorator that, in MXNet, runs a function or class in NumPy mode.

mxnext has only MXNet's legacy mode (``mx.nd``; there is no ``mx.np``/``mx.npx``), so the
decorated function or class is returned unchanged and runs in legacy mode:
``is_np_array()`` and ``is_np_shape()`` stay False inside it. Code that only uses ``mx.nd``
runs as before; code that reaches for ``mx.np`` fails at that line with AttributeError.
Anything that is neither a class nor callable raises TypeError, as in MXNet.
"""
use_np_array = _legacy_mode_decorator("use_np_array")
use_np_array.__doc__ = "Like :func:`use_np` (MXNet's NumPy-array half of it): returns its argument."
use_np_shape = _legacy_mode_decorator("use_np_shape")
use_np_shape.__doc__ = "Like :func:`use_np` (MXNet's NumPy-shape half of it): returns its argument."


def getenv(name: str):
    """The value of environment variable ``name`` (None if unset)."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set environment variable ``name`` (``None`` removes it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)
