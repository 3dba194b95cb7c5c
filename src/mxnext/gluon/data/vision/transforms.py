"""``mx.gluon.data.vision.transforms``: image transforms as Blocks (MXNet 1.9's names and
arguments). Images are ``(H, W, C)`` or ``(N, H, W, C)`` NDArrays until ``ToTensor`` makes
them ``(C, H, W)`` floats in [0, 1].

Cast, ToTensor and Normalize are HybridBlocks over registered ops; the geometric and
colour transforms compute with numpy (``_image``) on the host, so they are plain Blocks.
Random choices use numpy's and Python's global generators (as MXNet's Python transforms).
"""

from __future__ import annotations

import numbers
import random

import numpy as np

from .... import ndarray as nd
from ...._runtime.base import MXNetError
from ...block import Block, HybridBlock
from ...nn import HybridSequential, Sequential
from .... import _image_kernels as _image

__all__ = ["Compose", "Cast", "ToTensor", "Normalize", "Rotate", "RandomRotation",
           "RandomResizedCrop", "CropResize", "CenterCrop", "Resize", "RandomFlipLeftRight",
           "RandomFlipTopBottom", "RandomBrightness", "RandomContrast", "RandomSaturation",
           "RandomHue", "RandomColorJitter", "RandomLighting", "RandomApply"]


class Compose(Sequential):
    """The transforms in order; runs of consecutive HybridBlocks are grouped into a
    hybridized HybridSequential, as MXNet does."""

    def __init__(self, transforms):
        super().__init__()
        run = []
        for t in list(transforms) + [None]:
            if isinstance(t, HybridBlock):
                run.append(t)
                continue
            if len(run) == 1:
                self.add(run[0])
            elif run:
                group = HybridSequential()
                group.add(*run)
                group.hybridize()
                self.add(group)
            run = []
            if t is not None:
                self.add(t)


class Cast(HybridBlock):
    """Casts to ``dtype``."""

    def __init__(self, dtype="float32"):
        super().__init__()
        self._dtype = dtype

    def hybrid_forward(self, F, x):
        return F.cast(x, self._dtype)


class ToTensor(HybridBlock):
    """``(H, W, C)`` / ``(N, H, W, C)`` images in [0, 255] to float32 ``(C, H, W)`` /
    ``(N, C, H, W)`` in [0, 1]."""

    def hybrid_forward(self, F, x):
        return F.image.to_tensor(x)


class Normalize(HybridBlock):
    """``(x - mean) / std`` per channel of ``(C, H, W)`` / ``(N, C, H, W)`` tensors."""

    def __init__(self, mean=0.0, std=1.0):
        super().__init__()
        self._mean = mean
        self._std = std

    def hybrid_forward(self, F, x):
        return F.image.normalize(x, self._mean, self._std)


# -- host transforms -----------------------------------------------------------------------
class _HostTransform(Block):
    """A transform computed with numpy: ``_apply`` maps the image's array to the result's."""

    def forward(self, x):
        out = self._apply(x.asnumpy())
        return nd.array(out, ctx=x.context, dtype=out.dtype)

    def _apply(self, arr):
        raise NotImplementedError


def _hw(arr, name):
    if arr.ndim not in (3, 4):
        raise MXNetError(f"{name}: expected an image of shape (H, W, C) or (N, H, W, C), "
                         f"got {arr.shape}")
    return arr.shape[-3], arr.shape[-2]


def _wh(size, name):
    """``size`` as (width, height): an int is both."""
    if isinstance(size, numbers.Number):
        size = (size, size)
    if len(size) != 2 or min(size) <= 0:
        raise MXNetError(f"{name}: size must be a positive int or a (width, height) pair, "
                         f"got {size}")
    return int(size[0]), int(size[1])


