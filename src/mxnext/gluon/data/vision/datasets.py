"""MNIST, FashionMNIST, CIFAR10 and CIFAR100 read from local files in their standard
formats (MXNet 1.9's ``gluon.data.vision`` datasets). Nothing is downloaded: a missing file
is an error naming the files and the folder they go in.

MNIST files are idx files (``train-images-idx3-ubyte`` ..., gzipped or not). CIFAR files
are the binary batches (``data_batch_1.bin`` ...; CIFAR100 ``train.bin``, ``test.bin``) or
the python batches (``data_batch_1`` ...; CIFAR100 ``train``, ``test``), in ``root`` or in
the folder their archive unpacks to; an archive alone in ``root`` is unpacked there. Python
batches are read with an unpickler that makes numpy arrays and plain containers only.
"""

from __future__ import annotations

import os
import pickle
import struct

import numpy as np

from .... import ndarray as nd
from ...._runtime.base import MXNetError, data_dir
from ..dataset import _DownloadedDataset

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "CIFAR100"]


def _default_root(name):
    return os.path.join(data_dir(), "datasets", name)


def _missing(dataset, root, names, source):
    listed = ", ".join(names)
    return MXNetError(f"{dataset}: {listed} not found in {root}; mxnext does not download "
                      f"datasets: put the files there (they come from {source}), or pass "
                      f"root= the folder holding them")


# -- MNIST ---------------------------------------------------------------------------------
_IDX_TYPES = {0x08: np.uint8, 0x09: np.int8, 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4",
              0x0E: ">f8"}


def read_idx(path):
    """The array in an idx file (MNIST's format: a big-endian header with the item type
    and the dimensions, then the items), gzipped or not."""
    if path.endswith(".gz"):
        import gzip
        opener = gzip.open
    else:
        opener = open
    with opener(path, "rb") as f:
        raw = f.read()
    if len(raw) < 4 or raw[:2] != b"\0\0" or raw[2] not in _IDX_TYPES:
        raise MXNetError(f"idx file {path!r}: not an idx file (magic {raw[:4].hex()})")
    ndim = raw[3]
    dims = struct.unpack(f">{ndim}I", raw[4:4 + 4 * ndim])
    dtype = np.dtype(_IDX_TYPES[raw[2]])
    count = int(np.prod(dims, dtype=np.int64))
    body = raw[4 + 4 * ndim:]
    if len(body) != count * dtype.itemsize:
        raise MXNetError(f"idx file {path!r}: the header says {dims} items of {dtype.name} "
                         f"({count * dtype.itemsize} bytes), the file holds {len(body)}")
    return np.frombuffer(body, dtype).reshape(dims)


class MNIST(_DownloadedDataset):
    """MNIST handwritten digits: samples (a uint8 NDArray of shape (28, 28, 1), an int32
    label) from ``train-images-idx3-ubyte(.gz)`` and ``train-labels-idx1-ubyte(.gz)``, or
    the ``t10k-`` files when not ``train``, in ``root`` (default
    ``$MXNET_HOME/datasets/mnist``). ``transform(data, label)`` is applied to each
    sample."""

    _name = "mnist"
    _source = "http://yann.lecun.com/exdb/mnist"

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root or _default_root(self._name), transform)

    def _find(self, name):
        for candidate in (name + ".gz", name):
            path = os.path.join(self._root, candidate)
            if os.path.exists(path):
                return path
        return None

    def _get_data(self):
        prefix = "train" if self._train else "t10k"
        names = (f"{prefix}-images-idx3-ubyte", f"{prefix}-labels-idx1-ubyte")
        paths = [self._find(name) for name in names]
        if None in paths:
            raise _missing(type(self).__name__, self._root,
                           [f"{n}.gz" for n, p in zip(names, paths) if p is None],
                           self._source)
        images, labels = read_idx(paths[0]), read_idx(paths[1])
        if images.ndim != 3 or labels.ndim != 1 or len(images) != len(labels):
            raise MXNetError(f"{type(self).__name__}: {paths[0]!r} holds images of shape "
                             f"{images.shape} and {paths[1]!r} labels of shape "
                             f"{labels.shape}; expected (N, rows, cols) and (N,)")
        self._data = nd.array(images[..., None], dtype=np.uint8)
        self._label = labels.astype(np.int32)


class FashionMNIST(MNIST):
    """Zalando's Fashion-MNIST, MNIST's formats and file names (default root
    ``$MXNET_HOME/datasets/fashion-mnist``)."""

    _name = "fashion-mnist"
    _source = "https://github.com/zalandoresearch/fashion-mnist"


