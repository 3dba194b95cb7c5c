"""Datasets: indexable collections of samples (``mx.gluon.data.Dataset`` and its kinds)."""

from __future__ import annotations

import os

from ... import recordio
from ...ndarray import NDArray
from . import sampler as _sampler

__all__ = ["Dataset", "SimpleDataset", "ArrayDataset", "RecordFileDataset"]


class Dataset:
    """Base class: subclasses define ``__getitem__`` (the i-th sample) and ``__len__``.
    Numpy arrays, NDArrays and lists serve as datasets too."""

    def __getitem__(self, idx):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError

    def filter(self, fn):
        """The samples for which ``fn(sample)`` is true (``fn`` runs over every sample
        now; a transformed dataset transforms again when a sample is read)."""
        return _SampledDataset(self, _sampler.FilterSampler(fn, self))

    def shard(self, num_shards, index):
        """Part ``index`` of ``num_shards`` contiguous parts; the first ``len % num_shards``
        parts hold one sample more."""
        if num_shards <= 0:
            raise ValueError(f"Dataset.shard: num_shards must be positive, got {num_shards}")
        if not 0 <= index < num_shards:
            raise ValueError(f"Dataset.shard: index must be in [0, {num_shards}), got {index}")
        size, rest = divmod(len(self), num_shards)
        start = size * index + min(index, rest)
        return _SampledDataset(self, _sampler.SequentialSampler(size + (index < rest), start))

    def take(self, count):
        """The first ``count`` samples (all of them when ``count`` is None or larger)."""
        if count is None or count > len(self):
            count = len(self)
        return _SampledDataset(self, _sampler.SequentialSampler(count))

    def sample(self, sampler):
        """The samples at the indices ``sampler`` yields (drawn once, now)."""
        if not isinstance(sampler, _sampler.Sampler):
            raise TypeError(f"Dataset.sample: sampler must be a gluon.data.Sampler, got "
                            f"{type(sampler).__name__}")
        return _SampledDataset(self, sampler)

    def transform(self, fn, lazy=True):
        """Each sample passed through ``fn`` (a tuple sample as ``fn(*sample)``): when read
        (``lazy``), or all now into a ``SimpleDataset``. A random ``fn`` needs ``lazy``."""
        trans = _LazyTransformDataset(self, fn)
        if lazy:
            return trans
        return SimpleDataset([trans[i] for i in range(len(trans))])

    def transform_first(self, fn, lazy=True):
        """``transform`` of the first field of each sample only (the data, not the label)."""
        return self.transform(_TransformFirst(fn), lazy)


class SimpleDataset(Dataset):
    """A dataset over anything with ``len()`` and ``[]`` (a list, an array)."""

    def __init__(self, data):
        self._data = data

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        return self._data[idx]


class _LazyTransformDataset(Dataset):
    def __init__(self, data, fn):
        self._data = data
        self._fn = fn

    def __len__(self):
        return len(self._data)

    def __getitem__(self, idx):
        item = self._data[idx]
        if isinstance(item, tuple):
            return self._fn(*item)
        return self._fn(item)


class _TransformFirst:
    """A class, not a closure, so that datasets using it pickle (spawned workers)."""

    def __init__(self, fn):
        self._fn = fn

    def __call__(self, x, *args):
        if args:
            return (self._fn(x),) + args
        return self._fn(x)


class _SampledDataset(Dataset):
    def __init__(self, dataset, sampler):
        self._dataset = dataset
        self._indices = list(sampler)

    def __len__(self):
        return len(self._indices)

    def __getitem__(self, idx):
        return self._dataset[self._indices[idx]]


class ArrayDataset(Dataset):
    """Samples ``(a[i], b[i], ...)`` of equally long datasets, arrays or lists; one array
    gives its items alone. A 1-D NDArray is read through numpy, so its items are scalars."""

    def __init__(self, *args):
        if not args:
            raise ValueError("ArrayDataset: needs at least 1 array")
        self._length = len(args[0])
        self._data = []
        for i, data in enumerate(args):
            if len(data) != self._length:
                raise ValueError(f"ArrayDataset: all arrays must have the same length; "
                                 f"array[0] has length {self._length} while array[{i}] "
                                 f"has {len(data)}")
            if isinstance(data, NDArray) and data.ndim == 1:
                data = data.asnumpy()
            self._data.append(data)

    def __getitem__(self, idx):
        if len(self._data) == 1:
            return self._data[0][idx]
        return tuple(data[idx] for data in self._data)

    def __len__(self):
        return self._length


class RecordFileDataset(Dataset):
    """The records of a RecordIO file (with its ``.idx`` index beside it) as ``bytes``."""

    def __init__(self, filename):
        self.idx_file = os.path.splitext(filename)[0] + ".idx"
        self.filename = filename
        self._record = recordio.MXIndexedRecordIO(self.idx_file, self.filename, "r")

    def __getitem__(self, idx):
        return self._record.read_idx(self._record.keys[idx])

    def __len__(self):
        return len(self._record.keys)


class _DownloadedDataset(Dataset):
    """Base of the datasets read from files in a folder (MXNet's name for it, which
    subclasses elsewhere use): ``_get_data`` fills ``_data`` and ``_label``; a sample is
    ``(data[i], label[i])``, through ``transform(data, label)`` when one is given."""

    def __init__(self, root, transform):
        self._transform = transform
        self._data = None
        self._label = None
        self._root = os.path.expanduser(root)
        os.makedirs(self._root, exist_ok=True)
        self._get_data()

    def __getitem__(self, idx):
        if self._transform is not None:
            return self._transform(self._data[idx], self._label[idx])
        return self._data[idx], self._label[idx]

    def __len__(self):
        return len(self._label)

    def _get_data(self):
        raise NotImplementedError
