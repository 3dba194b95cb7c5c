"""MXNet 1.9's image augmenters: callables from an (H, W, C) NDArray to another, each with
``dumps()`` (its class name and arguments as JSON), and ``CreateAugmenter``, the list
``ImageIter`` applies by default. The colour augmenters work on float images (after
``CastAug``) and, as MXNet's, may change their input in place."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np

from .. import ndarray as nd
from .image import (_get_interp_method, center_crop, color_normalize, imresize, random_crop,
                    random_size_crop, resize_short)

__all__ = ["Augmenter", "SequentialAug", "ResizeAug", "ForceResizeAug", "RandomCropAug",
           "RandomSizedCropAug", "CenterCropAug", "RandomOrderAug", "BrightnessJitterAug",
           "ContrastJitterAug", "SaturationJitterAug", "HueJitterAug", "ColorJitterAug",
           "LightingAug", "ColorNormalizeAug", "RandomGrayAug", "HorizontalFlipAug", "CastAug",
           "CreateAugmenter"]

_GRAY = [[[0.299, 0.587, 0.114]]]
# MXNet's rounded RGB <-> YIQ matrices (HueJitterAug)
_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.596, -0.274, -0.321], [0.211, -0.523, 0.311]])
_FROM_YIQ = np.array([[1.0, 0.956, 0.621], [1.0, -0.272, -0.647], [1.0, -1.107, 1.705]])
# ImageNet's RGB PCA (LightingAug) and mean/std (mean=True, std=True)
PCA_EIGVAL = np.array([55.46, 4.794, 1.148])
PCA_EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                       [-0.5836, -0.6948, 0.4203]])
MEAN_RGB = [123.68, 116.28, 103.53]
STD_RGB = [58.395, 57.12, 57.375]


def _plain(value):
    if isinstance(value, nd.NDArray):
        value = value.asnumpy()
    return value.tolist() if isinstance(value, np.ndarray) else value


class Augmenter:
    """An image transformation: called with an NDArray, returns one."""

    def __init__(self, **kwargs):
        self._kwargs = {k: _plain(v) for k, v in kwargs.items()}

    def dumps(self):
        """``[class name in lower case, its arguments]`` as a JSON string."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class _Composite(Augmenter):
    """Augmenters ``ts`` applied one after another; ``dumps()`` lists theirs."""

    def __init__(self, ts):
        super().__init__()
        self.ts = ts

    def dumps(self):
        return [type(self).__name__.lower(), [t.dumps() for t in self.ts]]

    def __call__(self, src):
        for aug in self.ts:
            src = aug(src)
        return src


class SequentialAug(_Composite):
    """``ts`` applied one after another."""


class RandomOrderAug(_Composite):
    """``ts`` applied in a new random order each call."""

    def __call__(self, src):
        random.shuffle(self.ts)
        return super().__call__(src)


class _Sized(Augmenter):
    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp


class ResizeAug(_Sized):
    """``resize_short(src, size, interp)``."""

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class ForceResizeAug(_Sized):
    """``src`` resized to ``size`` (w, h), aspect ratio not kept."""

    def __call__(self, src):
        sizes = (src.shape[0], src.shape[1], self.size[1], self.size[0])
        return imresize(src, *self.size, interp=_get_interp_method(self.interp, sizes))


class RandomCropAug(_Sized):
    """``random_crop(src, size, interp)``'s image."""

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]


class CenterCropAug(_Sized):
    """``center_crop(src, size, interp)``'s image."""

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomSizedCropAug(Augmenter):
    """``random_size_crop(src, size, area, ratio, interp)``'s image."""

    def __init__(self, size, area, ratio, interp=2, **kwargs):
        super().__init__(size=size, area=area, ratio=ratio, interp=interp)
        if "min_area" in kwargs:
            warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                          DeprecationWarning)
            area = kwargs.pop("min_area")
        if kwargs:
            raise TypeError(f"RandomSizedCropAug: unexpected keyword arguments {sorted(kwargs)}")
        self.size, self.area, self.ratio, self.interp = size, area, ratio, interp

    def __call__(self, src):
        return random_size_crop(src, self.size, self.area, self.ratio, self.interp)[0]


class BrightnessJitterAug(Augmenter):
    """``src`` times 1 + U(-brightness, brightness)."""

    def __init__(self, brightness):
        super().__init__(brightness=brightness)
        self.brightness = brightness

    def __call__(self, src):
        src *= 1.0 + random.uniform(-self.brightness, self.brightness)
        return src


class ContrastJitterAug(Augmenter):
    """``src`` blended with its mean gray by 1 + U(-contrast, contrast)."""

    def __init__(self, contrast):
        super().__init__(contrast=contrast)
        self.contrast = contrast
        self.coef = nd.array(_GRAY)

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.contrast, self.contrast)
        gray = src * self.coef
        gray = (3.0 * (1.0 - alpha) / gray.size) * nd.sum(gray)
        src *= alpha
        src += gray
        return src


class SaturationJitterAug(Augmenter):
    """``src`` blended with each pixel's gray by 1 + U(-saturation, saturation)."""

    def __init__(self, saturation):
        super().__init__(saturation=saturation)
        self.saturation = saturation
        self.coef = nd.array(_GRAY)

    def __call__(self, src):
        alpha = 1.0 + random.uniform(-self.saturation, self.saturation)
        gray = nd.sum(src * self.coef, axis=2, keepdims=True)
        gray *= 1.0 - alpha
        src *= alpha
        src += gray
        return src


