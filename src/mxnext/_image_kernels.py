"""Numpy image kernels of ``mx.image``, ``mx.io``'s image iterators and gluon's vision
transforms: images are ``(..., H, W, C)`` arrays (``(..., C, H, W)`` for rotation, which
comes after ``ToTensor``). Integer images come back rounded and clipped to their type's
range, as OpenCV's saturating casts do. Decoding uses Pillow (mxnext has no codec)."""

from __future__ import annotations

import numpy as np

from . import _image_resample as _resample
from ._runtime.base import MXNetError

__all__ = ["decode", "resize", "crop", "adjust", "rotate", "make_border"]

_GRAY = np.array([0.299, 0.587, 0.114], np.float32)         # ITU-R 601 luma
_TO_YIQ = np.array([[0.299, 0.587, 0.114], [0.5959, -0.2746, -0.3213],
                    [0.2115, -0.5227, 0.3112]])     # I and Q of a gray are 0
_FROM_YIQ = np.linalg.inv(_TO_YIQ)


def decode(source, flag, to_rgb, what):
    """The image in ``source`` (a path or a binary file) as a uint8 (H, W, 3) array, RGB
    (BGR when not ``to_rgb``), (H, W, 1) gray when ``flag`` is 0, or (H, W, 4) RGBA (BGRA)
    when ``flag`` is -1 and the image has an alpha channel."""
    try:
        from PIL import Image
    except ImportError as exc:
        raise MXNetError(f"{what}: decoding an image needs Pillow (mxnext has no codec of "
                         f"its own): pip install pillow") from exc
    try:
        with Image.open(source) as img:
            bands, mode = img.getbands(), img.mode
            pixels = np.asarray(img.convert({0: "L", -1: "RGBA"}.get(flag, "RGB")))
    except (OSError, ValueError) as exc:
        raise MXNetError(f"{what}: cannot read the image: {exc}") from None
    if flag == -1 and "A" not in bands:
        raise MXNetError(f"{what}: expected an image with 4 channels (RGBA), got "
                         f"{len(bands)} ({mode})")
    if flag == 0:
        pixels = pixels[..., None]
    elif not to_rgb:
        pixels = np.concatenate([pixels[..., 2::-1], pixels[..., 3:]], -1)
    return np.ascontiguousarray(pixels)


def _float(x):
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32, copy=False)


def _like(out, x):
    """``out`` (float) in ``x``'s dtype."""
    if np.issubdtype(x.dtype, np.integer):
        info = np.iinfo(x.dtype)
        out = np.clip(np.rint(out), info.min, info.max)
    return out.astype(x.dtype, copy=False)


def _grid(n_in, n_out):
    """Source rows (or columns) and weights of bilinear resizing, pixel centres aligned."""
    pos = np.clip((np.arange(n_out) + 0.5) * (n_in / n_out) - 0.5, 0, n_in - 1)
    lo = np.floor(pos).astype(np.intp)
    hi = np.minimum(lo + 1, n_in - 1)
    return lo, hi, (pos - lo).astype(np.float32)


def _separable(x, wy, wx):
    """``x`` (..., H, W, C) times ``wy`` (h, H) along H and ``wx`` (w, W) along W."""
    f = _float(x)
    lead, (h_in, w_in, c) = f.shape[:-3], f.shape[-3:]
    rows = np.matmul(wy.astype(f.dtype), f.reshape(lead + (h_in, w_in * c)))
    out = np.matmul(wx.astype(f.dtype), rows.reshape(lead + (wy.shape[0], w_in, c)))
    return _like(out, x)


def resize(x, width, height, interp=1):
    """``x`` resized to ``height`` x ``width`` as OpenCV's ``resize``: nearest neighbour
    (``interp`` 0), bilinear (1, also any other value), bicubic (2), area (3), Lanczos (4).
    Integer images are computed in float and rounded (OpenCV's fixed-point sums may differ
    by one)."""
    h, w = x.shape[-3], x.shape[-2]
    if (h, w) == (height, width):
        return x.copy()
    if interp in (2, 4):
        weights = _resample.cubic if interp == 2 else _resample.lanczos4
        return _separable(x, weights(h, height), weights(w, width))
    if interp == 3:
        shrink = height <= h and width <= w
        return _separable(x, _resample.area(h, height, shrink), _resample.area(w, width, shrink))
    if interp == 0:
        # OpenCV's source index: floor(i * (1 / (out / in))), the double rounding included
        rows = np.minimum((np.arange(height) * (1.0 / (height / h))).astype(np.intp), h - 1)
        cols = np.minimum((np.arange(width) * (1.0 / (width / w))).astype(np.intp), w - 1)
        return x[..., rows, :, :][..., cols, :]
    y0, y1, wy = _grid(h, height)
    x0, x1, wx = _grid(w, width)
    f = _float(x)
    wx = wx[:, None].astype(f.dtype)
    top, bottom = f[..., y0, :, :], f[..., y1, :, :]
    top = top[..., x0, :] * (1 - wx) + top[..., x1, :] * wx
    bottom = bottom[..., x0, :] * (1 - wx) + bottom[..., x1, :] * wx
    wy = wy[:, None, None].astype(f.dtype)
    return _like(top * (1 - wy) + bottom * wy, x)


