"""``MNISTIter``: batches of the MNIST idx-ubyte files (MXNet's C++ ``MNISTIter``, in Python)."""

import logging

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.params import Field, Param
from .native import MXDataIter, PrefetcherParam, parse_params

__all__ = ["MNISTIter"]


class MNISTParam(Param):
    image: str = Field("./train-images-idx3-ubyte", description="Mnist image path.")
    label: str = Field("./train-labels-idx1-ubyte", description="Mnist label path.")
    batch_size: int = Field(128, ge=1, description="Batch Size.")
    shuffle: bool = Field(True, description="Whether to shuffle data.")
    flat: bool = Field(False, description="Whether to flat the data into 1D.")
    seed: int = Field(0, description="Random Seed.")
    silent: bool = Field(False, description="Whether to print out data info.")
    num_parts: int = Field(1, gt=0, description="partition the data into multiple parts")
    part_index: int = Field(0, ge=0, description="the index of the part will read")


def _read_idx(path, header_ints, what):
    """The big-endian int32 header fields and the raw bytes after them."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except OSError as exc:
        raise MXNetError(f"MNISTIter: cannot read {what} file {path!r}: {exc}") from None
    if len(raw) < 4 * header_ints:
        raise MXNetError(f"MNISTIter: invalid mnist format: {path!r} is shorter than its header")
    header = np.frombuffer(raw, ">i4", header_ints).astype(int).tolist()
    return header, np.frombuffer(raw, np.uint8, offset=4 * header_ints)


def _part(count, param):
    if param.part_index >= param.num_parts:
        raise MXNetError(f"MNISTIter: part_index must be < num_parts={param.num_parts}, "
                         f"got {param.part_index}")
    start = int(count / param.num_parts * param.part_index)
    end = int(count / param.num_parts * (param.part_index + 1))
    return start, end


def _mt19937_shuffle(n, seed):
    """The permutation ``std::shuffle`` makes of ``range(n)`` with ``std::mt19937(seed)``
    in MXNet 1.9.1's build (libstdc++: positions 1..n-1 each swapped with a uniform pick
    below it, by rejection and division), so a seed gives MXNet's order. numpy's legacy
    ``RandomState(seed)`` is the same Mersenne Twister, seeded the same way; its full-range
    uint32 draws are the raw words."""
    rng = np.random.RandomState(seed % 2**32)
    words, w = [], 0
    perm = list(range(n))
    for i in range(1, n):
        scaling = 0xFFFFFFFF // (i + 1)
        past = (i + 1) * scaling
        while True:
            if w == len(words):
                words, w = rng.randint(0, 2**32, size=n + 64, dtype=np.uint32).tolist(), 0
            r = words[w]
            w += 1
            if r < past:
                break
        j = r // scaling
        perm[i], perm[j] = perm[j], perm[i]
    return perm


class MNISTIter(MXDataIter):
    """Batches of MNIST images (float32 in [0, 1): pixel / 256) and labels.

    ``flat`` gives ``(batch, rows*cols)`` images instead of ``(batch, 1, rows, cols)``.
    ``shuffle`` permutes the examples once, at construction, in the order MXNet's
    ``seed`` gives. ``num_parts``/``part_index`` read one contiguous part of the files.
    A trailing incomplete batch is dropped. Keyword arguments only; unknown ones are
    ignored, as in MXNet.
    """

    def __init__(self, **kwargs):
        param = parse_params(MNISTParam, kwargs, "MNISTIter")
        prefetch = parse_params(PrefetcherParam, kwargs, "MNISTIter")
        (_, count, rows, cols), pixels = _read_idx(param.image, 4, "image")
        start, end = _part(count, param)
        if pixels.size < end * rows * cols:
            raise MXNetError(f"MNISTIter: invalid mnist format: {param.image!r} holds "
                             f"{pixels.size} pixels, its header promises {count}x{rows}x{cols}")
        images = pixels[start * rows * cols:end * rows * cols].reshape(end - start, rows, cols)
        (_, lcount), labels = _read_idx(param.label, 2, "label")
        lstart, lend = _part(lcount, param)
        if labels.size < lend:
            raise MXNetError(f"MNISTIter: invalid mnist format: {param.label!r} holds "
                             f"{labels.size} labels, its header promises {lcount}")
        labels = labels[lstart:lend]
        if param.shuffle:
            perm = np.asarray(_mt19937_shuffle(len(labels), param.seed), dtype=np.int64)
            images, labels = images[perm], labels[perm]
        # MXNet scales by 1/256 in float32, which is exact
        self._images = images.astype(np.float32) * np.float32(1 / 256)
        self._labels = labels.astype(np.float32)
        self._flat = param.flat
        self._batch = param.batch_size
        self._loc = 0
        self._zero_index = np.zeros(param.batch_size, np.uint64)
        if not param.silent:
            shape = ((param.batch_size, rows * cols) if param.flat
                     else (param.batch_size, 1, rows, cols))
            logging.getLogger(__name__).info("MNISTIter: load %d images, shuffle=%d, shape=%s",
                                             len(images), param.shuffle, shape)
        super().__init__(kwargs.get("data_name", "data"), kwargs.get("label_name", "softmax_label"),
                         dtype=prefetch.dtype)

    def _before_first(self):
        self._loc = 0

    def _advance(self):
        if self._loc + self._batch > self._images.shape[0]:
            return False
        rows = slice(self._loc, self._loc + self._batch)
        data = self._images[rows]
        n = data.shape[0]
        self._data = data.reshape(n, -1) if self._flat else data.reshape(n, 1, *data.shape[1:])
        self._label = self._labels[rows]
        self._pad, self._index = 0, self._zero_index
        self._loc += self._batch
        return True