class HueJitterAug(Augmenter):
    """``src``'s hue turned by U(-hue, hue) half turns (a rotation in YIQ space)."""

    def __init__(self, hue):
        super().__init__(hue=hue)
        self.hue = hue
        self.tyiq, self.ityiq = _TO_YIQ, _FROM_YIQ

    def __call__(self, src):
        alpha = random.uniform(-self.hue, self.hue)
        u, w = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        turn = np.array([[1.0, 0.0, 0.0], [0.0, u, -w], [0.0, w, u]])
        return nd.dot(src, nd.array((self.ityiq @ turn @ self.tyiq).T))


class ColorJitterAug(RandomOrderAug):
    """Brightness, contrast and saturation jitters (those > 0) in random order."""

    def __init__(self, brightness, contrast, saturation):
        ts = []
        if brightness > 0:
            ts.append(BrightnessJitterAug(brightness))
        if contrast > 0:
            ts.append(ContrastJitterAug(contrast))
        if saturation > 0:
            ts.append(SaturationJitterAug(saturation))
        super().__init__(ts)


class LightingAug(Augmenter):
    """AlexNet's PCA lighting noise: adds ``eigvec @ (alpha * eigval)``, alpha drawn from
    N(0, alphastd) by ``numpy.random``."""

    def __init__(self, alphastd, eigval, eigvec):
        super().__init__(alphastd=alphastd, eigval=eigval, eigvec=eigvec)
        self.alphastd, self.eigval, self.eigvec = alphastd, eigval, eigvec

    def __call__(self, src):
        alpha = np.random.normal(0, self.alphastd, size=(3,))
        src += nd.array(np.dot(self.eigvec * alpha, self.eigval))
        return src


class ColorNormalizeAug(Augmenter):
    """``color_normalize(src, mean, std)``."""

    def __init__(self, mean, std):
        super().__init__(mean=mean, std=std)
        self.mean = mean if mean is None or isinstance(mean, nd.NDArray) else nd.array(mean)
        self.std = std if std is None or isinstance(std, nd.NDArray) else nd.array(std)

    def __call__(self, src):
        return color_normalize(src, self.mean, self.std)


class RandomGrayAug(Augmenter):
    """``src`` turned gray (0.21 R + 0.72 G + 0.07 B in every channel) with probability
    ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p
        self.mat = nd.array([[0.21, 0.21, 0.21], [0.72, 0.72, 0.72], [0.07, 0.07, 0.07]])

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.dot(src, self.mat)
        return src


class HorizontalFlipAug(Augmenter):
    """``src`` mirrored left-right with probability ``p``."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
        return src


class CastAug(Augmenter):
    """``src.astype(typ)``."""

    def __init__(self, typ="float32"):
        super().__init__(type=typ)
        self.typ = typ

    def __call__(self, src):
        return src.astype(self.typ)


def _color_augs(brightness, contrast, saturation, hue, pca_noise, rand_gray):
    augs = []
    if brightness or contrast or saturation:
        augs.append(ColorJitterAug(brightness, contrast, saturation))
    if hue:
        augs.append(HueJitterAug(hue))
    if pca_noise > 0:
        augs.append(LightingAug(pca_noise, PCA_EIGVAL, PCA_EIGVEC))
    if rand_gray > 0:
        augs.append(RandomGrayAug(rand_gray))
    return augs


def _mean_std(mean, std, types, make):
    """``mean``/``std`` with True read as ImageNet's (made by ``make``); a given one must be
    one of ``types`` with 1 or 3 values."""
    for name, value in (("mean", mean), ("std", std)):
        if value is not None and value is not True and not (
                isinstance(value, types) and value.shape[0] in (1, 3)):
            raise ValueError(f"{name}: expected True, None or an array of 1 or 3 values "
                             f"({' or '.join(t.__name__ for t in types)}), got {value!r}")
    return (make(MEAN_RGB) if mean is True else mean,
            make(STD_RGB) if std is True else std)


def CreateAugmenter(data_shape, resize=0, rand_crop=False, rand_resize=False,
                    rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                    saturation=0, hue=0, pca_noise=0, rand_gray=0, inter_method=2):
    """MXNet's standard augmenter list for (C, H, W) ``data_shape``: optional short-edge
    resize, a crop (random sized, random or centre) to H x W, optional mirror, a cast to
    float32, colour jitters, lighting noise, random gray and normalisation (``mean``/``std``
    True: ImageNet's)."""
    auglist = [ResizeAug(resize, inter_method)] if resize > 0 else []
    crop_size = (data_shape[2], data_shape[1])
    if rand_resize:
        if not rand_crop:
            raise ValueError("CreateAugmenter: rand_resize needs rand_crop=True")
        auglist.append(RandomSizedCropAug(crop_size, 0.08, (3.0 / 4.0, 4.0 / 3.0), inter_method))
    elif rand_crop:
        auglist.append(RandomCropAug(crop_size, inter_method))
    else:
        auglist.append(CenterCropAug(crop_size, inter_method))
    if rand_mirror:
        auglist.append(HorizontalFlipAug(0.5))
    auglist.append(CastAug())
    auglist += _color_augs(brightness, contrast, saturation, hue, pca_noise, rand_gray)
    mean, std = _mean_std(mean, std, (np.ndarray, nd.NDArray), nd.array)
    if mean is not None or std is not None:
        auglist.append(ColorNormalizeAug(mean, std))
    return auglist
