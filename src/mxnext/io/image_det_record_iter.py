"""``ImageDetRecordIter``: MXNet's C++ detection record iterator without its random
augmenters: each image of a RecordIO file decoded, optionally short-edge resized, fitted to
``data_shape`` (``resize_mode`` force, shrink or fit), normalised, and its raw label
carried as ``[channels, height, width, label length, label..., pad...]``."""

from __future__ import annotations

import io
import struct
from typing import Literal

import numpy as np

from .. import _image_kernels as kernels
from .._runtime.base import MXNetError
from .._runtime.params import Field, Param
from .batch_loader import BatchLoader, BatchParam
from .native import MXDataIter, PrefetcherParam, parse_params

__all__ = ["ImageDetRecordIter"]

# MXNet's random detection augmenters: taken only at their "off" values here
_RANDOM = ("rand_crop_prob", "rand_pad_prob", "rand_mirror_prob", "random_hue_prob",
           "random_saturation_prob", "random_illumination_prob", "random_contrast_prob")


class ImageDetRecordParam(Param):
    path_imgrec: str = Field("./data/imgrec.rec", description="Path to the image RecordIO file.")
    data_shape: tuple[int, int, int] = Field(..., description="(channels, height, width).")
    label_width: int = Field(-1, description="Labels per image, -1: any.")
    label_pad_width: int = Field(0, description="Label length to pad to; 0 or -1: the "
                                                "longest in the file.")
    label_pad_value: float = Field(-1.0, description="The value labels are padded with.")
    resize: int = Field(-1, description="Resize the shorter edge to this first; -1: no.")
    resize_mode: Literal["force", "shrink", "fit"] = Field("force", description="How images "
                                                           "fit in data_shape.")
    inter_method: int = Field(1, ge=0, le=10, description="OpenCV interpolation mode.")
    mean_r: float = Field(0.0, description="Mean of R.")
    mean_g: float = Field(0.0, description="Mean of G.")
    mean_b: float = Field(0.0, description="Mean of B.")
    std_r: float = Field(0.0, description="Standard deviation of R; 0: none.")
    std_g: float = Field(0.0, description="Standard deviation of G; 0: none.")
    std_b: float = Field(0.0, description="Standard deviation of B; 0: none.")
    scale: float = Field(1.0, description="Multiplies the normalised values.")
    shuffle: bool = Field(False, description="Shuffle the records each epoch.")
    seed: int = Field(0, description="Seed of the shuffle.")
    num_parts: int = Field(1, gt=0, description="Parts the records are split in.")
    part_index: int = Field(0, ge=0, description="The part to read.")


def _record_starts(path):
    """Byte offsets of the records of a RecordIO file (their first or only chunk)."""
    with open(path, "rb") as f:
        blob = f.read()
    starts, offset = [], 0
    while offset + 8 <= len(blob):
        lrec = struct.unpack_from("<I", blob, offset + 4)[0]
        if lrec >> 29 in (0, 1):
            starts.append(offset)
        offset += 8 + ((lrec & ((1 << 29) - 1)) + 3) // 4 * 4
    return starts, len(blob)


