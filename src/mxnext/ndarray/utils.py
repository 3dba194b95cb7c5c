"""``mx.nd.save`` / ``load`` / ``load_frombuffer`` on NDArrays (MXNet's ``ndarray/utils.py``),
over the file format of ``serialization``, which knows only numpy arrays."""

from __future__ import annotations

from .._atomic_write import write_atomic
from .._runtime.base import ParamError
from ._array import NDArray
from .._runtime.context import Context
from ._sparse_array import make_sparse
from .ndarray import from_numpy
from .sparse_storage import CSRStorage, RowSparseStorage
from .serialization import _encode, _items, load_arrays, loads

__all__ = ["save", "load", "load_frombuffer"]


def save(fname, data) -> None:
    """``mx.nd.save``: an NDArray, or a list or dict (str keys) of NDArrays, to ``fname``."""
    names, values = _items(data, "save", NDArray)
    contexts = [(v.context.device_typeid or 1, v.context.device_id) for v in values]
    payload = _encode(names, [v._host() if v.stype != "default" else v.asnumpy()
                              for v in values], contexts, "save")
    write_atomic(fname, payload)


def _to_ndarrays(loaded):
    def conv(a):  # ``a`` is a fresh private copy: the NDArray may own its memory
        if isinstance(a, (CSRStorage, RowSparseStorage)):
            return make_sparse(a, Context("cpu", 0))
        return None if a is None else from_numpy(a, zero_copy=True)

    if isinstance(loaded, dict):
        return {k: conv(v) for k, v in loaded.items()}
    return [conv(v) for v in loaded]


def load(fname):
    """``mx.nd.load``: a list of NDArrays, or a dict if the file has names; arrays land on cpu(0)."""
    return _to_ndarrays(load_arrays(fname, dense=False))


def load_frombuffer(buf, source: str = "<buffer>"):
    """``mx.nd.load_frombuffer``: as :func:`load`, from the file's bytes (``source`` names
    them in errors)."""
    if not isinstance(buf, (bytes, bytearray, memoryview)):
        raise ParamError(f"load_frombuffer: argument 'buf' expected bytes, got {type(buf).__name__}")
    return _to_ndarrays(loads(buf, source, dense=False))
