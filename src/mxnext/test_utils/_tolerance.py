"""Tolerances by dtype (MXNet's defaults) and how a comparison of two arrays picks them."""

from __future__ import annotations

import numbers

import numpy as np

# dtypes compared exactly (tolerance 0); MXNet's list plus int16/uint16
_EXACT = tuple(np.dtype(t) for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                      np.uint32, np.int64, np.uint64))


def default_dtype():
    """The dtype test inputs are made in: float32."""
    return np.float32


def default_rtols() -> dict:
    """Relative tolerance per dtype: float16 1e-2, float32 1e-4, float64 1e-5, exact types 0."""
    return {np.dtype(np.float16): 1e-2, np.dtype(np.float32): 1e-4, np.dtype(np.float64): 1e-5,
            **dict.fromkeys(_EXACT, 0)}


def default_atols() -> dict:
    """Absolute tolerance per dtype: float16 1e-1, float32 1e-3, float64 1e-20, exact types 0."""
    return {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.float64): 1e-20,
            **dict.fromkeys(_EXACT, 0)}


def default_numeric_eps() -> dict:
    """Finite-difference step per dtype: powers of two, so adding one drops no bits."""
    return {np.dtype(np.float16): 2.0 ** -6, np.dtype(np.float32): 2.0 ** -9,
            np.dtype(np.float64): 2.0 ** -14}


def effective_dtype(dat) -> np.dtype:
    """The dtype whose tolerance ``dat`` is judged by: its own.

    (MXNet narrows float32 to float16 for results of TF32 GPU kernels; mxnext has none.)
    """
    dtype = getattr(dat, "dtype", None)
    return np.dtype(np.asarray(dat).dtype if dtype is None else dtype)


def get_tolerance(dat, tol, default_tol: dict):
    """``tol`` if it is a number; else the entry for ``dat``'s dtype in ``tol`` (a dict or None)
    or, failing that, in ``default_tol`` (float64's entry for dtypes it does not list)."""
    if isinstance(tol, numbers.Number):
        return tol
    dtype = effective_dtype(dat)
    if tol and dtype in tol:
        return tol[dtype]
    return default_tol.get(dtype, default_tol[np.dtype(np.float64)])


def get_tols(x, y, rtol, atol):
    """(rtol, atol) for comparing ``x`` with ``y``: unset ones are the looser of the two dtypes'
    defaults (Python numbers count as numpy scalars: float64, int64)."""
    x = np.array(x) if isinstance(x, numbers.Number) else x
    y = np.array(y) if isinstance(y, numbers.Number) else y
    return (max(get_tolerance(x, rtol, default_rtols()), get_tolerance(y, rtol, default_rtols())),
            max(get_tolerance(x, atol, default_atols()), get_tolerance(y, atol, default_atols())))


def get_rtol(rtol=None, dtype=np.dtype(np.float64)):
    """``rtol``, or the default relative tolerance of ``dtype`` (float64) when None."""
    return default_rtols()[np.dtype(dtype)] if rtol is None else rtol


def get_atol(atol=None, dtype=np.dtype(np.float64)):
    """``atol``, or the default absolute tolerance of ``dtype`` (float64) when None."""
    return default_atols()[np.dtype(dtype)] if atol is None else atol


def get_etol(etol=None):
    """``etol`` (the tolerated fraction of mismatching elements), 0 when None."""
    return 0 if etol is None else etol
