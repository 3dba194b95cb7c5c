"""``ImageIter``: MXNet 1.9's Python image iterator over a RecordIO file (with or without
its ``.idx``), a ``.lst`` list of image files under ``path_root``, or a Python list, with
the augmenters of ``CreateAugmenter`` (or your own) and MXNet's ``last_batch_handle``."""

from __future__ import annotations

import logging
import numbers
import os
import random

import numpy as np

from .. import ndarray as nd
from .. import recordio
from ..io import DataBatch, DataIter
from .augmenters import CreateAugmenter
from .image import imdecode

__all__ = ["ImageIter"]

_LABEL_DTYPES = ("int32", "float32", "int64", "float64")


def _read_lst(path, dtype):
    """(``{key: (label NDArray, file name)}``, keys in file order) of a ``.lst`` file
    (``index<TAB>label...<TAB>path`` lines)."""
    table, keys = {}, []
    with open(path, encoding="utf-8") as fin:
        for line in fin:
            fields = line.strip().split("\t")
            key = int(fields[0])
            table[key] = (nd.array(np.asarray(fields[1:-1], np.float64), dtype=dtype), fields[-1])
            keys.append(key)
    return table, keys


def _read_imglist(imglist, dtype):
    """As ``_read_lst`` for ``[label..., path]`` entries, keyed "1", "2", ... (MXNet's)."""
    table, keys = {}, []
    for index, entry in enumerate(imglist, 1):
        if len(entry) > 2:
            label = entry[:-1]
        elif isinstance(entry[0], numbers.Number):
            label = [entry[0]]
        else:
            label = entry[0]
        table[str(index)] = (nd.array(np.asarray(label, np.float64), dtype=dtype), entry[-1])
        keys.append(str(index))
    return table, keys