class Resize(_HostTransform):
    """Resizes to ``size`` (width, height; an int: square, or with ``keep_ratio`` the
    shorter side, the longer one scaled alike). ``interpolation``: 0 nearest, 1 bilinear."""

    def __init__(self, size, keep_ratio=False, interpolation=1):
        super().__init__()
        self._size, self._keep, self._interp = size, keep_ratio, interpolation

    def _apply(self, arr):
        h, w = _hw(arr, "Resize")
        width, height = _wh(self._size, "Resize")
        if self._keep and isinstance(self._size, numbers.Number):
            short = self._size
            if h > w:
                width, height = short, int(short * h / w)
            else:
                width, height = int(short * w / h), short
        return _image.resize(arr, width, height, self._interp)


class CropResize(_HostTransform):
    """The ``width`` x ``height`` region at column ``x``, row ``y``, resized to ``size``
    (width, height) when given."""

    def __init__(self, x, y, width, height, size=None, interpolation=None):
        super().__init__()
        self._box = (x, y, width, height)
        self._size, self._interp = size, 1 if interpolation is None else interpolation

    def _apply(self, arr):
        _hw(arr, "CropResize")
        size = None if self._size is None else _wh(self._size, "CropResize")
        return _image.crop(arr, *self._box, size, self._interp)


def _center_crop(arr, size, interp):
    """The largest centred region with ``size``'s aspect ratio that fits (at most
    ``size``), resized to ``size``."""
    h, w = _hw(arr, "CenterCrop")
    width, height = size
    if h < height:
        width, height = width * h / height, h
    if w < width:
        width, height = w, height * w / width
    width, height = int(width), int(height)
    return _image.crop(arr, (w - width) // 2, (h - height) // 2, width, height, size, interp)


class CenterCrop(_HostTransform):
    """The centre ``size`` (width, height; an int: square) region, scaled up from a smaller
    region when the image is smaller."""

    def __init__(self, size, interpolation=1):
        super().__init__()
        self._size, self._interp = _wh(size, "CenterCrop"), interpolation

    def _apply(self, arr):
        return _center_crop(arr, self._size, self._interp)


class RandomResizedCrop(_HostTransform):
    """A random region covering a ``scale`` fraction of the area with aspect ratio in
    ``ratio`` (drawn log-uniformly), resized to ``size``; after 10 draws that do not fit,
    the centre crop."""

    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=1):
        super().__init__()
        self._size, self._scale, self._ratio = _wh(size, "RandomResizedCrop"), scale, ratio
        self._interp = interpolation

    def _apply(self, arr):
        h, w = _hw(arr, "RandomResizedCrop")
        for _ in range(10):
            area = random.uniform(*self._scale) * h * w
            aspect = np.exp(random.uniform(np.log(self._ratio[0]), np.log(self._ratio[1])))
            cw, ch = int(round(np.sqrt(area * aspect))), int(round(np.sqrt(area / aspect)))
            if 0 < cw <= w and 0 < ch <= h:
                return _image.crop(arr, random.randint(0, w - cw), random.randint(0, h - ch),
                                   cw, ch, self._size, self._interp)
        return _center_crop(arr, self._size, self._interp)


class _RandomFlip(_HostTransform):
    _axis = -2

    def _apply(self, arr):
        _hw(arr, type(self).__name__)
        return np.flip(arr, self._axis).copy() if random.random() < 0.5 else arr


class RandomFlipLeftRight(_RandomFlip):
    """Mirrors the image left to right with probability 0.5."""


class RandomFlipTopBottom(_RandomFlip):
    """Flips the image upside down with probability 0.5."""

    _axis = -3


def _jitter(arr, kind, amount):
    """Hue turned by up to ``amount`` half turns, or the others scaled by a factor in
    [1 - amount, 1 + amount]."""
    change = random.uniform(-amount, amount)
    return _image.adjust(arr, kind, change if kind == "hue" else 1 + change)


class _RandomAdjust(_HostTransform):
    def __init__(self, amount):
        super().__init__()
        self._amount = amount

    def _apply(self, arr):
        _hw(arr, type(self).__name__)
        return _jitter(arr, self._kind, self._amount)


class RandomBrightness(_RandomAdjust):
    """Scales the brightness by a factor in [1 - brightness, 1 + brightness]."""

    _kind = "brightness"


