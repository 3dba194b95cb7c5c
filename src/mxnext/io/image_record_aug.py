"""The default augmenter of ``ImageRecordIter`` (MXNet's C++ ``aug_default``) on uint8
(H, W, C) RGB images: resize, affine warp (rotation, shear, scale, aspect), pad, crop (centre, random, random-size or random-resized),
colour jitter, HLS shifts and PCA noise, in MXNet 1.9's order, each step rounding and
saturating to uint8 as OpenCV does. Draws come from a numpy generator, so values differ
from MXNet's while their ranges and order match."""

from __future__ import annotations

import numpy as np

from .. import _image_kernels as kernels
from .._runtime.base import MXNetError

# AlexNet's RGB eigenvectors scaled by their eigenvalues (rows: R, G, B)
_EIGVEC = (np.array([[-0.5675, 0.7192, 0.4009], [-0.5808, -0.0045, -0.8140],
                     [-0.5836, -0.6948, 0.4203]]) * np.array([55.46, 4.794, 1.148]))
_INTER = (0, 1, 2, 3, 4, 9, 10)


def _fail(arg, expected, got):
    raise MXNetError(f"ImageRecordIter: {arg}: expected {expected}, got {got}")


def _saturate(x):
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


class RecordAugmenter:
    """Checks the augmentation options once and applies them to one image per call."""

    def __init__(self, data_shape, rng, resize=-1, rand_crop=False, random_resized_crop=False,
                 max_aspect_ratio=0.0, min_aspect_ratio=None, max_crop_size=-1,
                 min_crop_size=-1, max_random_area=1.0, min_random_area=1.0, brightness=0.0,
                 contrast=0.0, saturation=0.0, pca_noise=0.0, random_h=0, random_s=0,
                 random_l=0, fill_value=255, inter_method=1, pad=0, max_rotate_angle=0,
                 max_shear_ratio=0.0, rotate=-1, max_random_scale=1.0, min_random_scale=1.0,
                 max_img_size=1e10, min_img_size=0.0, rotate_list=()):
        if inter_method not in _INTER:
            _fail("inter_method", f"one of {_INTER}", inter_method)
        if min_aspect_ratio is None:
            lo, hi = 1 - max_aspect_ratio, 1 + max_aspect_ratio
        else:
            lo, hi = min_aspect_ratio, max_aspect_ratio
        self._shape, self._rng = data_shape, rng
        self._resize, self._rand_crop, self._pad, self._fill = resize, rand_crop, pad, fill_value
        self._inter = inter_method
        self._crop_size = (min_crop_size, max_crop_size)
        self._jitter = (brightness, contrast, saturation)
        self._hls, self._pca = (random_h, random_l, random_s), pca_noise
        self._resized_crop, self._random_resized = None, random_resized_crop
        self._rotate_list = _angles(rotate_list)
        self._warp = (max_rotate_angle, max_shear_ratio, rotate, (min_random_scale,
                      max_random_scale), (lo, hi), (min_img_size, max_img_size))
        if inter_method == 0 and self._warps():
            _fail("inter_method", "1-4, 9 or 10 with rotation, shear, random scale or aspect "
                  "(MXNet's affine step)", 0)
        if random_resized_crop:
            self._check_resized_crop(rand_crop, max_crop_size, min_crop_size, lo, hi,
                                     min_random_area, max_random_area)
            if (lo, hi, min_random_area, max_random_area) != (1, 1, 1, 1):
                self._resized_crop = ((min_random_area, max_random_area), (lo, hi))
            if (min_random_scale, max_random_scale) != (1, 1):
                _fail("random_resized_crop", "min/max_random_scale=1 with it",
                      f"[{min_random_scale}, {max_random_scale}]")

    def _warps(self):
        """MXNet's condition for its affine step (the aspect range only counts without
        random_resized_crop)."""
        angle, shear, rotate, scales, ratios, sizes = self._warp
        return (angle > 0 or shear > 0 or rotate > 0 or self._rotate_list or scales != (1, 1)
                or (not self._random_resized and ratios != (1, 1)) or sizes != (0, 1e10))

    def _affine(self, img):
        """Rotation by U{-v..v} degrees (or ``rotate``, or one of ``rotate_list`` drawn
        uniformly), shear U(-v, v), scale and aspect
        ratio drawn as MXNet does, about the centre of an output of the scaled size
        (clamped to ``min/max_img_size``); uncovered pixels take ``fill_value``."""
        max_angle, max_shear, rotate, (s0, s1), (r0, r1), (lo, hi) = self._warp
        shear = self._rng.uniform() * max_shear * 2 - max_shear
        angle = int(self._rng.integers(-max_angle, max_angle + 1))
        angle = rotate if rotate > 0 else angle
        if self._rotate_list:
            angle = self._rotate_list[int(self._rng.integers(0, len(self._rotate_list)))]
        a, b = np.cos(np.deg2rad(angle)), np.sin(np.deg2rad(angle))
        scale = 1.0 if self._random_resized else self._rng.uniform() * (s1 - s0) + s0
        ratio = 1.0 if self._random_resized else self._rng.uniform() * (r1 - r0) + r0
        hs = 2 * scale / (1 + ratio)
        ws = ratio * hs
        h, w = img.shape[:2]
        size = np.array([max(lo, min(hi, scale * n)) for n in (w, h)])
        m = np.array([[hs * a - shear * b * ws, hs * b + shear * a * ws], [-b * ws, a * ws]])
        shift = (size - m @ np.array([w, h])) / 2       # from the unrounded size, as MXNet
        nw, nh = int(size[0]), int(size[1])
        self._method((w, h), (nw, nh))          # inter_method 10 draws here, as in MXNet
        return _warp_affine(img, m, shift, nw, nh, self._fill)

    @staticmethod
    def _check_resized_crop(rand_crop, max_crop, min_crop, lo, hi, min_area, max_area):
        if rand_crop or max_crop != -1 or min_crop != -1:
            _fail("random_resized_crop", "rand_crop=False and min/max_crop_size=-1 with it",
                  f"rand_crop={rand_crop}, min_crop_size={min_crop}, max_crop_size={max_crop}")
        if not 0 < lo <= hi:
            _fail("min_aspect_ratio/max_aspect_ratio", "0 < min <= max", f"[{lo}, {hi}]")
        if not min_area <= max_area:
            _fail("min_random_area/max_random_area", "min <= max", f"[{min_area}, {max_area}]")

    def _method(self, old_wh, new_wh):
        """OpenCV's interpolation number for this resize (9: by direction, 10: random)."""
        if self._inter == 9:
            if new_wh[0] > old_wh[0] and new_wh[1] > old_wh[1]:
                return 2
            return 3 if new_wh[0] < old_wh[0] and new_wh[1] < old_wh[1] else 1
        if self._inter == 10:
            return int(self._rng.integers(0, 5))
        return self._inter

    def _resized(self, img, width, height):
        return kernels.resize(img, width, height,
                              self._method((img.shape[1], img.shape[0]), (width, height)))

    def __call__(self, img):
        if self._resize > 0:
            h, w = img.shape[:2]
            r = self._resize
            img = self._resized(img, r, r * h // w) if h > w else self._resized(img, r * w // h, r)
        if self._warps():
            img = self._affine(img)
        if self._pad > 0:
            p = self._pad
            img = kernels.make_border(img, p, p, p, p, 0, (self._fill,) * img.shape[2])
        out = self._crop(img)
        if any(self._jitter):
            out = self._color_jitter(out)
        if any(self._hls):
            out = self._hls_shift(out)
        if self._pca > 0:
            out = self._pca_noise(out)
        return out

    def _crop(self, img):
        if self._resized_crop is not None:
            out = self._random_resized_crop(img)
            if out is not None:
                return out
        elif self._crop_size != (-1, -1):
            return self._random_size_crop(img)
        return self._centre_crop(img)

    def _random_resized_crop(self, img):
        """Up to ten tries of a window of random area share and aspect ratio (MXNet's
        order of draws); None when none fits."""
        (a0, a1), (r0, r1) = self._resized_crop
        h, w = img.shape[:2]
        for _ in range(10):
            target = h * w * self._rng.uniform(a0, a1)
            ratio = self._rng.uniform(r0, r1)
            ch, cw = int(np.rint(np.sqrt(target / ratio))), int(np.rint(np.sqrt(target * ratio)))
            if self._rng.uniform() > 0.5:
                ch, cw = cw, ch
            if 0 < ch <= h and 0 < cw <= w:
                y0 = int(self._rng.integers(0, h - ch + 1))
                x0 = int(self._rng.integers(0, w - cw + 1))
                return self._resized(img[y0:y0 + ch, x0:x0 + cw], self._shape[2], self._shape[1])
        return None

    def _random_size_crop(self, img):
        lo, hi = self._crop_size
        h, w = img.shape[:2]
        if not (w >= hi and h >= hi and hi >= lo):
            _fail("max_crop_size", f"min_crop_size <= max_crop_size <= the image's sides "
                  f"({w}x{h})", f"[{lo}, {hi}]")
        size = int(self._rng.integers(lo, hi + 1))
        y0, x0 = self._offsets(h - size, w - size)
        return self._resized(img[y0:y0 + size, x0:x0 + size], self._shape[2], self._shape[1])

    def _offsets(self, dy, dx):
        if self._rand_crop:
            return int(self._rng.integers(0, dy + 1)), int(self._rng.integers(0, dx + 1))
        return dy // 2, dx // 2

    def _centre_crop(self, img):
        """The ``data_shape`` window, centred or random; a side shorter than it is first
        scaled up to it, keeping the aspect ratio."""
        _, oh, ow = self._shape
        h, w = img.shape[:2]
        if h < oh:
            img, h, w = self._resized(img, int(oh / h * w), oh), oh, int(oh / h * w)
        if w < ow:
            img, h, w = self._resized(img, ow, int(ow / w * h)), int(ow / w * h), ow
        if h < oh:
            _fail("data_shape", f"an image at least {oh}x{ow} after resizing", f"{h}x{w}")
        y0, x0 = self._offsets(h - oh, w - ow)
        return img[y0:y0 + oh, x0:x0 + ow]

    def _color_jitter(self, img):
        """Brightness, contrast and saturation factors 1 + U(-v, v), applied in a random
        order, each result saturated to uint8."""
        alphas = [1.0 + self._rng.uniform(-v, v) for v in self._jitter]
        kinds = ("brightness", "contrast", "saturation")
        for i in self._rng.permutation(3):
            if img.shape[2] == 1 and i == 2:
                continue
            if img.shape[2] == 1:
                img = _saturate(img * alphas[0] if i == 0 else
                                img * alphas[1] + img.mean() * (1 - alphas[1]))
            else:
                img = _saturate(kernels.adjust(img.astype(np.float32), kinds[i], alphas[i]))
        return img

    def _hls_shift(self, img):
        """Integer shifts of H (in [0, 180]), L and S (in [0, 255]) drawn from
        [-v, v] by a mean of one and four uniforms, as MXNet."""
        draws = [(self._rng.uniform() + 4 * self._rng.uniform()) / 5 for _ in range(3)]
        (rh, rs, rl), (vh, vl, vs) = draws, self._hls
        shift = np.array([int(rh * vh * 2 - vh), int(rl * vl * 2 - vl), int(rs * vs * 2 - vs)])
        if img.shape[2] == 1:
            return img
        hls = _rgb_to_hls(img).astype(np.int32) + shift
        return _hls_to_rgb(np.clip(hls, 0, [180, 255, 255]))

    def _pca_noise(self, img):
        offset = _EIGVEC @ self._rng.normal(0, self._pca, 3)
        if img.shape[2] == 1:
            return img
        return np.clip(img.astype(np.int32) + offset.astype(np.int32), 0, 255).astype(np.uint8)


def _angles(rotate_list):
    """MXNet's ``rotate_list``: whole degrees as a sequence or a string such as "0,90,180"
    (MXNet reads a number at each comma)."""
    if isinstance(rotate_list, str):
        rotate_list = [a for a in rotate_list.strip("()[] ").split(",") if a.strip()]
    try:
        return [int(float(a)) for a in rotate_list]
    except (TypeError, ValueError):
        _fail("rotate_list", "whole degrees, e.g. '0,90,180'", repr(rotate_list))


def _warp_affine(img, m, shift, width, height, fill):
    """OpenCV's ``warpAffine`` of (H, W, C) ``img`` by ``x' = m @ x + shift`` onto a
    ``width`` x ``height`` canvas: each output pixel samples the inverse-mapped source
    point bilinearly (for every OpenCV method), a constant ``fill`` outside."""
    inv = np.linalg.inv(m)
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float64)
    src = np.einsum("ij,jhw->ihw", inv, np.stack([xx - shift[0], yy - shift[1]]))
    sx, sy = src[0], src[1]
    h, w = img.shape[:2]
    padded = np.pad(img.astype(np.float32), ((1, 1), (1, 1), (0, 0)), constant_values=fill)
    x0, y0 = np.floor(sx), np.floor(sy)
    fx, fy = (sx - x0)[..., None], (sy - y0)[..., None]
    # corners outside the image read the padding ring (index 0 or the last one)
    xi = [np.clip(x0 + d, -1, w).astype(np.intp) + 1 for d in (0, 1)]
    yi = [np.clip(y0 + d, -1, h).astype(np.intp) + 1 for d in (0, 1)]
    out = ((padded[yi[0], xi[0]] * (1 - fx) + padded[yi[0], xi[1]] * fx) * (1 - fy)
           + (padded[yi[1], xi[0]] * (1 - fx) + padded[yi[1], xi[1]] * fx) * fy)
    return _saturate(out)


