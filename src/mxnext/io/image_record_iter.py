"""``ImageRecordIter``: batches of the images in an image RecordIO file (``im2rec``'s
output: each record an ``IRHeader`` with the label, then an encoded image), decoded,
augmented (``image_record_aug``), normalised (``image_record_norm``) and mirrored as
MXNet's C++ iterator does, in Python.
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
from .image_record_norm import Normalizer, read_imglist

__all__ = ["ImageRecordIter"]

# MXNet parameters that tune its C++ threads and buffers: nothing to do here
_THREADING = {"preprocess_threads", "prefetch_buffer", "verbose", "path_imgidx", "ctx",
              "num_decode_threads", "device_id", "shuffle_chunk_size", "shuffle_chunk_seed"}
# MXNet's default augmenter's options, passed on to RecordAugmenter
_AUGMENT = {"random_resized_crop", "max_aspect_ratio", "min_aspect_ratio", "max_crop_size",
            "min_crop_size", "max_random_area", "min_random_area", "brightness", "contrast",
            "saturation", "pca_noise", "random_h", "random_s", "random_l", "fill_value",
            "inter_method", "pad", "max_rotate_angle", "max_shear_ratio", "rotate",
            "max_random_scale", "min_random_scale", "max_img_size", "min_img_size",
            "rotate_list"}
_NORMALIZE = {"max_random_contrast", "max_random_illumination"}
_AUGMENTERS = ("aug_default",)      # MXNet's registered image augmenters


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
                 mean_b=0.0, mean_a=0.0, std_r=1.0, std_g=1.0, std_b=1.0, std_a=1.0,
                 scale=1.0, num_parts=1, part_index=0, round_batch=True, seed=0,
                 data_name="data", label_name="softmax_label", dtype="float32", mirror=False,
                 seed_aug=None, mean_img="", path_imglist="", aug_seq="aug_default",
                 **kwargs):
        self._aug_seq = aug_seq
        unknown = set(kwargs) - _THREADING - _AUGMENT - _NORMALIZE
        if unknown:
            raise MXNetError(f"ImageRecordIter: unknown parameter(s) {sorted(unknown)}")
        data_shape = tuple(int(d) for d in data_shape)
        if len(data_shape) != 3 or data_shape[0] not in (1, 3, 4):
            raise MXNetError(f"ImageRecordIter: data_shape: expected (channels 1, 3 or 4, "
                             f"height, width), got {data_shape}")
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
        self._rng = random.Random(seed)
        self._aug_rng = np.random.default_rng(seed if seed_aug is None else seed_aug)
        self._augmenters = [RecordAugmenter(
            data_shape, self._aug_rng, resize=resize, rand_crop=rand_crop,
            **{k: v for k, v in kwargs.items() if k in _AUGMENT}) for _ in _aug_names(aug_seq)]
        self._normalize = Normalizer(
            data_shape[0], self._aug_rng, (mean_r, mean_g, mean_b, mean_a),
            (std_r, std_g, std_b, std_a), scale,
            **{k: v for k, v in kwargs.items() if k in _NORMALIZE})
        self._labels = read_imglist(path_imglist, label_width) if path_imglist else None
        if mean_img:
            self._normalize.use_mean_img(mean_img, data_shape, lambda: (
                self._image(payload) for _, payload in self._records))
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
        pixels = kernels.decode(io.BytesIO(payload), {1: 0, 3: 1, 4: -1}[self._shape[0]],
                                True, "ImageRecordIter")
        for augment in self._augmenters:
            pixels = augment(pixels)
        if pixels.shape[:2] != self._shape[1:]:
            raise MXNetError(f"ImageRecordIter: data_shape: expected images of "
                             f"{self._shape[1]}x{self._shape[2]} after the augmenters "
                             f"({self._aug_seq!r}), got {pixels.shape[0]}x{pixels.shape[1]}")
        flip = self._mirror or (self._rand_mirror and self._aug_rng.uniform() < 0.5)
        out = self._normalize(pixels)       # the mean image is the unflipped one, as MXNet's
        return out[:, :, ::-1] if flip else out

    def _label(self, header):
        if self._labels is not None:
            if header.id not in self._labels:
                raise MXNetError(f"ImageRecordIter: path_imglist: no label for image index "
                                 f"{header.id}")
            return self._labels[header.id]
        return np.ravel(header.label)[:self._label_width] if header.flag else [header.label]

    def next(self):
        n = len(self._order)
        if self._cursor >= n or (not self._round and self._cursor + self.batch_size > n):
            raise StopIteration
        picks = [self._order[(self._cursor + i) % n] for i in range(self.batch_size)]
        pad = max(0, self._cursor + self.batch_size - n)
        self._cursor += self.batch_size
        data = np.stack([self._image(self._records[i][1]) for i in picks])
        labels = np.array([self._label(self._records[i][0]) for i in picks], np.float32)
        if self._label_width == 1:
            labels = labels[:, 0]
        return DataBatch(data=[nd.array(data, dtype=self._dtype)],
                         label=[nd.array(labels, dtype=self._dtype)], pad=pad,
                         provide_data=self.provide_data, provide_label=self.provide_label)


def _aug_names(aug_seq):
    """The augmenters ``aug_seq`` names (comma-separated; empty: none)."""
    names = [n.strip() for n in aug_seq.split(",") if n.strip()]
    for name in names:
        if name not in _AUGMENTERS:
            raise MXNetError(f"ImageRecordIter: aug_seq: expected names among {_AUGMENTERS}, "
                             f"got {name!r}")
    return names
