"""What every data iterator speaks: ``DataDesc``, ``DataBatch`` and the ``DataIter`` protocol."""

from collections import namedtuple

import numpy as np

__all__ = ["DataDesc", "DataBatch", "DataIter"]


class DataDesc(namedtuple("DataDesc", ["name", "shape"])):
    """Name and shape of one input (a 2-tuple, as MXNet), plus ``dtype`` and ``layout``.

    ``layout`` says what each axis of ``shape`` means; its ``N`` marks the batch axis.
    """

    def __new__(cls, name, shape, dtype=np.float32, layout="NCHW"):
        desc = super().__new__(cls, name, shape)
        desc.dtype = dtype
        desc.layout = layout
        return desc

    def __repr__(self):
        return f"DataDesc[{self.name},{self.shape},{self.dtype},{self.layout}]"

    @staticmethod
    def get_batch_axis(layout):
        """The batch axis of ``layout`` (0 when None, -1 when it has no ``N``)."""
        return 0 if layout is None else layout.find("N")

    @staticmethod
    def get_list(shapes, types):
        """``DataDesc`` list from ``[(name, shape)]`` and optional ``[(name, dtype)]``."""
        if types is None:
            return [DataDesc(name, shape) for name, shape in shapes]
        dtypes = dict(types)
        return [DataDesc(name, shape, dtypes[name]) for name, shape in shapes]


class DataBatch:
    """One batch: lists of data and label arrays, how many trailing examples are padding
    (``pad``), the example indices, and optionally a bucket key and descriptions."""

    def __init__(self, data, label=None, pad=None, index=None, bucket_key=None,
                 provide_data=None, provide_label=None):
        if data is not None and not isinstance(data, (list, tuple)):
            raise TypeError(f"DataBatch: data must be a list of NDArrays, got {type(data).__name__}")
        if label is not None and not isinstance(label, (list, tuple)):
            raise TypeError(f"DataBatch: label must be a list of NDArrays, got {type(label).__name__}")
        self.data = data
        self.label = label
        self.pad = pad
        self.index = index
        self.bucket_key = bucket_key
        self.provide_data = provide_data
        self.provide_label = provide_label

    def __str__(self):
        data_shapes = [d.shape for d in self.data]
        label_shapes = [l.shape for l in self.label] if self.label else None
        return f"{type(self).__name__}: data shapes: {data_shapes} label shapes: {label_shapes}"


class DataIter:
    """Base of every data iterator: a Python iterator of ``DataBatch``.

    Subclasses implement ``iter_next`` (advance; False at the end) and the getters of the
    current batch, or override ``next`` directly.
    """

    def __init__(self, batch_size=0):
        self.batch_size = batch_size

    def __iter__(self):
        return self

    def reset(self):
        """Go back to the start of the data."""

    def next(self):
        """The next ``DataBatch``; ``StopIteration`` at the end of the data."""
        if not self.iter_next():
            raise StopIteration
        return DataBatch(data=self.getdata(), label=self.getlabel(), pad=self.getpad(),
                         index=self.getindex())

    def __next__(self):
        return self.next()

    def iter_next(self):
        """Move to the next batch; whether there was one."""

    def getdata(self):
        """Data arrays of the current batch."""

    def getlabel(self):
        """Label arrays of the current batch."""

    def getindex(self):
        """Indices of the current batch's examples, or None."""
        return None

    def getpad(self):
        """How many examples at the end of the current batch are padding."""
