"""Comparisons of arrays (NDArray, numpy, scalars, nested lists) with MXNet's messages."""

from __future__ import annotations

import numpy as np

from ._tolerance import get_atol, get_etol, get_rtol, get_tols


def _np(x) -> np.ndarray:
    """A numpy array for an NDArray (waits for it), numpy array, scalar or nested list."""
    return x.asnumpy() if hasattr(x, "asnumpy") else np.asarray(x)


def _err_msg(arrays, header: str) -> str:
    """numpy.testing's layout (header, then `` ACTUAL:``/`` DESIRED:`` reprs), printed short."""
    with np.printoptions(threshold=4, suppress=True):
        body = "\n".join(f" {label}: {np.asarray(a)!r}" for label, a in zip(("ACTUAL", "DESIRED"),
                                                                              arrays))
    return f"\nItems are not equal:\n{header}\n{body}"


def same(a, b) -> bool:
    """True if ``a`` and ``b`` have the same shape and exactly the same elements."""
    return bool(np.array_equal(_np(a), _np(b)))


def checkShapes(a, b) -> None:
    """Raise AssertionError unless ``a`` and ``b`` have the same shape."""
    if np.shape(a) != np.shape(b):
        raise AssertionError(_err_msg([_np(a), _np(b)], f"a.shape = {np.shape(a)} and "
                                                        f"b.shape = {np.shape(b)} are not equal"))


def almost_equal(a, b, rtol=None, atol=None, equal_nan=False, use_broadcast=True) -> bool:
    """``|a - b| <= atol + rtol * |b|`` everywhere (unset tolerances: float64's defaults).

    With ``use_broadcast=False`` different shapes raise AssertionError (as in MXNet).
    """
    if not use_broadcast:
        checkShapes(a, b)
    return bool(np.allclose(_np(a), _np(b), rtol=get_rtol(rtol), atol=get_atol(atol),
                            equal_nan=equal_nan))


def locationError(a, b, index, names, maxError=False) -> str:
    """``Location of [maximum ]error: <index>, <name0>=<a[index]>, <name1>=<b[index]>``."""
    which = "maximum " if maxError else ""
    return (f"Location of {which}error: {index}, {names[0]}={float(a[index]):.8f}, "
            f"{names[1]}={float(b[index]):.8f}")


def _violations(a, b, rtol, atol, equal_nan):
    """Per element |a-b| / (atol + rtol*|b|) (> 1 where not close; equal infs count as equal;
    NaN where either side is NaN, unless both are and ``equal_nan``) and the mismatch mask."""
    with np.errstate(all="ignore"):
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        absdiff = np.where(a64 == b64, 0.0, np.abs(a64 - b64))
        viol = absdiff / (atol + rtol * np.abs(b64) + 1e-20)
        bad = ~np.isclose(a64, b64, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if equal_nan:
        viol = np.where(np.isnan(a64) & np.isnan(b64), 0.0, viol)
    return viol, bad


def _mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches) -> str:
    """MXNet's failure report: the worst error and where, the share of mismatching elements
    (counted up to ``mismatches[1]``, then "at least"; all when it is <= 0), the worst
    ``mismatches[0]`` locations, and both arrays."""
    viol, bad = _violations(a, b, rtol, atol, equal_nan)
    if a.ndim == 0:
        return _err_msg([a, b], f"Error {float(viol):f} exceeds tolerance rtol={rtol:e}, "
                                f"atol={atol:e}.\n")
    flat = np.flatnonzero(bad)
    order = flat[np.argsort(-np.where(np.isnan(viol.flat[flat]), np.inf, viol.flat[flat]),
                            kind="stable")]  # NaN first, as numpy's argmax finds it
    counted = len(order) if mismatches[1] <= 0 else min(len(order), mismatches[1] + 1)
    at_least = "at least " if 0 < mismatches[1] < counted else ""
    locs = [tuple(int(i) for i in np.unravel_index(k, a.shape)) for k in order]
    worst = locs[0]
    header = (f"Error {float(viol[worst]):f} exceeds tolerance rtol={rtol:e}, atol={atol:e} "
              f"(mismatch {at_least}{100 * counted / a.size:f}%).\n"
              f"{locationError(a, b, worst, names, maxError=True)}")
    listed = [f"{n:3d}: Error {float(viol[loc]):f}  {locationError(a, b, loc, names)}"
              for n, loc in enumerate(locs[:min(counted, mismatches[0])], 1)]
    table = (f"\n\n*** Maximum errors for vector of size {a.size}:  rtol={rtol}, atol={atol}\n\n"
             + "\n".join(listed)) if listed else ""
    return _err_msg([a, b], header) + table