def _part_range(path, num_parts, part_index):
    """The records (first, last + 1) of ``part_index``: dmlc splits the file in equal byte
    ranges (4-byte aligned) and each part starts at the first record at or after its
    range's start."""
    starts, total = _record_starts(path)
    step = ((total + num_parts - 1) // num_parts + 3) // 4 * 4

    def first_at(offset):
        return next((i for i, s in enumerate(starts) if s >= offset), len(starts))
    return (first_at(min(step * part_index, total)),
            first_at(min(step * (part_index + 1), total)))


def _valid_objects(raw, image_id):
    """``raw`` (header width, object width, header..., objects...) without its empty boxes,
    as MXNet's detection augmenter rewrites every label."""
    header, width = int(raw[0]), int(raw[1]) if raw.size > 1 else 0
    if raw.size < 7 or header < 2 or width < 5 or (raw.size - header) % width:
        raise MXNetError(f"ImageDetRecordIter: image {image_id}: invalid detection label "
                         f"{raw.tolist()}: expected [header width >= 2, object width >= 5, "
                         f"header..., objects of that width...], 7 values at least")
    objects = raw[header:].reshape(-1, width)
    keep = (objects[:, 3] > objects[:, 1]) & (objects[:, 4] > objects[:, 2])
    return np.concatenate([raw[:header], objects[keep].ravel()])


def _fit(pixels, param):
    """``pixels`` resized as MXNet's default detection augmenter with its randomness off."""
    h, w = pixels.shape[:2]
    if param.resize != -1:
        size = ((param.resize, param.resize * h // w) if h > w
                else (param.resize * w // h, param.resize))
        pixels = kernels.resize(pixels, *size, param.inter_method)
        h, w = pixels.shape[:2]
    dh, dw = param.data_shape[1:]
    if param.resize_mode == "force":
        return kernels.resize(pixels, dw, dh, param.inter_method)
    ratio = min(dh / h, dw / w)
    if param.resize_mode == "shrink" and ratio >= 1:
        return pixels
    return kernels.resize(pixels, int(ratio * w), int(ratio * h), param.inter_method)


class ImageDetRecordIter(MXDataIter):
    """Batches of ``(batch_size,) + data_shape`` float32 images and ``(batch_size,
    label_pad_width + 4)`` labels from a detection RecordIO file (``im2rec --pack-label``).

    An image smaller than ``data_shape`` (``resize_mode`` shrink or fit) fills its top-left
    corner, zeros elsewhere; the label's first four values give its real size. Normalising:
    ``(pixel - mean) / std * scale`` (a mean or std of 0 is skipped). ``round_batch`` as in
    ``CSVIter``. MXNet's random augmenters (``rand_crop_prob``, ``rand_pad_prob``,
    ``rand_mirror_prob``, ``random_*_prob``) are not provided: ``mx.image.ImageDetIter``
    with ``CreateDetAugmenter`` has them; ``shuffle`` uses its own random order.
    ``num_parts``/``part_index`` split the file in byte ranges as MXNet (dmlc) does.
    """

    def __init__(self, **kwargs):
        param = parse_params(ImageDetRecordParam, kwargs, "ImageDetRecordIter")
        batch = parse_params(BatchParam, kwargs, "ImageDetRecordIter")
        parse_params(PrefetcherParam, kwargs, "ImageDetRecordIter")
        for name in _RANDOM:
            if float(kwargs.get(name, 0)) > 0:
                raise MXNetError(f"ImageDetRecordIter: {name}={kwargs[name]}: MXNet's random "
                                 f"detection augmenters are not provided here; use "
                                 f"mx.image.ImageDetIter with CreateDetAugmenter")
        if param.data_shape[0] not in (1, 3):
            raise MXNetError(f"ImageDetRecordIter: data_shape: expected 1 or 3 channels, got "
                             f"{param.data_shape}")
        self._param = param
        self._records = self._read_records(param)
        self._label_len = self._pad_width(param)
        self._rng = np.random.RandomState(param.seed)
        self._order = np.arange(len(self._records), dtype=np.int64)
        self._loader = BatchLoader([self._order], batch, "ImageDetRecordIter")
        super().__init__(kwargs.get("data_name", "data"),
                         kwargs.get("label_name", "softmax_label"))

    @staticmethod
    def _read_records(param):
        from ..recordio import MXRecordIO, unpack
        if param.part_index >= param.num_parts:
            raise MXNetError(f"ImageDetRecordIter: part_index: expected < num_parts="
                             f"{param.num_parts}, got {param.part_index}")
        reader = MXRecordIO(param.path_imgrec, "r")
        records = list(iter(reader.read, None))
        reader.close()
        first, last = _part_range(param.path_imgrec, param.num_parts, param.part_index)
        records = records[first:last]
        out = []
        for header, payload in map(unpack, records):
            label = np.atleast_1d(np.asarray(header.label, np.float32))
            if param.label_width > 0 and label.size != param.label_width:
                raise MXNetError(f"ImageDetRecordIter: the record of image {header.id} has a "
                                 f"{label.size}-value label but label_width is "
                                 f"{param.label_width}")
            out.append((label, payload, header.id))
        if not out:
            raise MXNetError(f"ImageDetRecordIter: {param.path_imgrec!r} part "
                             f"{param.part_index} holds no records")
        return out

    def _pad_width(self, param):
        longest = max(record[0].size for record in self._records)
        if longest > param.label_pad_width > 0:
            raise MXNetError(f"ImageDetRecordIter: label_pad_width: {param.label_pad_width} "
                             f"smaller than the longest label, {longest}")
        return max(longest, param.label_pad_width)

    def _before_first(self):
        self._loader.before_first()
        if self._param.shuffle:
            self._order[:] = self._rng.permutation(len(self._records))

    def _advance(self):
        if not self._loader.next():
            return False
        picks = self._order[self._loader.buffers[0]]
        samples = [self._sample(i) for i in picks]
        self._data = np.stack([s[0] for s in samples])
        self._label = np.stack([s[1] for s in samples])
        self._pad, self._index = self._loader.pad, self._loader.index
        return True

    def _sample(self, i):
        param = self._param
        raw, payload, image_id = self._records[i]
        label = _valid_objects(raw, image_id)
        channels = param.data_shape[0]
        pixels = kernels.decode(io.BytesIO(payload), 0 if channels == 1 else 1, True,
                                "ImageDetRecordIter")
        pixels = _fit(pixels, param)
        h, w = pixels.shape[:2]
        data = np.zeros(param.data_shape, np.float32)
        data[:, :h, :w] = self._normalise(pixels.transpose(2, 0, 1).astype(np.float32))
        out = np.full(self._label_len + 4, param.label_pad_value, np.float32)
        out[:4] = (channels, h, w, label.size)
        out[4:4 + label.size] = label
        return data, out

    def _normalise(self, chw):
        p = self._param
        means, stds = (p.mean_r, p.mean_g, p.mean_b), (p.std_r, p.std_g, p.std_b)
        if any(m > 0 for m in means):
            chw -= np.asarray(means[:chw.shape[0]], np.float32)[:, None, None]
        for c, std in enumerate(stds[:chw.shape[0]]):
            if std > 0:
                chw[c] /= np.float32(std)
        return chw * np.float32(p.scale)
