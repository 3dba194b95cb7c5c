"""``NDArrayIter``: batches over in-memory NDArrays or numpy arrays."""

import numbers

import numpy as np

from .._runtime.base import MXNetError
from ..ndarray import concat, tile
from .batch import DataBatch, DataDesc, DataIter
from ..ndarray.sparse import CSRNDArray
from .utils import _getdata_by_idx, _has_instance, _init_data, _slice_along_batch_axis

__all__ = ["NDArrayIter"]

_LAST_BATCH_MODES = ("pad", "discard", "roll_over")


class NDArrayIter(DataIter):
    """Iterates over ``data`` (and ``label``) in batches of ``batch_size`` along the ``N``
    axis of ``layout``.

    ``data``/``label``: an array, a list of arrays or a dict ``{name: array}``; the arrays
    come out sorted by name. ``shuffle`` permutes the examples (data and label alike, with
    ``numpy.random``) at construction and at every ``reset``.

    ``last_batch_handle`` says what happens to an incomplete last batch:

    - ``'pad'``: filled up with examples from the start of the data (``batch.pad`` says
      how many), repeating the whole data if it is shorter than the gap;
    - ``'discard'``: dropped;
    - ``'roll_over'``: kept back and, after ``reset``, put in front of the first batch of
      the next epoch (that batch's ``pad`` counts the examples taken from the new epoch).
    """

    def __init__(self, data, label=None, batch_size=1, shuffle=False, last_batch_handle="pad",
                 data_name="data", label_name="softmax_label", layout="NCHW"):
        super().__init__(batch_size)
        if isinstance(batch_size, bool) or not isinstance(batch_size, numbers.Integral) \
                or batch_size <= 0:
            raise ValueError(f"NDArrayIter: batch_size must be a positive integer, got "
                             f"{batch_size!r}")
        if last_batch_handle not in _LAST_BATCH_MODES:
            raise ValueError(f"NDArrayIter: last_batch_handle must be one of {_LAST_BATCH_MODES}, "
                             f"got {last_batch_handle!r}")
        self.data = _init_data(data, allow_empty=False, default_name=data_name)
        self.label = _init_data(label, allow_empty=True, default_name=label_name)
        if (_has_instance(self.data, CSRNDArray) or _has_instance(self.label, CSRNDArray)) \
                and last_batch_handle != "discard":
            raise NotImplementedError("NDArrayIter: CSRNDArray data or label needs "
                                      f"last_batch_handle='discard', got {last_batch_handle!r}")
        # the first data array's examples are the iterator's (MXNet's rule): longer arrays
        # have their extra rows left unread, a shorter one could not fill its batches
        counts = {name: arr.shape[0] for name, arr in self.data + self.label}
        if min(counts.values()) < self.data[0][1].shape[0]:
            raise ValueError(f"NDArrayIter: every data and label array needs at least the "
                             f"{self.data[0][1].shape[0]} examples (first axis) of "
                             f"{self.data[0][0]!r}, got {counts}")
        self.idx = np.arange(self.data[0][1].shape[0])
        self.shuffle = shuffle
        self.last_batch_handle = last_batch_handle
        self.batch_size = batch_size
        self.cursor = -batch_size
        self.num_data = self.idx.shape[0]
        self.layout = layout
        self._cache_data = None
        self._cache_label = None
        self.reset()
        self.data_list = [arr for _, arr in self.data] + [arr for _, arr in self.label]
        self.num_source = len(self.data_list)

    def _descs(self, arrays):
        axis = self.layout.find("N")
        return [DataDesc(name, tuple(arr.shape[:axis]) + (self.batch_size,) + tuple(arr.shape[axis + 1:]),
                         arr.dtype, layout=self.layout)
                for name, arr in arrays]

    @property
    def provide_data(self):
        """``DataDesc`` of each data array for one batch."""
        return self._descs(self.data)

    @property
    def provide_label(self):
        """``DataDesc`` of each label array for one batch."""
        return self._descs(self.label)

    def _shuffle_data(self):
        # MXNet permutes the already permuted arrays by a reshuffled idx: after the second
        # shuffle idx no longer maps batch positions to the original examples
        np.random.shuffle(self.idx)
        self.data = _getdata_by_idx(self.data, self.idx)
        self.label = _getdata_by_idx(self.label, self.idx)

    def hard_reset(self):
        """Back to the start, forgetting any rolled-over examples."""
        if self.shuffle:
            self._shuffle_data()
        self.cursor = -self.batch_size
        self._cache_data = None
        self._cache_label = None

    def reset(self):
        """Back to the start (with ``'roll_over'``, after the kept-back examples)."""
        if self.shuffle:
            self._shuffle_data()
        if (self.last_batch_handle == "roll_over"
                and self.num_data - self.batch_size < self.cursor < self.num_data):
            # the cursor stopped on an incomplete batch: start early by what it held
            self.cursor = self.cursor - self.num_data - self.batch_size
        else:
            self.cursor = -self.batch_size

    def iter_next(self):
        self.cursor += self.batch_size
        return self.cursor < self.num_data

    def next(self):
        if not self.iter_next():
            raise StopIteration
        data = self.getdata()
        label = self.getlabel()
        if data[0].shape[self.layout.find("N")] != self.batch_size:
            # an incomplete last batch ('discard', 'roll_over'): kept for a roll-over
            self._cache_data = data
            self._cache_label = label
            raise StopIteration
        return DataBatch(data=data, label=label, pad=self.getpad(), index=None)

    def _getdata(self, source, start=None, end=None):
        start = 0 if start is None else start
        if end is None:
            end = source[0][1].shape[0] if source else 0
        axis = self.layout.find("N")
        return [_slice_along_batch_axis(arr, slice(start, end), axis) for _, arr in source]

    def _concat(self, first, second):
        if not first or not second:
            return first if first else second
        axis = self.layout.find("N")
        return [concat(a, b, dim=axis) for a, b in zip(first, second)]

    @staticmethod
    def _tile(arrays, repeats):
        return [tile(arr, reps=(repeats,) + (1,) * (arr.ndim - 1)) for arr in arrays]

    def _batchify(self, source, cache_attr):
        if self.cursor >= self.num_data:
            raise MXNetError("NDArrayIter: no current batch (the data is exhausted); call reset()")
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            cached = getattr(self, cache_attr)
            if cached is None:
                raise MXNetError("NDArrayIter: the first batch of a roll_over epoch needs the "
                                 "examples kept back from the last one, and there are none")
            if self.cursor + self.batch_size > self.num_data:
                raise MXNetError(f"NDArrayIter: roll_over cannot fill a batch of {self.batch_size} "
                                 f"from {self.num_data} examples")
            setattr(self, cache_attr, None)
            return self._concat(cached, self._getdata(source, end=self.cursor + self.batch_size))
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            pad = self.batch_size - self.num_data + self.cursor
            head = self._getdata(source, start=self.cursor)
            if pad > self.num_data:
                fill = self._tile(self._getdata(source, end=self.num_data), pad // self.num_data)
                if pad % self.num_data:
                    fill = self._concat(fill, self._getdata(source, end=pad % self.num_data))
            else:
                fill = self._getdata(source, end=pad)
            return self._concat(head, fill)
        end = min(self.cursor + self.batch_size, self.num_data)
        return self._getdata(source, self.cursor, end)

    def getdata(self):
        return self._batchify(self.data, "_cache_data")

    def getlabel(self):
        return self._batchify(self.label, "_cache_label")

    def getpad(self):
        if self.last_batch_handle == "pad" and self.cursor + self.batch_size > self.num_data:
            return self.cursor + self.batch_size - self.num_data
        if self.last_batch_handle == "roll_over" and -self.batch_size < self.cursor < 0:
            return -self.cursor
        return 0
