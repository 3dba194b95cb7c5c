"""MXNet 1.9's object-detection augmenters: callables from (image, label) to (image, label),
where label is a numpy array of one row per object, ``[class, xmin, ymin, xmax, ymax, ...]``
with corners as fractions of the image's width and height."""

from __future__ import annotations

import json
import logging
import numbers
import random
import warnings
from math import sqrt

import numpy as np

from .. import ndarray as nd
from .augmenters import (Augmenter, CastAug, ColorNormalizeAug, ForceResizeAug, ResizeAug,
                         _color_augs, _mean_std, _plain)
from .image import copyMakeBorder, fixed_crop

__all__ = ["DetAugmenter", "DetBorrowAug", "DetRandomSelectAug", "DetHorizontalFlipAug",
           "DetRandomCropAug", "DetRandomPadAug", "CreateMultiRandCropAugmenter",
           "CreateDetAugmenter"]


class DetAugmenter:
    """A detection transformation: called with (image NDArray, label array)."""

    def __init__(self, **kwargs):
        self._kwargs = {k: _plain(v) for k, v in kwargs.items()}

    def dumps(self):
        """``[class name in lower case, its arguments]`` as a JSON string."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, src, label):
        raise NotImplementedError(f"{type(self).__name__} must define __call__")


class DetBorrowAug(DetAugmenter):
    """An image ``Augmenter`` applied to the image only (for augmenters that move no
    pixel: colour, cast, or a resize of the whole image)."""

    def __init__(self, augmenter):
        if not isinstance(augmenter, Augmenter):
            raise TypeError(f"DetBorrowAug: expected an image Augmenter, got "
                            f"{type(augmenter).__name__}")
        super().__init__(augmenter=augmenter.dumps())
        self.augmenter = augmenter

    def dumps(self):
        return [type(self).__name__.lower(), self.augmenter.dumps()]

    def __call__(self, src, label):
        return self.augmenter(src), label


class DetRandomSelectAug(DetAugmenter):
    """One of ``aug_list`` picked at random, or none with probability ``skip_prob``."""

    def __init__(self, aug_list, skip_prob=0):
        super().__init__(skip_prob=skip_prob)
        if not isinstance(aug_list, (list, tuple)):
            aug_list = [aug_list]
        for aug in aug_list:
            if not isinstance(aug, DetAugmenter):
                raise ValueError(f"DetRandomSelectAug: aug_list holds DetAugmenters only, got "
                                 f"{type(aug).__name__}")
        self.aug_list = aug_list
        self.skip_prob = skip_prob if aug_list else 1

    def dumps(self):
        return [type(self).__name__.lower(), [x.dumps() for x in self.aug_list]]

    def __call__(self, src, label):
        if random.random() < self.skip_prob:
            return src, label
        random.shuffle(self.aug_list)
        return self.aug_list[0](src, label)


class DetHorizontalFlipAug(DetAugmenter):
    """Image and boxes mirrored left-right with probability ``p`` (the label in place)."""

    def __init__(self, p):
        super().__init__(p=p)
        self.p = p

    def __call__(self, src, label):
        if random.random() < self.p:
            src = nd.flip(src, axis=1)
            self._flip_label(label)
        return src, label

    def _flip_label(self, label):
        xmin = 1.0 - label[:, 1]
        label[:, 1] = 1.0 - label[:, 3]
        label[:, 3] = xmin


def _areas(boxes):
    """Areas of (xmin, ymin, xmax, ymax) rows (0 for empty boxes)."""
    return np.maximum(0, boxes[:, 3] - boxes[:, 1]) * np.maximum(0, boxes[:, 2] - boxes[:, 0])


def _as_range(value, what, name):
    if isinstance(value, (tuple, list)):
        return value
    if not isinstance(value, numbers.Number):
        raise TypeError(f"{name}: {what}: expected a number or a (min, max) pair, got {value!r}")
    logging.info("Using fixed %s: %s in %s", what, value, name)
    return (value, value)


def _box_size(ratio, min_area, max_area, width, height):
    """MXNet's proposal of a crop height and width for aspect ``ratio`` and area bounds;
    None when no size fits."""
    h = int(round(sqrt(min_area / ratio)))
    max_h = int(round(sqrt(max_area / ratio)))
    if round(max_h * ratio) > width:
        max_h = int((width + 0.4999999) / ratio)
    max_h = min(max_h, height)
    h = min(h, max_h)
    if h < max_h:
        h = random.randint(h, max_h)
    w = int(round(h * ratio))
    if w * h < min_area:
        h += 1
        w = int(round(h * ratio))
    if w * h > max_area:
        h -= 1
        w = int(round(h * ratio))
    if not (min_area <= w * h <= max_area and 0 <= w <= width and 0 <= h <= height):
        return None
    return h, w


class DetRandomCropAug(DetAugmenter):
    """A random crop (aspect in ``aspect_ratio_range``, area fraction in ``area_range``)
    that covers more than ``min_object_covered`` of each object it touches; objects left
    with less than ``min_eject_coverage`` of themselves are dropped. Up to
    ``max_attempts`` proposals, else no crop."""

    def __init__(self, min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                 area_range=(0.05, 1.0), min_eject_coverage=0.3, max_attempts=50):
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomCropAug")
        area_range = _as_range(area_range, "area range", "DetRandomCropAug")
        super().__init__(min_object_covered=min_object_covered,
                         aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         min_eject_coverage=min_eject_coverage, max_attempts=max_attempts)
        self.min_object_covered, self.min_eject_coverage = min_object_covered, min_eject_coverage
        self.max_attempts = max_attempts
        self.aspect_ratio_range, self.area_range = aspect_ratio_range, area_range
        self.enabled = False
        if area_range[1] <= 0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomCropAug due to invalid area_range: {area_range}")
        elif aspect_ratio_range[0] > aspect_ratio_range[1] or aspect_ratio_range[0] <= 0:
            warnings.warn(f"Skip DetRandomCropAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        crop = self._random_crop_proposal(label, src.shape[0], src.shape[1])
        if crop:
            x, y, w, h, label = crop
            src = fixed_crop(src, x, y, w, h, None)
        return src, label

    def _intersect(self, boxes, xmin, ymin, xmax, ymax):
        out = boxes.copy()
        out[:, 0] = np.maximum(boxes[:, 0], xmin)
        out[:, 1] = np.maximum(boxes[:, 1], ymin)
        out[:, 2] = np.minimum(boxes[:, 2], xmax)
        out[:, 3] = np.minimum(boxes[:, 3], ymax)
        out[(out[:, 0] >= out[:, 2]) | (out[:, 1] >= out[:, 3]), :] = 0
        return out

    def _check_satisfy_constraints(self, label, xmin, ymin, xmax, ymax, width, height):
        if (xmax - xmin) * (ymax - ymin) < 2:
            return False
        areas = _areas(label[:, 1:])
        valid = np.where(areas * width * height > 2)[0]
        if valid.size < 1:
            return False
        inside = self._intersect(label[valid, 1:], xmin / width, ymin / height,
                                 xmax / width, ymax / height)
        coverages = _areas(inside) / areas[valid]
        coverages = coverages[coverages > 0]
        return coverages.size > 0 and np.amin(coverages) > self.min_object_covered

    def _update_labels(self, label, crop_box, height, width):
        xmin, ymin = crop_box[0] / width, crop_box[1] / height
        w, h = crop_box[2] / width, crop_box[3] / height
        out = label.copy()
        out[:, (1, 3)] -= xmin
        out[:, (2, 4)] -= ymin
        out[:, (1, 3)] /= w
        out[:, (2, 4)] /= h
        out[:, 1:5] = np.clip(out[:, 1:5], 0, 1)
        coverage = _areas(out[:, 1:]) * w * h / _areas(label[:, 1:])
        valid = (out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2])
        valid &= coverage > self.min_eject_coverage
        return out[valid, :] if valid.any() else None

    def _random_crop_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            size = _box_size(ratio, min_area, max_area, width, height) if ratio > 0 else None
            if size is None:
                continue
            h, w = size
            y = random.randint(0, max(0, height - h))
            x = random.randint(0, max(0, width - w))
            if self._check_satisfy_constraints(label, x, y, x + w, y + h, width, height):
                new_label = self._update_labels(label, (x, y, w, h), height, width)
                if new_label is not None:
                    return x, y, w, h, new_label
        return ()


class DetRandomPadAug(DetAugmenter):
    """The image placed at random on a larger canvas of ``pad_val`` (aspect in
    ``aspect_ratio_range``, area ``area_range`` times the image's), boxes moved along."""

    def __init__(self, aspect_ratio_range=(0.75, 1.33), area_range=(1.0, 3.0),
                 max_attempts=50, pad_val=(128, 128, 128)):
        if not isinstance(pad_val, (list, tuple)):
            if not isinstance(pad_val, numbers.Number):
                raise TypeError(f"DetRandomPadAug: pad_val: expected a number or a colour, "
                                f"got {pad_val!r}")
        aspect_ratio_range = _as_range(aspect_ratio_range, "aspect ratio", "DetRandomPadAug")
        area_range = _as_range(area_range, "area range", "DetRandomPadAug")
        super().__init__(aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                         max_attempts=max_attempts, pad_val=pad_val)
        self.pad_val, self.max_attempts = pad_val, max_attempts
        self.aspect_ratio_range, self.area_range = aspect_ratio_range, area_range
        self.enabled = False
        if area_range[1] <= 1.0 or area_range[0] > area_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid parameters: {area_range}")
        elif aspect_ratio_range[0] <= 0 or aspect_ratio_range[0] > aspect_ratio_range[1]:
            warnings.warn(f"Skip DetRandomPadAug due to invalid aspect_ratio_range: "
                          f"{aspect_ratio_range}")
        else:
            self.enabled = True

    def __call__(self, src, label):
        height, width = src.shape[0], src.shape[1]
        pad = self._random_pad_proposal(label, height, width)
        if pad:
            x, y, w, h, label = pad
            values = self.pad_val if isinstance(self.pad_val, (list, tuple)) else [self.pad_val]
            src = copyMakeBorder(src, y, h - y - height, x, w - x - width, 16, values=values)
        return src, label

    def _update_labels(self, label, pad_box, height, width):
        out = label.copy()
        out[:, (1, 3)] = (out[:, (1, 3)] * width + pad_box[0]) / pad_box[2]
        out[:, (2, 4)] = (out[:, (2, 4)] * height + pad_box[1]) / pad_box[3]
        return out

    def _pad_size(self, ratio, min_area, max_area, width, height):
        h = int(round(sqrt(min_area / ratio)))
        max_h = int(round(sqrt(max_area / ratio)))
        if round(h * ratio) < width:
            h = int((width + 0.499999) / ratio)
        h = min(max(h, height), max_h)
        if h < max_h:
            h = random.randint(h, max_h)
        return h, int(round(h * ratio))

    def _random_pad_proposal(self, label, height, width):
        if not self.enabled or height <= 0 or width <= 0:
            return ()
        min_area = self.area_range[0] * height * width
        max_area = self.area_range[1] * height * width
        for _ in range(self.max_attempts):
            ratio = random.uniform(*self.aspect_ratio_range)
            if ratio <= 0:
                continue
            h, w = self._pad_size(ratio, min_area, max_area, width, height)
            if h - height < 2 or w - width < 2:
                continue            # marginal padding is not helpful
            y = random.randint(0, max(0, h - height))
            x = random.randint(0, max(0, w - width))
            return x, y, w, h, self._update_labels(label, (x, y, w, h), height, width)
        return ()


def CreateMultiRandCropAugmenter(min_object_covered=0.1, aspect_ratio_range=(0.75, 1.33),
                                 area_range=(0.05, 1.0), min_eject_coverage=0.3,
                                 max_attempts=50, skip_prob=0):
    """A ``DetRandomSelectAug`` over one ``DetRandomCropAug`` per set of parameters: a
    parameter given as a list gives one value per crop augmenter, a single value is
    shared."""
    params = [p if isinstance(p, list) else [p] for p in
              (min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
               max_attempts)]
    num = max(len(p) for p in params)
    for p in params:
        if len(p) not in (1, num):
            raise ValueError(f"CreateMultiRandCropAugmenter: parameter lists must hold 1 or "
                             f"{num} values, got {len(p)}")
    params = [p * num if len(p) == 1 else p for p in params]
    augs = [DetRandomCropAug(min_object_covered=moc, aspect_ratio_range=arr, area_range=ar,
                             min_eject_coverage=mec, max_attempts=ma)
            for moc, arr, ar, mec, ma in zip(*params)]
    return DetRandomSelectAug(augs, skip_prob=skip_prob)


def CreateDetAugmenter(data_shape, resize=0, rand_crop=0, rand_pad=0, rand_gray=0,
                       rand_mirror=False, mean=None, std=None, brightness=0, contrast=0,
                       saturation=0, pca_noise=0, hue=0, inter_method=2, min_object_covered=0.1,
                       aspect_ratio_range=(0.75, 1.33), area_range=(0.05, 3.0),
                       min_eject_coverage=0.3, max_attempts=50, pad_val=(127, 127, 127)):
    """MXNet's standard detection augmenter list for (C, H, W) ``data_shape``: optional
    short-edge resize, random crop (probability ``rand_crop``), mirror, random pad
    (probability ``rand_pad``), a forced resize to W x H, a cast to float32, colour
    jitters, lighting noise, random gray and normalisation."""
    auglist = [DetBorrowAug(ResizeAug(resize, inter_method))] if resize > 0 else []
    if rand_crop > 0:
        auglist.append(CreateMultiRandCropAugmenter(
            min_object_covered, aspect_ratio_range, area_range, min_eject_coverage,
            max_attempts, skip_prob=1 - rand_crop))
    if rand_mirror > 0:
        auglist.append(DetHorizontalFlipAug(0.5))
    if rand_pad > 0:
        pad_aug = DetRandomPadAug(aspect_ratio_range, (1.0, area_range[1]), max_attempts,
                                  pad_val)
        auglist.append(DetRandomSelectAug([pad_aug], 1 - rand_pad))
    auglist.append(DetBorrowAug(ForceResizeAug((data_shape[2], data_shape[1]), inter_method)))
    auglist.append(DetBorrowAug(CastAug()))
    auglist += [DetBorrowAug(aug) for aug in
                _color_augs(brightness, contrast, saturation, hue, pca_noise, rand_gray)]
    mean, std = _mean_std(mean, std, (np.ndarray,), np.array)
    if mean is not None or std is not None:
        auglist.append(DetBorrowAug(ColorNormalizeAug(mean, std)))
    return auglist
