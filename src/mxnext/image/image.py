"""Image functions on (H, W, C) NDArrays (``imrotate``: (C, H, W) or (N, C, H, W) float32).

Resizing is nearest neighbour for ``interp`` 0 and bilinear for every other OpenCV mode
(bicubic, area and Lanczos included); decoding uses Pillow, which reading an image without
it installed says. Random choices draw from Python's ``random`` and ``numpy.random``, as
MXNet's do, so seeding those repeats them."""

from __future__ import annotations

import io
import numbers
import random
import warnings

import numpy as np

from .. import _image_kernels as _image
from .. import ndarray as nd
from .._runtime.base import MXNetError

__all__ = ["imread", "imdecode", "imresize", "scale_down", "copyMakeBorder", "resize_short",
           "fixed_crop", "center_crop", "random_crop", "color_normalize", "random_size_crop",
           "imrotate", "random_rotate"]


def _out(img, out):
    return img if out is None else img.copyto(out)


def imread(filename, flag=1, to_rgb=True, out=None):
    """The image file ``filename`` as a uint8 (H, W, 3) NDArray (RGB, BGR when not
    ``to_rgb``), (H, W, 1) gray when ``flag`` is 0."""
    img = _image.decode(filename, flag, to_rgb, f"imread({filename!r})")
    return _out(nd.array(img, dtype=np.uint8), out)


def imdecode(buf, flag=1, to_rgb=True, out=None):
    """``imread`` of an encoded image held in ``buf`` (bytes, bytearray, a uint8 numpy
    array or NDArray)."""
    if isinstance(buf, nd.NDArray):
        buf = buf.asnumpy().astype(np.uint8).tobytes()
    elif isinstance(buf, np.ndarray):
        buf = buf.astype(np.uint8, copy=False).tobytes()
    elif not isinstance(buf, (bytes, bytearray)):
        raise ValueError(f"imdecode: buf must be bytes, bytearray, numpy.ndarray or NDArray, "
                         f"got {type(buf).__name__} (encode a str to bytes first)")
    if not buf:
        raise MXNetError("imdecode: buf is empty")
    img = _image.decode(io.BytesIO(bytes(buf)), flag, to_rgb, "imdecode")
    return _out(nd.array(img, dtype=np.uint8), out)


def _apply(kernel, src, *args):
    return nd.array(kernel(src.asnumpy(), *args), dtype=src.dtype)


def imresize(src, w, h, interp=1, out=None):
    """``src`` resized to ``w`` x ``h``."""
    if interp not in range(6):        # OpenCV's modes (5: bilinear, exact), as MXNet's check
        raise MXNetError(f"imresize: unknown interpolation method interp={interp}; OpenCV's "
                         f"are 0 (nearest), 1 (bilinear), 2 (bicubic), 3 (area), 4 (Lanczos) "
                         f"and 5 (bilinear, exact)")
    return _out(_apply(_image.resize, src, int(w), int(h), interp), out)


def scale_down(src_size, size):
    """``size`` (w, h) shrunk, keeping its aspect ratio, to fit in ``src_size`` (w, h)."""
    w, h = size
    sw, sh = src_size
    if sh < h:
        w, h = float(w * sh) / h, sh
    if sw < w:
        w, h = sw, float(h * sw) / w
    return int(w), int(h)


def copyMakeBorder(src, top, bot, left, right, type=0, value=0.0, values=(),  # noqa: A002
                   out=None):
    """``src`` with a border of ``top``, ``bot``, ``left``, ``right`` pixels (OpenCV's
    ``copyMakeBorder``): ``type`` 0 constant (``values`` per channel, else ``value`` in the
    first three), OpenCV's 1 replicate, 2 reflect, 3 wrap, 4 reflect-101 (MXNet's
    docstring numbers them otherwise; OpenCV's numbers are what it does)."""
    fill = tuple(values) if len(values) else (value,) * 3
    img = _image.make_border(src.asnumpy(), int(top), int(bot), int(left), int(right),
                             int(type), fill)
    return _out(nd.array(img, dtype=src.dtype), out)


def _get_interp_method(interp, sizes=()):
    """The OpenCV mode (0-4) that ``interp`` means: 9 picks by ``sizes`` (old h, old w,
    new h, new w): 2 to enlarge, 3 to shrink, else 1; 10 a random one."""
    if interp == 9:
        if not sizes:
            return 2
        oh, ow, nh, nw = sizes
        if nh > oh and nw > ow:
            return 2
        return 3 if nh < oh and nw < ow else 1
    if interp == 10:
        return random.randint(0, 4)
    if interp not in (0, 1, 2, 3, 4):
        raise ValueError(f"Unknown interp method {interp}: expected 0-4, 9 or 10")
    return interp


def resize_short(src, size, interp=2):
    """``src`` resized so that its shorter edge is ``size``, keeping the aspect ratio."""
    h, w = src.shape[0], src.shape[1]
    if h > w:
        new_h, new_w = size * h // w, size
    else:
        new_h, new_w = size, size * w // h
    return imresize(src, new_w, new_h, _get_interp_method(interp, (h, w, new_h, new_w)))


