"""Checks of what ``mx.nd.zeros`` / ``ones`` / ``full`` / ``empty`` / ``arange`` are asked
to create, before numpy or the allocator sees it: the error names the function and the
shape (``ParamError``: an ``MXNetError`` and a ``ValueError``, as numpy's was)."""

from __future__ import annotations

import math
import operator

import numpy as np

from .._runtime.base import MXNetError, ParamError

__all__ = ["creation_shape", "arange_length", "allocation_failed"]

MAX_BYTES = np.iinfo(np.intp).max
"""The most bytes one array can address."""


def creation_shape(what, shape, dtype) -> tuple:
    """``shape`` (an int or a sequence of ints) as a tuple of dimensions >= 0 whose array
    of ``dtype`` fits in ``MAX_BYTES``."""
    dims = (shape,) if isinstance(shape, (int, np.integer)) else shape
    try:
        dims = tuple(operator.index(d) for d in dims)
    except TypeError:
        raise ParamError(f"{what}: shape must be an int or a tuple of ints, got "
                         f"{shape!r}") from None
    negative = [d for d in dims if d < 0]
    if negative:
        raise ParamError(f"{what}: shape {dims} has dimension {negative[0]}; a new array's "
                         f"dimensions must be known and >= 0")
    dtype = np.dtype(dtype)
    nbytes = math.prod(dims) * dtype.itemsize
    if nbytes > MAX_BYTES:
        raise ParamError(f"{what}: shape {dims} of {dtype.name} would take {nbytes} bytes, "
                         f"more than the {MAX_BYTES} one array can address")
    return dims


def allocation_failed(what, shape, dtype, exc) -> MXNetError:
    """The error of ``what`` failing to allocate (``exc``) its array of ``shape``."""
    dtype = np.dtype(dtype)
    return MXNetError(f"{what}: cannot allocate shape {tuple(shape)} of {dtype.name} "
                      f"({math.prod(shape) * dtype.itemsize} bytes): {exc}")


def arange_length(start, stop, step, repeat, dtype) -> int:
    """How many values ``arange`` makes (``stop`` None: from 0 to ``start``)."""
    lo, hi = (0, start) if stop is None else (start, stop)
    if not all(math.isfinite(v) for v in (lo, hi, step)):
        raise ParamError(f"arange: start, stop and step must be finite, got start {start}, "
                         f"stop {stop}, step {step}")
    if step == 0:
        raise ParamError(f"arange: step must not be 0 (start {start}, stop {stop})")
    if int(repeat) < 1:
        raise ParamError(f"arange: repeat must be >= 1, got {repeat}")
    n = max(0, math.ceil((hi - lo) / step)) * int(repeat)
    creation_shape("arange", (n,), dtype)
    return n
