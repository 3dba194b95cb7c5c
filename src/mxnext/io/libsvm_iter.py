"""``LibSVMIter``: batches of the rows of LibSVM files as CSR arrays (MXNet's C++
``LibSVMIter``, in Python). Column indices are zero-based, as MXNet expects."""

from __future__ import annotations

import os

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.context import current_context
from .._runtime.params import Field, Param
from ..ndarray import array
from ..ndarray._sparse_array import make_sparse
from ..ndarray.sparse_storage import CSRStorage
from .batch_loader import BatchLoader, BatchParam
from .native import MXDataIter, PrefetcherParam, parse_params

__all__ = ["LibSVMIter"]


class LibSVMIterParam(Param):
    data_libsvm: str = Field(..., description="The input zero-base indexed LibSVM data file "
                                              "or a directory path.")
    data_shape: tuple[int, ...] = Field(..., description="The shape of one example.")
    label_libsvm: str = Field("NULL", description="The input LibSVM label file or a directory "
                                                  "path; NULL: labels from data_libsvm.")
    label_shape: tuple[int, ...] = Field((1,), description="The shape of one label.")
    num_parts: int = Field(1, gt=0, description="partition the data into multiple parts")
    part_index: int = Field(0, ge=0, description="the index of the part will read")


def _read(path):
    """The bytes of ``path``, or of every file in the directory ``path`` in name order."""
    if os.path.isdir(path):
        names = sorted(os.path.join(path, f) for f in os.listdir(path))
        return b"".join(open(n, "rb").read() for n in names if os.path.isfile(n))
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError as exc:
        raise MXNetError(f"LibSVMIter: cannot read {path!r}: {exc}") from None


def _line_start_after(text, offset):
    """Where dmlc's line splitter starts a part whose nominal start is ``offset``: past the
    first line end at or after it and any line ends that follow."""
    if offset == 0 or offset >= len(text):
        return min(offset, len(text))
    pos = offset
    while pos < len(text) and text[pos] not in b"\r\n":
        pos += 1
    while pos < len(text) and text[pos] in b"\r\n":
        pos += 1
    return pos


def _part(text, num_parts, part_index):
    """The lines of ``part_index`` when dmlc splits ``text`` in ``num_parts`` byte ranges."""
    step = (len(text) + num_parts - 1) // num_parts
    begin = _line_start_after(text, min(step * part_index, len(text)))
    end = _line_start_after(text, min(step * (part_index + 1), len(text)))
    return text[begin:end] if begin < end else b""


def _parse(text, width, path):
    """(labels, CSR rows as (values, columns, row starts)) of LibSVM ``text``."""
    labels, values, columns, starts = [], [], [], [0]
    for lineno, line in enumerate(text.decode("utf-8").splitlines(), 1):
        fields = line.split("#", 1)[0].split()
        if not fields:
            continue
        labels.append(float(fields[0].split(":", 1)[0]))
        for field in fields[1:]:
            key, _, value = field.partition(":")
            if key == "qid":
                continue
            column = int(key)
            if not 0 <= column < width:
                raise MXNetError(f"LibSVMIter: {path} line {lineno}: column index {column} "
                                 f"out of range for shape ({width},)")
            columns.append(column)
            values.append(float(value))
        starts.append(len(values))
    return (np.asarray(labels, np.float32), np.asarray(values, np.float32),
            np.asarray(columns, np.int64), np.asarray(starts, np.int64))


def _rows_csr(rows, parsed, width):
    """The CSR batch of rows ``rows`` of ``parsed``."""
    _, values, columns, starts = parsed
    lengths = starts[rows + 1] - starts[rows]
    picks = np.concatenate([np.arange(starts[r], starts[r + 1]) for r in rows]) \
        if len(rows) else np.zeros(0, np.int64)
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    return make_sparse(CSRStorage(values[picks], columns[picks].astype(np.int64), indptr,
                                  (len(rows), width)), current_context())


class LibSVMIter(MXDataIter):
    """Batches of ``data_libsvm``'s rows as ``(batch_size, data_shape[0])`` CSRNDArrays.
    Labels: the first number of each data row, a dense ``(batch_size,)`` array; or, with
    ``label_libsvm`` and ``label_shape`` (k,), k > 1, that file's rows as CSR. Only
    ``round_batch=True`` is supported (as in MXNet): the last batch is completed from the
    start and the next epoch continues behind those rows. ``num_parts``/``part_index``
    read one byte range of the file (cut at line ends, as dmlc does: parts need not be
    even). Keyword arguments only; unknown ones are ignored, as in MXNet."""

    def __init__(self, **kwargs):
        param = parse_params(LibSVMIterParam, kwargs, "LibSVMIter")
        batch = parse_params(BatchParam, kwargs, "LibSVMIter")
        parse_params(PrefetcherParam, kwargs, "LibSVMIter")
        self._check(param, batch)
        self._width = param.data_shape[0]
        self._rows = _parse(_part(_read(param.data_libsvm), param.num_parts, param.part_index),
                            self._width, param.data_libsvm)
        num = len(self._rows[0])
        self._label_rows = None
        if param.label_libsvm != "NULL":
            self._label_width = int(np.prod(param.label_shape))
            self._label_rows = _parse(_part(_read(param.label_libsvm), param.num_parts,
                                            param.part_index),
                                      self._label_width, param.label_libsvm)
            if len(self._label_rows[0]) < num:
                raise MXNetError(f"LibSVMIter: label_libsvm has {len(self._label_rows[0])} "
                                 f"rows, fewer than the {num} rows of data_libsvm")
        self._loader = BatchLoader([np.arange(num, dtype=np.int64)], batch, "LibSVMIter")
        if num == 0:
            raise MXNetError(f"LibSVMIter: {param.data_libsvm!r} part {param.part_index} of "
                             f"{param.num_parts} holds no rows")
        super().__init__(kwargs.get("data_name", "data"), kwargs.get("label_name", "softmax_label"))

    @staticmethod
    def _check(param, batch):
        if len(param.data_shape) != 1:
            raise MXNetError(f"LibSVMIter: data_shape: expected 1 dimension, got {param.data_shape}")
        if param.part_index >= param.num_parts:
            raise MXNetError(f"LibSVMIter: part_index: expected < num_parts={param.num_parts}, "
                             f"got {param.part_index}")
        wide = int(np.prod(param.label_shape)) > 1
        if (param.label_libsvm != "NULL") != wide:
            raise MXNetError("LibSVMIter: label_shape must be (1,) without label_libsvm and "
                             f"larger with it, got {param.label_shape} with label_libsvm="
                             f"{param.label_libsvm!r}")
        if not batch.round_batch:
            raise MXNetError("LibSVMIter: round_batch=False is not supported for sparse data "
                             "(as in MXNet)")

    def _before_first(self):
        self._loader.before_first()

    def _advance(self):
        if not self._loader.next():
            return False
        self._data = self._loader.buffers[0].copy()
        self._label = self._data
        self._pad, self._index = self._loader.pad, self._loader.index
        return True

    def getdata(self):
        return _rows_csr(self._data, self._rows, self._width)

    def getlabel(self):
        if self._label_rows is None:
            return array(self._rows[0][self._label], dtype=np.float32)
        return _rows_csr(self._label, self._label_rows, self._label_width)
