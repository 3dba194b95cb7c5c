"""``mx.io``: MXNet 1.x's data iterators."""

from .. import _missing
from . import io, utils
from .batch import DataBatch, DataDesc, DataIter
from .csv_iter import CSVIter
from .image_det_record_iter import ImageDetRecordIter
from .image_record_iter import ImageRecordIter
from .libsvm_iter import LibSVMIter
from .mnist_iter import MNISTIter
from .native import MXDataIter
from .ndarray_iter import NDArrayIter
from .utils import _getdata_by_idx, _has_instance, _init_data
from .wrappers import PrefetchingIter, ResizeIter

__all__ = ["DataBatch", "DataDesc", "DataIter", "CSVIter", "ImageDetRecordIter", "ImageRecordIter", "LibSVMIter", "MNISTIter", "MXDataIter",
           "NDArrayIter", "PrefetchingIter", "ResizeIter"]


def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
