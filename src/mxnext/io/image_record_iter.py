"""``ImageRecordIter``: batches of the images in an image RecordIO file (``im2rec``'s
output: each record an ``IRHeader`` with the label, then an encoded image), decoded,
augmented (``image_record_aug``) and mirrored as MXNet's C++ iterator does, in Python.
Decoding and resizing are ``mx.image``'s numpy kernels (decoding with Pillow)."""

from __future__ import annotations

import io
import random

import numpy as np

from .. import _image_kernels as kernels
from .. import ndarray as nd
from .._runtime.base import MXNetError
from .batch import DataBatch, DataDesc, DataIter
from .image_record_aug import RecordAugmenter

__all__ = ["ImageRecordIter"]

# MXNet parameters that tune its C++ threads and buffers: nothing to do here
_THREADING = {"preprocess_threads", "prefetch_buffer", "verbose", "path_imgidx", "ctx",
              "num_decode_threads", "device_id", "shuffle_chunk_size", "shuffle_chunk_seed"}
# MXNet's default augmenter's options, passed on to RecordAugmenter
_AUGMENT = {"random_resized_crop", "max_aspect_ratio", "min_aspect_ratio", "max_crop_size",
            "min_crop_size", "max_random_area", "min_random_area", "brightness", "contrast",
            "saturation", "pca_noise", "random_h", "random_s", "random_l", "fill_value",
            "inter_method", "pad", "max_rotate_angle", "max_shear_ratio", "rotate",
            "max_random_scale", "min_random_scale", "max_img_size", "min_img_size"}


class ImageRecordIter(DataIter):
    """``(batch_size,) + data_shape`` float32 batches ((pixel - mean) / std * scale, channel
    first) and ``(batch_size,)`` labels (``(batch_size, label_width)`` when wider).
    ``resize`` > 0 first scales each image's shorter edge to it; ``rand_crop`` takes a
    random ``data_shape`` window, else the centre one (an image smaller than the window is
    resized up); ``rand_mirror`` flips half the images, ``mirror`` all of them. MXNet's
    default-augmenter options (``random_resized_crop``, colour jitter, ``pca_noise``, ...)
    are applied by ``RecordAugmenter``, drawing from ``seed_aug`` (else ``seed``). ``num_parts``/``part_index`` read
    one contiguous part of the records; with ``round_batch`` the last batch is completed
    from the start and reports the pad, else it is dropped."""

    def __init__(self, path_imgrec, data_shape, batch_size, label_width=1, shuffle=False,
                 rand_crop=False, rand_mirror=False, resize=-1, mean_r=0.0, mean_g=0.0,
                 mean_b=0.0, std_r=1.0, std_g=1.0, std_b=1.0, scale=1.0, num_parts=1,
                 part_index=0, round_batch=True, seed=0, data_name="data",
                 label_name="softmax_label", dtype="float32", mirror=False, seed_aug=None,
                 **kwargs):
        unknown = set(kwargs) - _THREADING - _AUGMENT
        if unknown:
            raise MXNetError(f"ImageRecordIter: unknown parameter(s) {sorted(unknown)}")
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3):
            raise MXNetError(f"ImageRecordIter: data_shape: expected (channels 1 or 3, height, "
                             f"width), got {data_shape}")
        if not 0 <= part_index < num_parts:
            raise MXNetError(f"ImageRecordIter: part_index: expected 0 <= part_index < "
                             f"num_parts={num_parts}, got {part_index}")
        super().__init__(batch_size)
        from ..recordio import MXRecordIO, unpack
        reader = MXRecordIO(path_imgrec, "r")
        records = list(iter(reader.read, None))
        reader.close()
        lo, hi = (len(records) * part_index // num_parts,
                  len(records) * (part_index + 1) // num_parts)
        self._records = [unpack(r) for r in records[lo:hi]]
        if not self._records:
            raise MXNetError(f"ImageRecordIter: {path_imgrec!r} part {part_index} of "
                             f"{num_parts} holds no records")
        self._shape, self._label_width = data_shape, label_width
        self._shuffle, self._rand_mirror, self._mirror = shuffle, rand_mirror, mirror
        self._round = round_batch
        channels = data_shape[0]
        self._mean = np.array([mean_r, mean_g, mean_b][:channels], np.float32)[:, None, None]
        self._scale = (np.float32(scale)
                       / np.array([std_r, std_g, std_b][:channels], np.float32)[:, None, None])
        self._rng = random.Random(seed)
        self._aug_rng = np.random.default_rng(seed if seed_aug is None else seed_aug)
        self._augment = RecordAugmenter(
            data_shape, self._aug_rng, resize=resize, rand_crop=rand_crop,
            **{k: v for k, v in kwargs.items() if k in _AUGMENT})
        self._dtype = dtype
        label_shape = (batch_size,) if label_width == 1 else (batch_size, label_width)
        self.provide_data = [DataDesc(data_name, (batch_size,) + data_shape, dtype)]
        self.provide_label = [DataDesc(label_name, label_shape, dtype)]
        self.reset()

    def reset(self):
        self._order = list(range(len(self._records)))
        if self._shuffle:
            self._rng.shuffle(self._order)
        self._cursor = 0

    def _image(self, payload):
        pixels = kernels.decode(io.BytesIO(payload), 0 if self._shape[0] == 1 else 1, True,
                                "ImageRecordIter")
        out = self._augment(pixels)
        if self._mirror or (self._rand_mirror and self._aug_rng.uniform() < 0.5):
            out = out[:, ::-1]
        return (out.transpose(2, 0, 1).astype(np.float32) - self._mean) * self._scale

    def next(self):
        n = len(self._order)
        if self._cursor >= n or (not self._round and self._cursor + self.batch_size > n):
            raise StopIteration
        picks = [self._order[(self._cursor + i) % n] for i in range(self.batch_size)]
        pad = max(0, self._cursor + self.batch_size - n)
        self._cursor += self.batch_size
        data = np.stack([self._image(self._records[i][1]) for i in picks])
        labels = np.array([np.ravel(self._records[i][0].label)[:self._label_width]
                           if self._records[i][0].flag else [self._records[i][0].label]
                           for i in picks], np.float32)
        if self._label_width == 1:
            labels = labels[:, 0]
        return DataBatch(data=[nd.array(data, dtype=self._dtype)],
                         label=[nd.array(labels, dtype=self._dtype)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)