def fixed_crop(src, x0, y0, w, h, size=None, interp=2):
    """The ``w`` x ``h`` region of ``src`` at (``x0``, ``y0``), resized to ``size`` (w, h)
    when given."""
    out = _apply(_image.crop, src, int(x0), int(y0), int(w), int(h), None)
    if size is not None and (w, h) != tuple(size):
        method = _get_interp_method(interp, (h, w, size[1], size[0]))
        out = imresize(out, size[0], size[1], method)
    return out


def random_crop(src, size, interp=2):
    """(a random crop of ``src`` of ``size`` (w, h), shrunk to fit and resized back to
    ``size``; its (x0, y0, w, h) in ``src``)."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0 = random.randint(0, w - new_w)
    y0 = random.randint(0, h - new_h)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def center_crop(src, size, interp=2):
    """As ``random_crop``, at the centre."""
    h, w = src.shape[0], src.shape[1]
    new_w, new_h = scale_down((w, h), size)
    x0, y0 = int((w - new_w) / 2), int((h - new_h) / 2)
    return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)


def color_normalize(src, mean, std=None):
    """``(src - mean) / std``, in place (either may be None: skipped)."""
    if mean is not None:
        src -= mean
    if std is not None:
        src /= std
    return src


def random_size_crop(src, size, area, ratio, interp=2, **kwargs):
    """A random crop of ``src`` covering ``area`` (min, or (min, max)) of it with aspect
    ratio in ``ratio`` (min, max), resized to ``size``; after 10 misses the centre crop.
    Returns (image, (x0, y0, w, h))."""
    h, w = src.shape[0], src.shape[1]
    if "min_area" in kwargs:
        warnings.warn("`min_area` is deprecated. Please use `area` instead.",
                      DeprecationWarning)
        area = kwargs.pop("min_area")
    if kwargs:
        raise TypeError(f"random_size_crop: unexpected keyword arguments {sorted(kwargs)}")
    if isinstance(area, numbers.Number):
        area = (area, 1.0)
    for _ in range(10):
        target_area = random.uniform(area[0], area[1]) * h * w
        new_ratio = np.exp(random.uniform(np.log(ratio[0]), np.log(ratio[1])))
        new_w = int(round(np.sqrt(target_area * new_ratio)))
        new_h = int(round(np.sqrt(target_area / new_ratio)))
        if new_w <= w and new_h <= h:
            x0 = random.randint(0, w - new_w)
            y0 = random.randint(0, h - new_h)
            return fixed_crop(src, x0, y0, new_w, new_h, size, interp), (x0, y0, new_w, new_h)
    return center_crop(src, size, interp)


def _angles(src, rotation_degrees):
    """The per-image angles of ``imrotate``, checked against ``src``'s batch."""
    if src.ndim == 3:
        if not isinstance(rotation_degrees, numbers.Number):
            raise TypeError("imrotate: rotation_degrees: a single image needs a scalar angle, "
                            f"got {type(rotation_degrees).__name__}")
        return float(rotation_degrees)
    if src.ndim != 4:
        raise ValueError(f"imrotate: src: expected (C, H, W) or (N, C, H, W), got {src.shape}")
    if isinstance(rotation_degrees, numbers.Number):
        return np.full(src.shape[0], float(rotation_degrees))
    angles = np.asarray(rotation_degrees.asnumpy() if isinstance(rotation_degrees, nd.NDArray)
                        else rotation_degrees, np.float64).ravel()
    if len(angles) != src.shape[0]:
        raise ValueError(f"imrotate: {src.shape[0]} images need as many rotation angles, "
                         f"got {len(angles)}")
    return angles


def imrotate(src, rotation_degrees, zoom_in=False, zoom_out=False):
    """``src`` (float32 (C, H, W) or (N, C, H, W)) turned ``rotation_degrees``
    counter-clockwise about its centre, bilinear with zeros outside; ``zoom_in`` enlarges
    until no corner is empty, ``zoom_out`` shrinks until all of the image shows."""
    if zoom_in and zoom_out:
        raise ValueError("imrotate: `zoom_in` and `zoom_out` cannot be both True")
    if src.dtype != np.float32:
        raise TypeError(f"imrotate: only float32 images are supported, got {np.dtype(src.dtype)}")
    angles = _angles(src, rotation_degrees)
    return nd.array(_image.rotate(src.asnumpy(), angles, zoom_in, zoom_out), ctx=src.context)


def random_rotate(src, angle_limits, zoom_in=False, zoom_out=False):
    """``imrotate`` by angles drawn uniformly from ``angle_limits`` (low, high), one per
    image."""
    if src.ndim == 3:
        angles = np.random.uniform(*angle_limits)
    else:
        angles = np.random.uniform(*angle_limits, size=src.shape[0])
    return imrotate(src, angles, zoom_in=zoom_in, zoom_out=zoom_out)
