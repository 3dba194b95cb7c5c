"""Image functions on (H, W, C) NDArrays. Resizing and cropping are the numpy kernels of
the Gluon vision transforms (nearest neighbour for ``interp`` 0, bilinear otherwise);
decoding files uses Pillow, which reading an image without it installed says."""

from __future__ import annotations

import io
import random

import numpy as np

from .. import ndarray as nd
from .._runtime.base import MXNetError
from . import _kernels as _image

__all__ = ["imread", "imdecode", "imresize", "scale_down", "resize_short", "fixed_crop",
           "center_crop", "random_crop", "Augmenter", "ResizeAug", "CenterCropAug",
           "RandomCropAug"]


def _decode(source, flag, to_rgb, what):
    try:
        from PIL import Image
    except ImportError as exc:
        raise MXNetError(f"{what}: decoding an image needs Pillow (mxnext has no codec of "
                         f"its own): pip install pillow") from exc
    with Image.open(source) as img:
        pixels = np.asarray(img.convert("L" if flag == 0 else "RGB"))
    if flag == 0:
        pixels = pixels[..., None]
    elif not to_rgb:
        pixels = pixels[..., ::-1]
    return nd.array(np.ascontiguousarray(pixels), dtype=np.uint8)


def imread(filename, flag=1, to_rgb=True, out=None):
    """The image file ``filename`` as a uint8 (H, W, 3) NDArray (RGB, BGR when not
    ``to_rgb``), (H, W, 1) gray when ``flag`` is 0."""
    img = _decode(filename, flag, to_rgb, f"imread({filename!r})")
    return img if out is None else img.copyto(out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """``imread`` of an encoded image held in ``buf`` (bytes or a uint8 NDArray)."""
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().tobytes()
    img = _decode(io.BytesIO(bytes(buf)), flag, to_rgb, "imdecode")
    return img if out is None else img.copyto(out)


def _apply(kernel, src, *args):
    return nd.array(kernel(src.asnumpy(), *args), dtype=src.dtype)


def imresize(src, w, h, interp=1, out=None):
    """``src`` resized to ``w`` x ``h``."""
    img = _apply(_image.resize, src, int(w), int(h), interp)
    return img if out is None else img.copyto(out)


def scale_down(src_size, size):
    """``size`` (w, h) shrunk, keeping its aspect ratio, to fit in ``src_size`` (w, h)."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter edge is ``size``, keeping the aspect ratio."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        new_w, new_h = size, size * h // w
    else:
        new_w, new_h = size * w // h, size
    return imresize(src, new_w, new_h, interp)


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` region of ``src`` at (``x0``, ``y0``), resized to ``size`` (w, h)
    when given."""
    return _apply(_image.crop, src, int(x0), int(y0), int(w), int(h), size, interp)


def _crop_at(src, size, interp, place):
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = place(w - new_w), place(h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """(the centre crop of ``src`` of ``size`` (w, h), shrunk to fit and resized back to
    ``size``; its (x0, y0, w, h) in ``src``)."""
    return _crop_at(src, size, interp, lambda slack: slack // 2)


def random_crop(src, size, interp=2):
    """As ``center_crop``, at a random place."""
    return _crop_at(src, size, interp, lambda slack: random.randint(0, slack))


class Augmenter:
    """An image transformation: called with an NDArray, returns one."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs

    def dumps(self):
        import json
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src):
        raise NotImplementedError


class ResizeAug(Augmenter):
    """``resize_short(src, size, interp)``."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return resize_short(src, self.size, self.interp)


class CenterCropAug(Augmenter):
    """``center_crop(src, size, interp)``'s image."""

    def __init__(self, size, interp=2):
        super().__init__(size=size, interp=interp)
        self.size, self.interp = size, interp

    def __call__(self, src):
        return center_crop(src, self.size, self.interp)[0]


class RandomCropAug(CenterCropAug):
    """``random_crop(src, size, interp)``'s image."""

    def __call__(self, src):
        return random_crop(src, self.size, self.interp)[0]
