"""``MXDataIter``: the behaviour of MXNet's C++ iterators as seen from Python.

MXNet builds ``CSVIter``, ``MNISTIter``, ... in C++ and wraps each in ``MXDataIter``: the
constructor reads the first batch (for ``provide_data``/``provide_label``) and ``next``
hands it out first. The subclasses here are Python; they supply ``_before_first``
(rewind) and ``_advance`` (read the next batch into ``_data``/``_label``/``_pad``/
``_index``; False at the end).
"""

from .._runtime.base import MXNetError
from ..ndarray import array
from .._runtime.params import DType, Field, Param
from .batch import DataBatch, DataDesc, DataIter

__all__ = ["MXDataIter"]


class PrefetcherParam(Param):
    """Parameters every MXNet C++ iterator takes from its prefetch stage."""

    prefetch_buffer: int = Field(4, ge=1, description="Maximal number of batches to prefetch.")
    ctx: str = Field("gpu", description="Context data loader optimized for (unused on cpu).")
    dtype: DType | None = Field(None, description="Output data type; None keeps the reader's.")


def parse_params(model, kwargs, iter_name):
    """``kwargs`` (MXNet strings accepted) as ``model``; unknown keys are ignored, as MXNet's
    iterators ignore them."""
    known = {k: v for k, v in kwargs.items() if k in model.model_fields}
    return model.parse(known, op=iter_name)


class MXDataIter(DataIter):
    """Base of the iterators MXNet implements natively (``CSVIter``, ``MNISTIter``)."""

    def __init__(self, data_name="data", label_name="softmax_label", dtype=None):
        super().__init__()
        self._out_dtype = dtype
        self._data = self._label = self._index = None
        self._pad = 0
        self.first_batch = None
        try:
            self.first_batch = self.next()
        except StopIteration:
            raise MXNetError(f"{type(self).__name__}: the data holds no complete batch") from None
        data, label = self.first_batch.data[0], self.first_batch.label[0]
        self.provide_data = [DataDesc(data_name, data.shape, data.dtype)]
        self.provide_label = [DataDesc(label_name, label.shape, label.dtype)]
        self.batch_size = data.shape[0]

    def _before_first(self):
        raise NotImplementedError

    def _advance(self):
        raise NotImplementedError

    def reset(self):
        self.first_batch = None
        self._before_first()

    def next(self):
        if self.first_batch is not None:
            batch, self.first_batch = self.first_batch, None
            return batch
        if not self._advance():
            raise StopIteration
        return DataBatch(data=[self.getdata()], label=[self.getlabel()], pad=self.getpad(),
                         index=self.getindex())

    def iter_next(self):
        if self.first_batch is not None:
            return True
        return self._advance()

    def _out(self, values):
        if self._out_dtype is not None:
            values = values.astype(self._out_dtype)
        return array(values, dtype=values.dtype)

    def getdata(self):
        return self._out(self._data)

    def getlabel(self):
        label = self._label
        # MXNet's C API flattens an (n, 1, ...) label to (n,)
        if label.ndim > 1 and label.shape[1] == 1:
            label = label.reshape(-1)[:label.shape[0]]
        return self._out(label)

    def getindex(self):
        return None if self._index is None else self._index.copy()

    def getpad(self):
        return self._pad

