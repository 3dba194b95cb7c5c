"""``ImageRecordIter``'s normalisation (MXNet's ``ImageNormalizeParam``) and its image list:
``(pixel - mean) * contrast * scale / std + illumination * scale / std`` per channel, the
mean a per-channel value (``mean_r/g/b/a``) or a per-pixel mean image (``mean_img``, made
from the data and saved when the file is missing, as MXNet does), and the labels of an
``im2rec`` list (``path_imglist``) found by each record's image index."""

from __future__ import annotations

import os

import numpy as np

from .._runtime.base import MXNetError


class Normalizer:
    """Turns an augmented uint8 (H, W, C) image into the float (C, H, W) batch entry."""

    def __init__(self, channels, rng, mean, std, scale, max_random_contrast=0.0,
                 max_random_illumination=0.0):
        self._mean = np.array(mean[:channels], np.float32)[:, None, None]
        self._std = np.array(std[:channels], np.float32)[:, None, None]
        self._scale, self._rng = np.float32(scale), rng
        self._contrast, self._illumination = max_random_contrast, max_random_illumination
        self.mean_img = None

    def __call__(self, img):
        contrast, illumination = 1.0, 0.0
        if self._contrast or self._illumination:
            contrast = self._rng.uniform() * self._contrast * 2 - self._contrast + 1
            illumination = (self._rng.uniform() * self._illumination * 2
                            - self._illumination)
        mean = self._mean if self.mean_img is None else self.mean_img
        mult = np.float32(contrast * self._scale) / self._std
        bias = np.float32(illumination * self._scale) / self._std
        return (img.transpose(2, 0, 1).astype(np.float32) - mean) * mult + bias

    def use_mean_img(self, path, shape, images):
        """Subtract the mean image in ``path`` (an ``nd.save`` file of one (C, H, W) array),
        else the mean of ``images()`` (normalised so far without it), saved there under
        ``mean_img`` first."""
        from .. import ndarray as nd
        if os.path.exists(path):
            loaded = nd.load(path)
            arrays = list(loaded.values()) if isinstance(loaded, dict) else loaded
            if len(arrays) != 1:
                raise MXNetError(f"ImageRecordIter: mean_img: expected a file of one array, "
                                 f"got {len(arrays)} in {path!r}")
            mean = arrays[0].asnumpy().astype(np.float32)
        else:
            total, count = np.zeros(shape, np.float64), 0
            for image in images():
                total += image
                count += 1
            mean = (total / max(count, 1)).astype(np.float32)
            nd.save(path, {"mean_img": nd.array(mean)})
        if mean.shape != tuple(shape):
            raise MXNetError(f"ImageRecordIter: mean_img: expected an image of shape "
                             f"{tuple(shape)} (data_shape), got {mean.shape} in {path!r}")
        self.mean_img = mean


def read_imglist(path, label_width):
    """{image index: float32 labels} from an ``im2rec`` list: ``index<TAB>label...<TAB>path``
    per line (the path is not read)."""
    labels = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            fields = line.split()
            if not fields:
                continue
            if len(fields) < 1 + label_width:
                raise MXNetError(f"ImageRecordIter: path_imglist: line {n} of {path!r}: "
                                 f"expected an index and {label_width} label(s), got "
                                 f"{line.strip()!r}")
            labels[int(float(fields[0]))] = np.array(fields[1:1 + label_width], np.float32)
    return labels