def _rgb_to_hls(img):
    """OpenCV's 8-bit HLS: H in [0, 180), L and S in [0, 255]."""
    f = img.astype(np.float32) / 255
    hi, lo = f.max(-1), f.min(-1)
    light, span = (hi + lo) / 2, hi - lo
    denom = np.where(light < 0.5, hi + lo, 2 - hi - lo)
    sat = np.where(span > 0, span / np.where(denom > 0, denom, 1), 0)
    r, g, b = f[..., 0], f[..., 1], f[..., 2]
    safe = np.where(span > 0, span, 1)
    hue = np.where(hi == r, (g - b) / safe, np.where(hi == g, 2 + (b - r) / safe,
                                                      4 + (r - g) / safe)) * 60
    hue = np.where(span > 0, hue % 360, 0)
    return _saturate(np.stack([hue / 2, light * 255, sat * 255], -1))


def _hls_to_rgb(hls):
    h = hls[..., 0].astype(np.float32) * 2
    light, sat = hls[..., 1] / 255.0, hls[..., 2] / 255.0
    chroma = (1 - np.abs(2 * light - 1)) * sat
    k = (np.array([0, 8, 4]) + h[..., None] / 30) % 12
    rgb = light[..., None] - chroma[..., None] / 2 * np.clip(np.minimum(k - 3, 9 - k), -1, 1)
    return _saturate(rgb * 255)
