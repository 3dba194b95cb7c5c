"""Helpers of ``NDArrayIter``, under MXNet's names (``mx.io`` exports some of them)."""

from collections import OrderedDict

import numpy as np

from ..ndarray import NDArray, array
from ..ndarray import sparse as _sparse
from ..ndarray.sparse import CSRNDArray, _is_scipy_csr

__all__ = ["_init_data", "_has_instance", "_getdata_by_idx", "_slice_along_batch_axis"]


def _init_data(data, allow_empty, default_name):
    """``data`` (an array, a list of arrays or a dict of them) as a name-sorted list of
    ``(name, NDArray)``. A single array is named ``default_name``; the arrays of a longer
    list ``_0_<default_name>``, ``_1_<default_name>``, ...; numpy input becomes float32
    NDArrays unless it already is an NDArray (as ``mx.nd.array`` does); a scipy CSR matrix
    becomes a ``CSRNDArray``."""
    if data is None:
        if not allow_empty:
            raise ValueError(f"NDArrayIter: {default_name} must be given, got None")
        data = []
    if isinstance(data, (np.ndarray, NDArray)):
        data = [data]
    if isinstance(data, (list, tuple)):
        if not data and not allow_empty:
            raise ValueError(f"NDArrayIter: {default_name} must hold at least one array, got []")
        if len(data) == 1:
            data = OrderedDict([(default_name, data[0])])
        else:
            data = OrderedDict((f"_{i}_{default_name}", d) for i, d in enumerate(data))
    if not isinstance(data, dict):
        raise TypeError(f"NDArrayIter: {default_name} must be an NDArray, a numpy.ndarray, "
                        f"a list of them or a dict with them as values, got {type(data).__name__}")
    out = {}
    for name, value in data.items():
        if _is_scipy_csr(value):
            value = _sparse.array(value)
        elif not isinstance(value, NDArray):
            try:
                value = array(value)
            except Exception as exc:
                raise TypeError(f"NDArrayIter: invalid type {type(value).__name__} for {name!r}; "
                                "expected an NDArray or a numpy.ndarray") from exc
        out[name] = value
    return sorted(out.items())


def _has_instance(data, dtype):
    """Whether any array of a ``_init_data`` list is a ``dtype``."""
    return any(isinstance(arr, dtype) for _, arr in data)


def _getdata_by_idx(data, idx):
    """Each array of a ``_init_data`` list with its first axis permuted by ``idx`` (a
    ``CSRNDArray`` stays one)."""
    return [(name, _sparse.array(arr.asscipy()[idx], arr.context) if isinstance(arr, CSRNDArray)
             else array(arr.asnumpy()[idx], arr.context)) for name, arr in data]


def _slice_along_batch_axis(data, s, batch_axis):
    """``data[s]`` along ``batch_axis`` (a new array)."""
    return data.slice_axis(axis=batch_axis, begin=s.start, end=s.stop)
