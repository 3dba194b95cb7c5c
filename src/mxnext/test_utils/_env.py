"""What a test runs under: environment variables, stderr, retries, CI probes."""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys

from .._runtime.base import ParamError


def _set_env(values: dict) -> None:
    for name, value in values.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@contextlib.contextmanager
def environment(*args):
    """Set environment variables for the ``with`` block (or decorated function), then restore
    them, even on error. ``environment(name, value)`` or ``environment({name: value, ...})``;
    a value of None unsets the variable.

    mxnext reads its variables when it creates what they configure, so a variable set here
    governs only what is created inside the block: ``MXNEXT_ENGINE_TYPE``/``MXNET_ENGINE_TYPE``
    and the worker-thread counts when an engine is created (first use, or
    ``engine.set_engine``/``use_engine`` by name), ``MXNEXT_MEM_POOL_TYPE`` (and its MXNet
    spelling) when a device's memory pool is first made, the plugin switches at ``import``;
    the thread policy's variables (``MXNEXT_KERNEL_THREADS``, ``OMP_NUM_THREADS``, ...) at
    once for kernel threads, and for BLAS/OpenMP limits when the engine is first created.
    Variables that only MXNet's C library read (``MXNET_STORAGE_FALLBACK_LOG_VERBOSE``, ...)
    are set and restored but change nothing here.
    On the way out pending engine work is finished first (``mx.nd.waitall()``), as in MXNet.
    """
    if len(args) == 1 and isinstance(args[0], dict):
        values = dict(args[0])
    elif len(args) == 2:
        values = {args[0]: args[1]}
    else:
        raise ParamError(f"environment: expected one dict or two arguments (name, value), "
                         f"got {len(args)} arguments")
    bad = {k: v for k, v in values.items() if not (v is None or isinstance(v, str))}
    if bad:
        raise ParamError(f"environment: values expected str or None, got {bad}")
    saved = {name: os.environ.get(name) for name in values}
    _set_env(values)
    try:
        yield
    finally:
        from .. import ndarray as nd
        try:
            nd.waitall()
        finally:
            _set_env(saved)


class EnvManager:
    """``with EnvManager(name, value):`` sets one environment variable and restores its previous
    state (unset if it was unset) on exit: MXNet 1.5-1.7's form of :func:`environment`."""

    def __init__(self, key: str, val: str):
        self._key, self._next_val, self._prev_val = key, val, None

    def __enter__(self):
        self._prev_val = os.environ.get(self._key)
        os.environ[self._key] = self._next_val
        return self

    def __exit__(self, *exc):
        _set_env({self._key: self._prev_val})


@contextlib.contextmanager
def discard_stderr():
    """Send everything written to the process's stderr (file descriptor 2: Python and native
    code alike) to the null device for the block. Where stderr has no file descriptor (some
    capturing test runners), the block runs unchanged."""
    try:
        fd = sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):
        fd = None
    if fd is None:
        yield
        return
    sys.stderr.flush()
    saved = os.dup(fd)
    try:
        with open(os.devnull, "w") as null:
            os.dup2(null.fileno(), fd)
        yield
    finally:
        sys.stderr.flush()
        os.dup2(saved, fd)
        os.close(saved)


def retry(n: int):
    """Decorator for stochastic tests: run up to ``n`` times until one run raises no
    AssertionError; the last run's AssertionError propagates. Pending engine work is finished
    between runs."""
    if n <= 0:
        raise ParamError(f"retry: argument 'n' expected > 0, got {n}")

    def decorate(f):
        @functools.wraps(f)
        def wrapper(*args, **kwargs):
            from .. import ndarray as nd
            for attempt in range(n):
                try:
                    return f(*args, **kwargs)
                except AssertionError:
                    if attempt == n - 1:
                        raise
                    nd.waitall()
        return wrapper
    return decorate


def is_cd_run() -> bool:
    """Whether this is a continuous-delivery run (``CD_JOB=1``)."""
    return os.environ.get("CD_JOB", "0") == "1"


def is_aarch64_run() -> bool:
    """Whether the machine is aarch64."""
    return platform.machine() == "aarch64"