def crop(x, x0, y0, width, height, size=None, interp=1):
    """The ``width`` x ``height`` region at column ``x0``, row ``y0``; resized to ``size``
    (width, height) when given."""
    h, w = x.shape[-3], x.shape[-2]
    if width <= 0 or height <= 0 or x0 < 0 or y0 < 0 or x0 + width > w or y0 + height > h:
        raise MXNetError(f"crop: the region x={x0}, y={y0}, width={width}, height={height} "
                         f"must lie inside the image of width {w} and height {h}")
    out = x[..., y0:y0 + height, x0:x0 + width, :]
    if size is not None and tuple(size) != (width, height):
        return resize(out, size[0], size[1], interp)
    return out.copy()


def adjust(x, kind, alpha):
    """Brightness (``x * alpha``), contrast (towards the image's mean gray) or saturation
    (towards each pixel's gray) by ``alpha``; hue: a rotation by ``alpha`` half turns in
    YIQ space; lighting: ``alpha`` is the RGB offset to add."""
    f = _float(x)
    if kind == "brightness":
        out = f * alpha
    elif kind == "contrast":
        gray = (f @ _GRAY.astype(f.dtype)).mean(axis=(-2, -1), keepdims=True)[..., None]
        out = f * alpha + gray * (1 - alpha)
    elif kind == "saturation":
        gray = (f @ _GRAY.astype(f.dtype))[..., None]
        out = f * alpha + gray * (1 - alpha)
    elif kind == "hue":
        c, s = np.cos(alpha * np.pi), np.sin(alpha * np.pi)
        turn = np.array([[1.0, 0.0, 0.0], [0.0, c, -s], [0.0, s, c]])
        out = f @ (_FROM_YIQ @ turn @ _TO_YIQ).T.astype(f.dtype)
    else:                                   # lighting
        out = f + np.asarray(alpha, f.dtype)
    return _like(out, x)


def rotate(x, degrees, zoom_in=False, zoom_out=False):
    """``(..., C, H, W)`` float32 images turned ``degrees`` counter-clockwise about their
    centres (bilinear, zeros outside); ``zoom_in`` enlarges until no corner is empty,
    ``zoom_out`` shrinks until the whole image shows."""
    h, w = x.shape[-2:]
    degrees = np.broadcast_to(np.asarray(degrees, np.float64), x.shape[:-3])
    theta = np.deg2rad(degrees)[..., None, None]
    c, s = np.cos(theta), np.sin(theta)
    scale = np.ones_like(theta)
    if zoom_in or zoom_out:
        fit = np.maximum((w * abs(c) + h * abs(s)) / w, (w * abs(s) + h * abs(c)) / h)
        scale = 1 / fit if zoom_in else fit
    oy, ox = np.mgrid[0:h, 0:w].astype(np.float64)
    oy, ox = oy - (h - 1) / 2, ox - (w - 1) / 2
    sx = (ox * c - oy * s) * scale + (w - 1) / 2
    sy = (ox * s + oy * c) * scale + (h - 1) / 2
    x0, y0 = np.floor(sx).astype(np.intp), np.floor(sy).astype(np.intp)
    fx, fy = (sx - x0).astype(np.float32), (sy - y0).astype(np.float32)
    lead = x.shape[:-3]
    batch = np.arange(int(np.prod(lead, dtype=np.intp))).reshape(lead + (1, 1))
    flat = x.reshape((-1,) + x.shape[-3:])
    out = np.zeros(x.shape, np.float32)
    for dy, dx, wgt in ((0, 0, (1 - fy) * (1 - fx)), (0, 1, (1 - fy) * fx),
                        (1, 0, fy * (1 - fx)), (1, 1, fy * fx)):
        yy, xx = y0 + dy, x0 + dx
        inside = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        vals = flat[batch, :, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        out += np.moveaxis(vals * (wgt * inside)[..., None], -1, -3)
    return out


# OpenCV's border types by number: numpy's pad modes
_BORDERS = {0: "constant", 1: "edge", 2: "symmetric", 3: "wrap", 4: "reflect"}


def make_border(x, top, bot, left, right, kind=0, values=()):
    """``x`` (H, W, C) padded as OpenCV's ``copyMakeBorder``: constant ``values`` per
    channel, 0 for channels past them (0), edge copies (1), mirrored with (2) or without
    (4) the edge pixel, wrapped around (3). OpenCV's flag 16 (BORDER_ISOLATED) is ignored,
    as on a whole image."""
    kind &= ~16
    if kind not in _BORDERS:
        raise MXNetError(f"copyMakeBorder: type: expected one of {sorted(_BORDERS)} "
                         f"(cv2.BORDER_*), got {kind}")
    widths = ((top, bot), (left, right), (0, 0))
    if kind:
        return np.pad(x, widths, mode=_BORDERS[kind])
    fill = np.zeros(x.shape[-1])
    count = min(len(values), x.shape[-1])
    fill[:count] = values[:count]
    out = np.empty((x.shape[0] + top + bot, x.shape[1] + left + right, x.shape[2]), x.dtype)
    out[...] = _like(fill, x)
    out[top:top + x.shape[0], left:left + x.shape[1]] = x
    return out
