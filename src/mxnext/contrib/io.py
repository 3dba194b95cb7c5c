"""``mx.contrib.io.DataLoaderIter``: a Gluon ``DataLoader`` seen as an ``mx.io.DataIter``,
so Module code (and scripts written for iterators) can read it."""

from __future__ import annotations

from .. import ndarray as nd
from ..io import DataDesc, DataIter

__all__ = ["DataLoaderIter"]


class DataLoaderIter(DataIter):
    """Batches of ``loader`` (each ``(data, label)``) as ``DataBatch``es cast to ``dtype``;
    a short last batch is padded to the first batch's size and reports the pad. The shapes
    in ``provide_data``/``provide_label`` are those of the first batch."""

    def __init__(self, loader, data_name="data", label_name="softmax_label",
                 dtype="float32"):
        first = next(iter(loader), None)
        if first is None:
            raise ValueError("DataLoaderIter: loader: expected at least one batch, got an "
                             "empty DataLoader")
        data, label = first
        super().__init__(data.shape[0])
        self._loader = loader
        self.dtype = dtype
        self.provide_data = [DataDesc(data_name, data.shape, dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, dtype)]
        self._current = None
        self.reset()

    def reset(self):
        self._iter = iter(self._loader)

    def iter_next(self):
        self._current = next(self._iter, None)
        return self._current is not None

    def _padded(self, array):
        array = array.astype(self.dtype)
        if array.shape[0] == self.batch_size:
            return [array]
        out = nd.zeros((self.batch_size,) + tuple(array.shape[1:]), dtype=self.dtype)
        out[:array.shape[0]] = array
        return [out]

    def getdata(self):
        return self._padded(self._current[0])

    def getlabel(self):
        return self._padded(self._current[1])

    def getpad(self):
        return self.batch_size - self._current[0].shape[0]

    def getindex(self):
        return None
