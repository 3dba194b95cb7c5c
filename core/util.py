"""MXNet's ``mxnet.util`` helpers that ported code imports."""

from __future__ import annotations

import os

__all__ = ["makedirs", "get_gpu_count", "is_np_array", "is_np_shape", "getenv", "setenv"]


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


def getenv(name: str):
    """The value of environment variable ``name`` (None if unset)."""
    return os.environ.get(name)


def setenv(name: str, value) -> None:
    """Set environment variable ``name`` (``None`` removes it)."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)
