"""``CSVIter``: batches of rows of CSV files (MXNet's C++ ``CSVIter``, in Python)."""

import os

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.params import Field, Param
from .batch_loader import BatchLoader, BatchParam
from .native import MXDataIter, PrefetcherParam, parse_params

__all__ = ["CSVIter"]

_DTYPES = {"float32": np.float32, "int32": np.int32, "int64": np.int64}


class CSVIterParam(Param):
    data_csv: str = Field(..., description="The input CSV file or a directory path.")
    data_shape: tuple[int, ...] = Field(..., description="The shape of one example.")
    label_csv: str = Field("NULL", description="The input CSV file or a directory path; "
                                               "NULL: every label is 0.")
    label_shape: tuple[int, ...] = Field((1,), description="The shape of one label.")


def _files(path):
    if os.path.isdir(path):
        return [os.path.join(path, f) for f in sorted(os.listdir(path))
                if os.path.isfile(os.path.join(path, f))]
    if not os.path.exists(path):
        raise MXNetError(f"CSVIter: no such file or directory: {path!r}")
    return [path]


def _read_rows(path, shape, dtype, arg):
    """Every row of the CSV file(s) at ``path``, each reshaped to ``shape``."""
    size = int(np.prod(shape))
    rows = []
    for name in _files(path):
        with open(name, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                fields = line.strip().rstrip(",")
                if not fields:
                    continue
                cells = fields.split(",")
                if len(cells) != size:
                    raise MXNetError(
                        f"CSVIter: the row length of {name}:{lineno} is {len(cells)}, but "
                        f"{arg}={tuple(shape)} holds {size} values")
                try:
                    rows.append(np.array(cells, dtype=dtype))
                except ValueError as exc:
                    raise MXNetError(f"CSVIter: {name}:{lineno} holds a value that is not "
                                     f"{np.dtype(dtype).name}: {exc}") from None
    if not rows:
        return np.zeros((0,) + tuple(shape), dtype)
    return np.stack(rows).reshape((len(rows),) + tuple(shape))


class CSVIter(MXDataIter):
    """Batches of the rows of ``data_csv`` reshaped to ``data_shape``, with labels from
    the rows of ``label_csv`` (``label_shape``) or 0.

    ``dtype`` (``'float32'``, ``'int32'`` or ``'int64'``) is how values are parsed and
    returned. ``round_batch`` (default True) completes the last batch from the start of
    the data and the next epoch then starts behind those rows (see ``BatchLoader``).
    Keyword arguments only; unknown ones are ignored, as in MXNet.
    """

    def __init__(self, **kwargs):
        param = parse_params(CSVIterParam, kwargs, "CSVIter")
        batch = parse_params(BatchParam, kwargs, "CSVIter")
        dtype_name = kwargs.get("dtype", "float32")
        if dtype_name not in _DTYPES:
            raise MXNetError(f"CSVIter: dtype must be one of {sorted(_DTYPES)}, got {dtype_name!r}")
        dtype = _DTYPES[dtype_name]
        data = _read_rows(param.data_csv, param.data_shape, dtype, "data_shape")
        if param.label_csv == "NULL":
            label = np.zeros((data.shape[0], 1), dtype)
        else:
            label = _read_rows(param.label_csv, param.label_shape, dtype, "label_shape")
            if label.shape[0] < data.shape[0]:
                raise MXNetError(f"CSVIter: label_csv has {label.shape[0]} rows, fewer than the "
                                 f"{data.shape[0]} rows of data_csv")
            label = label[:data.shape[0]]
        self._loader = BatchLoader([data, label], batch, "CSVIter")
        parse_params(PrefetcherParam, kwargs, "CSVIter")
        super().__init__(kwargs.get("data_name", "data"), kwargs.get("label_name", "softmax_label"))

    def _before_first(self):
        self._loader.before_first()

    def _advance(self):
        if not self._loader.next():
            return False
        self._data, self._label = self._loader.buffers
        self._pad, self._index = self._loader.pad, self._loader.index
        return True
