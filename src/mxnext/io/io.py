"""``mxnet.io.io``'s names, for code that imports the iterators from there."""

from .batch import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .mnist_iter import MNISTIter
from .native import MXDataIter
from .ndarray_iter import NDArrayIter
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "CSVIter", "MNISTIter", "MXDataIter",
           "NDArrayIter", "PrefetchingIter", "ResizeIter"]