def assert_almost_equal(a, b, rtol=None, atol=None, names=("a", "b"), equal_nan=False,
                        use_broadcast=True, mismatches=(10, 10)):
    """Raise AssertionError unless ``|a - b| <= atol + rtol * |b|`` everywhere.

    ``a`` and ``b`` may be NDArrays, numpy arrays, scalars or lists. Unset tolerances are the
    looser of the two dtypes' defaults (float32: rtol 1e-4, atol 1e-3; integers and bools
    exactly). Shapes broadcast unless ``use_broadcast=False``. ``equal_nan`` makes NaN equal
    NaN. The message is MXNet's: the worst error and its location, named by ``names``, the
    share of mismatching elements (determined up to ``mismatches[1]``) and the worst
    ``mismatches[0]`` locations (which MXNet prints to stdout; here they end the message).
    """
    if not use_broadcast:
        checkShapes(a, b)
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = _np(a), _np(b)
    try:
        a, b = np.broadcast_arrays(a, b)
    except ValueError:
        header = f"{names[0]}.shape = {a.shape} and {names[1]}.shape = {b.shape} do not broadcast"
        raise AssertionError(_err_msg([a, b], header)) from None
    if a.dtype == np.bool_ and b.dtype == np.bool_:
        rtol = atol = 0
    if np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan):
        return
    raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_allclose(a, b, rtol=1e-07, atol=0, equal_nan=True):
    """:func:`assert_almost_equal` with numpy's ``assert_allclose`` defaults."""
    assert_almost_equal(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def assert_almost_equal_with_err(a, b, rtol=None, atol=None, etol=None, names=("a", "b"),
                                 equal_nan=False, mismatches=(10, 10)):
    """Like :func:`assert_almost_equal`, but passes while at most a fraction ``etol`` of the
    elements mismatch (``etol`` 0 or None: none may)."""
    etol = get_etol(etol)
    if etol <= 0:
        assert_almost_equal(a, b, rtol=rtol, atol=atol, names=names, equal_nan=equal_nan,
                            mismatches=mismatches)
        return
    rtol, atol = get_tols(a, b, rtol, atol)
    a, b = np.broadcast_arrays(_np(a), _np(b))
    close = np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)
    if 1 - np.count_nonzero(close) / max(close.size, 1) > etol:
        raise AssertionError(_mismatch_message(a, b, rtol, atol, names, equal_nan, mismatches))


def assert_almost_equal_ignore_nan(a, b, rtol=None, atol=None, names=("a", "b")):
    """:func:`assert_almost_equal` over the elements where neither ``a`` nor ``b`` is NaN."""
    a, b = np.array(_np(a)), np.array(_np(b))
    nan = np.isnan(a) | np.isnan(b)
    a[nan] = 0
    b[nan] = 0
    assert_almost_equal(a, b, rtol, atol, names)


def assert_exception(f, exception_type, *args, **kwargs):
    """Call ``f(*args, **kwargs)``; return the ``exception_type`` it raises, else fail."""
    try:
        f(*args, **kwargs)
    except exception_type as e:
        return e
    raise AssertionError(f"{getattr(f, '__name__', f)!s} did not raise {exception_type.__name__}")


def same_array(array1, array2) -> bool:
    """Whether two NDArrays share memory: a change made through ``array1`` shows in ``array2``
    (``array1`` is restored afterwards)."""
    array1 += 1
    shared = same(array1, array2)
    array1 -= 1
    return shared and same(array1, array2)


def compare_ndarray_tuple(t1, t2, rtol=None, atol=None) -> None:
    """:func:`assert_almost_equal` over two (nested) tuples of arrays; None on either side
    skips the comparison."""
    if t1 is None or t2 is None:
        return
    if isinstance(t1, tuple):
        for s1, s2 in zip(t1, t2):
            compare_ndarray_tuple(s1, s2, rtol, atol)
    else:
        assert_almost_equal(t1, t2, rtol=rtol, atol=atol)


def np_reduce(dat, axis, keepdims, numpy_reduce_func):
    """Reduce ``dat`` with ``numpy_reduce_func`` (``np.sum``, ``np.max``, ...) one axis at a
    time, last axis first; ``axis`` is an int, a sequence of ints or None (all axes)."""
    if isinstance(axis, int):
        axis = [axis]
    else:
        axis = list(axis) if axis is not None else list(range(dat.ndim))
    ret = dat
    for i in sorted(axis, reverse=True):
        ret = numpy_reduce_func(ret, axis=i)
    if keepdims:
        shape = list(dat.shape)
        for i in axis:
            shape[i] = 1
        ret = ret.reshape(shape)
    return ret


def collapse_sum_like(a, shape):
    """Sum numpy array ``a`` over the axes it was broadcast along from ``shape``."""
    shape = tuple(shape)
    assert a.ndim >= len(shape), f"collapse_sum_like: {a.shape} has fewer axes than {shape}"
    if np.prod(shape) == 0 or a.size == 0:
        return np.zeros(shape, dtype=a.dtype)
    lead = a.ndim - len(shape)
    axes = list(range(lead))
    for i, s in enumerate(shape):
        if s != a.shape[lead + i]:
            assert s == 1, f"collapse_sum_like: {shape} does not broadcast to {a.shape}"
            axes.append(lead + i)
    return np.sum(a, axis=tuple(axes)).reshape(shape)