# -- CIFAR ---------------------------------------------------------------------------------
class _ArraysOnly(pickle.Unpickler):
    """Python batches hold dicts, lists, strings and numpy arrays: nothing else is made."""

    _ALLOWED = {("numpy.core.multiarray", "_reconstruct"),
                ("numpy._core.multiarray", "_reconstruct"),
                ("numpy", "ndarray"), ("numpy", "dtype"),
                ("_codecs", "encode")}      # bytes pickled by Python 3 at protocol 2

    def find_class(self, module, name):
        if (module, name) in self._ALLOWED:
            return super().find_class(module, name)
        raise MXNetError(f"CIFAR python batch: refusing to load {module}.{name} (only numpy "
                         f"arrays and plain containers are read)")


def _read_python_batch(path, label_key):
    with open(path, "rb") as f:
        batch = _ArraysOnly(f, encoding="latin1").load()
    if not isinstance(batch, dict):
        raise MXNetError(f"CIFAR python batch {path!r}: expected a dict, got "
                         f"{type(batch).__name__}")
    batch = {k.decode() if isinstance(k, bytes) else k: v for k, v in batch.items()}
    if "data" not in batch or label_key not in batch:
        raise MXNetError(f"CIFAR python batch {path!r}: expected keys 'data' and "
                         f"{label_key!r}, got {sorted(batch)}")
    data = np.asarray(batch["data"], np.uint8).reshape(-1, 3, 32, 32)
    return data, np.asarray(batch[label_key], np.int32)


class CIFAR10(_DownloadedDataset):
    """CIFAR10: samples (a uint8 NDArray of shape (32, 32, 3), an int32 label) from the
    training batches, or the test batch when not ``train``, in ``root`` (default
    ``$MXNET_HOME/datasets/cifar10``)."""

    _name = "cifar10"
    _archives = {"bin": ("cifar-10-binary.tar.gz", "cifar-10-batches-bin"),
                 "py": ("cifar-10-python.tar.gz", "cifar-10-batches-py")}
    _train_files = [f"data_batch_{i}" for i in range(1, 6)]
    _test_files = ["test_batch"]
    _label_bytes = 1
    _source = "https://www.cs.toronto.edu/~kriz/cifar.html"

    def __init__(self, root=None, train=True, transform=None):
        self._train = train
        super().__init__(root or _default_root(self._name), transform)

    def _label_field(self):
        """(the labels' key in a python batch, their byte in a binary record)."""
        return "labels", 0

    def _read_binary_batch(self, path):
        with open(path, "rb") as f:
            raw = np.frombuffer(f.read(), np.uint8)
        width = 3072 + self._label_bytes
        if raw.size % width:
            raise MXNetError(f"{type(self).__name__} binary batch {path!r}: {raw.size} bytes "
                             f"is not a whole number of {width}-byte records")
        raw = raw.reshape(-1, width)
        label = raw[:, self._label_field()[1]]
        return raw[:, self._label_bytes:].reshape(-1, 3, 32, 32), label.astype(np.int32)

    def _locate(self, names):
        """(format, paths) of the first complete set of batch files found, or None."""
        for kind, (_, folder) in self._archives.items():
            ext = ".bin" if kind == "bin" else ""
            for where in (self._root, os.path.join(self._root, folder)):
                paths = [os.path.join(where, name + ext) for name in names]
                if all(os.path.isfile(p) for p in paths):
                    return kind, paths
        return None

    def _get_data(self):
        names = self._train_files if self._train else self._test_files
        found = self._locate(names)
        if found is None:
            for archive, _ in self._archives.values():
                path = os.path.join(self._root, archive)
                if os.path.isfile(path):
                    import tarfile
                    with tarfile.open(path) as tar:
                        tar.extractall(self._root, filter="data")
            found = self._locate(names)
        if found is None:
            wanted = [n + ".bin" for n in names] + names
            raise _missing(type(self).__name__, self._root,
                           wanted + [a for a, _ in self._archives.values()], self._source)
        kind, paths = found
        if kind == "bin":
            parts = [self._read_binary_batch(p) for p in paths]
        else:
            parts = [_read_python_batch(p, self._label_field()[0]) for p in paths]
        data = np.concatenate([d for d, _ in parts]).transpose(0, 2, 3, 1)
        self._data = nd.array(np.ascontiguousarray(data), dtype=np.uint8)
        self._label = np.concatenate([l for _, l in parts])


class CIFAR100(CIFAR10):
    """CIFAR100: as CIFAR10, with the 20 coarse labels, or the 100 fine ones when
    ``fine_label`` (default root ``$MXNET_HOME/datasets/cifar100``)."""

    _name = "cifar100"
    _archives = {"bin": ("cifar-100-binary.tar.gz", "cifar-100-binary"),
                 "py": ("cifar-100-python.tar.gz", "cifar-100-python")}
    _train_files = ["train"]
    _test_files = ["test"]
    _label_bytes = 2

    def __init__(self, root=None, fine_label=False, train=True, transform=None):
        self._fine_label = fine_label
        super().__init__(root, train, transform)

    def _label_field(self):
        return ("fine_labels", 1) if self._fine_label else ("coarse_labels", 0)