class RandomContrast(_RandomAdjust):
    """Scales the contrast by a factor in [1 - contrast, 1 + contrast]."""

    _kind = "contrast"


class RandomSaturation(_RandomAdjust):
    """Scales the saturation by a factor in [1 - saturation, 1 + saturation]."""

    _kind = "saturation"


class RandomHue(_RandomAdjust):
    """Turns the hue by up to ``hue`` half turns either way."""

    _kind = "hue"


class RandomColorJitter(_HostTransform):
    """Random brightness, contrast, saturation and hue changes (those not 0), in a random
    order."""

    def __init__(self, brightness=0, contrast=0, saturation=0, hue=0):
        super().__init__()
        self._steps = [(kind, amount) for kind, amount in
                       (("brightness", brightness), ("contrast", contrast),
                        ("saturation", saturation), ("hue", hue)) if amount]

    def _apply(self, arr):
        _hw(arr, "RandomColorJitter")
        for kind, amount in random.sample(self._steps, len(self._steps)):
            arr = _jitter(arr, kind, amount)
        return arr


class RandomLighting(_HostTransform):
    """AlexNet's PCA lighting noise: adds ``eigvec @ (alpha * eigval)`` to the RGB values,
    ``alpha`` drawn from N(0, ``alpha``) per channel."""

    _EIGVAL = np.array([55.46, 4.794, 1.148])
    _EIGVEC = np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                        [-0.5836, -0.6948, 0.4203]])

    def __init__(self, alpha):
        super().__init__()
        self._alpha = alpha

    def _apply(self, arr):
        _hw(arr, "RandomLighting")
        noise = np.random.normal(0, self._alpha, 3)
        return _image.adjust(arr, "lighting", self._EIGVEC @ (noise * self._EIGVAL))


def _rotatable(x, name):
    if x.dtype != np.float32:
        raise TypeError(f"{name}: only float32 images can be rotated, got {x.dtype}")
    if x.ndim not in (3, 4):
        raise MXNetError(f"{name}: expected a tensor of shape (C, H, W) or (N, C, H, W), "
                         f"got {x.shape}")


class Rotate(Block):
    """Turns ``(C, H, W)`` / ``(N, C, H, W)`` float32 tensors ``rotation_degrees``
    counter-clockwise (``zoom_in``: no empty corners; ``zoom_out``: nothing cut off)."""

    def __init__(self, rotation_degrees, zoom_in=False, zoom_out=False):
        super().__init__()
        if zoom_in and zoom_out:
            raise ValueError("Rotate: zoom_in and zoom_out cannot both be True")
        self._args = (rotation_degrees, zoom_in, zoom_out)

    def forward(self, x):
        _rotatable(x, "Rotate")
        return nd.array(_image.rotate(x.asnumpy(), *self._args), ctx=x.context)


class RandomRotation(Block):
    """With probability ``rotate_with_proba``, turns each image by an angle drawn uniformly
    from ``angle_limits`` (degrees)."""

    def __init__(self, angle_limits, zoom_in=False, zoom_out=False, rotate_with_proba=1.0):
        super().__init__()
        if not 0 <= rotate_with_proba <= 1:
            raise ValueError(f"RandomRotation: rotate_with_proba must be in [0, 1], got "
                             f"{rotate_with_proba}")
        if zoom_in and zoom_out:
            raise ValueError("RandomRotation: zoom_in and zoom_out cannot both be True")
        self._limits, self._zoom = angle_limits, (zoom_in, zoom_out)
        self._proba = rotate_with_proba

    def forward(self, x):
        _rotatable(x, "RandomRotation")
        if random.random() >= self._proba:
            return x
        angles = np.random.uniform(*self._limits, size=x.shape[:-3])
        return nd.array(_image.rotate(x.asnumpy(), angles, *self._zoom), ctx=x.context)


class RandomApply(Sequential):
    """``transforms`` with probability ``p``, else the input unchanged."""

    def __init__(self, transforms, p=0.5):
        super().__init__()
        self.transforms = transforms
        self.p = p

    def forward(self, x, *args):
        if random.random() > self.p:
            return x
        return self.transforms(x, *args)