class ImageIter(DataIter):
    """Batches of ``(batch_size,) + data_shape`` float32 images (channel first) and their
    labels (``(batch_size,)``, ``(batch_size, label_width)`` when wider, in ``dtype``).

    Sources: ``path_imgrec`` (with ``path_imgidx`` for shuffling and parts), else
    ``path_imglist`` or ``imglist`` with images under ``path_root``; a list given with a
    record file replaces its labels. ``aug_list`` defaults to ``CreateAugmenter(data_shape,
    **kwargs)``. ``last_batch_handle``: 'pad' fills the last batch from the start and
    reports ``pad``, 'discard' drops it, 'roll_over' carries its images into the next epoch.
    """

    def __init__(self, batch_size, data_shape, label_width=1, path_imgrec=None,
                 path_imglist=None, path_root=None, path_imgidx=None, shuffle=False,
                 part_index=0, num_parts=1, aug_list=None, imglist=None, data_name="data",
                 label_name="softmax_label", dtype="float32", last_batch_handle="pad",
                 **kwargs):
        super().__init__(batch_size)
        if not (path_imgrec or path_imglist or isinstance(imglist, list)):
            raise ValueError(f"{type(self).__name__}: give path_imgrec, path_imglist or "
                             f"imglist (a list)")
        if dtype not in _LABEL_DTYPES:
            raise ValueError(f"{type(self).__name__}: dtype: label type {dtype!r} not "
                             f"supported, expected one of {_LABEL_DTYPES}")
        if last_batch_handle not in ("pad", "discard", "roll_over"):
            raise ValueError(f"{type(self).__name__}: last_batch_handle: expected 'pad', "
                             f"'discard' or 'roll_over', got {last_batch_handle!r}")
        self._open_sources(path_imgrec, path_imgidx, path_imglist, imglist, dtype)
        self.path_root = path_root
        self.check_data_shape(data_shape)
        self.provide_data = [(data_name, (batch_size,) + tuple(data_shape))]
        label_shape = (batch_size, label_width) if label_width > 1 else (batch_size,)
        self.provide_label = [(label_name, label_shape)]
        self.data_shape, self.label_width, self.shuffle = tuple(data_shape), label_width, shuffle
        self._pick_sequence(shuffle, num_parts, part_index, path_imgidx)
        self.auglist = CreateAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.cur = 0
        self._allow_read = True
        self.last_batch_handle = last_batch_handle
        self.num_image = len(self.seq) if self.seq is not None else None
        self._cache_data = self._cache_label = self._cache_idx = None
        self.reset()

    def _open_sources(self, path_imgrec, path_imgidx, path_imglist, imglist, dtype):
        self.imgrec = self.imgidx = None
        if path_imgrec:
            logging.info("%s: loading recordio %s...", type(self).__name__, path_imgrec)
            if path_imgidx:
                self.imgrec = recordio.MXIndexedRecordIO(path_imgidx, path_imgrec, "r")
                self.imgidx = list(self.imgrec.keys)
            else:
                self.imgrec = recordio.MXRecordIO(path_imgrec, "r")
        self.imglist, self._imgkeys = None, None
        if path_imglist:
            self.imglist, self._imgkeys = _read_lst(path_imglist, dtype)
        elif isinstance(imglist, list):
            self.imglist, self._imgkeys = _read_imglist(imglist, dtype)

    def _pick_sequence(self, shuffle, num_parts, part_index, path_imgidx):
        """``seq``: the keys read in order (None: the record file front to back)."""
        if self.imgrec is None:
            self.seq = self._imgkeys
        elif shuffle or num_parts > 1 or path_imgidx:
            if self.imgidx is None:
                raise ValueError(f"{type(self).__name__}: shuffle and num_parts > 1 over a "
                                 f"record file need its index (path_imgidx)")
            self.seq = self.imgidx
        else:
            self.seq = None
        if num_parts > 1:
            if not 0 <= part_index < num_parts:
                raise ValueError(f"{type(self).__name__}: part_index: expected 0 <= part_index"
                                 f" < num_parts={num_parts}, got {part_index}")
            size = len(self.seq) // num_parts
            self.seq = self.seq[part_index * size:(part_index + 1) * size]

    def reset(self):
        """Back to the first image (reshuffled); under 'roll_over' a cached partial batch
        stays, to be completed by the next epoch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.last_batch_handle != "roll_over" or self._cache_data is None:
            if self.imgrec is not None:
                self.imgrec.reset()
            self.cur = 0
            self._allow_read = True

    def hard_reset(self):
        """``reset`` that also drops a rolled-over partial batch."""
        if self.seq is not None and self.shuffle:
            random.shuffle(self.seq)
        if self.imgrec is not None:
            self.imgrec.reset()
        self.cur = 0
        self._allow_read = True
        self._cache_data = self._cache_label = self._cache_idx = None

    def next_sample(self):
        """(label, encoded image bytes) of the next image."""
        if not self._allow_read:
            raise StopIteration
        if self.seq is None:
            record = self.imgrec.read()
            if record is None:
                if self.last_batch_handle != "discard":
                    self.imgrec.reset()
                raise StopIteration
            header, img = recordio.unpack(record)
            return header.label, img
        if self.cur >= self.num_image:
            if self.last_batch_handle != "discard":
                self.cur = 0
            raise StopIteration
        idx = self.seq[self.cur]
        self.cur += 1
        if self.imgrec is None:
            label, fname = self.imglist[idx]
            return label, self.read_image(fname)
        header, img = recordio.unpack(self.imgrec.read_idx(idx))
        return (header.label if self.imglist is None else self.imglist[idx][0]), img

    def _store(self, batch_data, batch_label, i, data, label):
        batch_data[i] = self.postprocess_data(data)
        label = label.asnumpy() if isinstance(label, nd.NDArray) else np.asarray(label)
        label = label.reshape(batch_label.shape[1:])
        batch_label[i] = label if label.ndim else float(label)

    def _batchify(self, batch_data, batch_label, start=0):
        """Fill ``batch_data``/``batch_label`` from row ``start``; the rows filled."""
        i = start
        try:
            while i < self.batch_size:
                label, s = self.next_sample()
                data = self.imdecode(s)
                try:
                    self.check_valid_image(data)
                except RuntimeError as exc:
                    logging.debug("Invalid image, skipping:  %s", exc)
                    continue
                self._store(batch_data, batch_label, i, self.augmentation_transform(data),
                            label)
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        c, h, w = self.data_shape
        return nd.zeros((self.batch_size, c, h, w)), nd.empty(self.provide_label[0][1])

    def next(self):
        if self._cache_data is not None:
            batch_data, batch_label, i = self._cache_data, self._cache_label, self._cache_idx
        else:
            batch_data, batch_label = self._new_batch()
            i = self._batchify(batch_data, batch_label)
        pad = self.batch_size - i
        if pad:
            if self.last_batch_handle == "discard":
                raise StopIteration
            if self.last_batch_handle == "roll_over" and self._cache_data is None:
                self._cache_data, self._cache_label, self._cache_idx = batch_data, batch_label, i
                raise StopIteration
            self._batchify(batch_data, batch_label, i)
            if self.last_batch_handle == "pad":
                self._allow_read = False
            else:
                self._cache_data = self._cache_label = self._cache_idx = None
        return DataBatch([batch_data], [batch_label], pad=pad)

    def check_data_shape(self, data_shape):
        """``data_shape`` must be (3, H, W)."""
        if len(data_shape) != 3:
            raise ValueError(f"data_shape should have length 3, with dimensions CxHxW, got "
                             f"{data_shape}")
        if data_shape[0] != 3:
            raise ValueError(f"This iterator expects inputs to have 3 channels, data_shape is "
                             f"{data_shape}")

    def check_valid_image(self, data):
        """A decoded image must have a shape."""
        if len(data[0].shape) == 0:
            raise RuntimeError("Data shape is wrong")

    def _where(self):
        if self.seq is None:
            return "the record before position " + str(self.cur)
        idx = self.seq[(self.cur % self.num_image) - 1]
        return (f"filename: {self.imglist[idx][1]}" if self.imglist is not None
                else f"index: {idx}")

    def imdecode(self, s):
        """``s`` decoded; a broken image raises RuntimeError naming it."""
        try:
            return imdecode(s)
        except Exception as exc:  # noqa: BLE001 - reported with the image it came from
            raise RuntimeError(f"Broken image {self._where()}, {exc}") from exc

    def read_image(self, fname):
        """The bytes of ``fname`` under ``path_root``."""
        with open(os.path.join(self.path_root, fname), "rb") as fin:
            return fin.read()

    def augmentation_transform(self, data):
        """``data`` through every augmenter."""
        for aug in self.auglist:
            data = aug(data)
        return data

    def postprocess_data(self, datum):
        """(H, W, C) to (C, H, W)."""
        return nd.transpose(datum, axes=(2, 0, 1))
