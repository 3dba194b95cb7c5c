"""``ImageDetIter``: ``ImageIter`` for object detection. Each image's raw label is MXNet's
detection format: ``[header_width, object_width, header..., object 1..., object 2...]``,
each object ``[class, xmin, ymin, xmax, ymax, ...]`` (corners as fractions); batches carry
``(batch_size, max objects, object_width)`` labels padded with -1."""

from __future__ import annotations

import logging

import numpy as np

from .. import ndarray as nd
from ..io import DataBatch
from .augmenters import MEAN_RGB, STD_RGB
from .det_augmenters import CreateDetAugmenter
from .image_iter import ImageIter

__all__ = ["ImageDetIter"]


def parse_label(label):
    """The valid object rows (xmax > xmin, ymax > ymin) of a raw detection label."""
    raw = (label.asnumpy() if isinstance(label, nd.NDArray) else np.asarray(label)).ravel()
    if raw.size < 7:
        raise RuntimeError(f"Label shape is invalid: {raw.shape}")
    header_width, obj_width = int(raw[0]), int(raw[1])
    if (raw.size - header_width) % obj_width != 0:
        raise RuntimeError(f"Label shape {raw.shape} inconsistent with annotation width "
                           f"{obj_width}.")
    out = np.reshape(raw[header_width:], (-1, obj_width))
    valid = np.where((out[:, 3] > out[:, 1]) & (out[:, 4] > out[:, 2]))[0]
    if valid.size < 1:
        raise RuntimeError("Encounter sample with no valid label.")
    return out[valid, :]


def _rectangle(image, x1, y1, x2, y2, color, thickness):
    """A ``thickness``-pixel box outline on (H, W, 3) ``image``, in place."""
    height, width = image.shape[:2]
    half = max(thickness, 1) // 2
    for ya, yb, xa, xb in ((y1 - half, y1 + half, x1, x2), (y2 - half, y2 + half, x1, x2),
                           (y1, y2, x1 - half, x1 + half), (y1, y2, x2 - half, x2 + half)):
        image[max(ya, 0):min(yb + 1, height), max(xa, 0):min(xb + 1, width)] = color


class ImageDetIter(ImageIter):
    """Detection batches: images as ``ImageIter``, labels ``(batch_size, max objects,
    object_width)`` padded with -1 (the object count is the largest in the data set, found
    by reading every label once). ``aug_list`` defaults to ``CreateDetAugmenter(data_shape,
    **kwargs)``."""

    def __init__(self, batch_size, data_shape, path_imgrec=None, path_imglist=None,
                 path_root=None, path_imgidx=None, shuffle=False, part_index=0, num_parts=1,
                 aug_list=None, imglist=None, data_name="data", label_name="label",
                 last_batch_handle="pad", **kwargs):
        super().__init__(batch_size=batch_size, data_shape=data_shape, path_imgrec=path_imgrec,
                         path_imglist=path_imglist, path_root=path_root,
                         path_imgidx=path_imgidx, shuffle=shuffle, part_index=part_index,
                         num_parts=num_parts, aug_list=[], imglist=imglist,
                         data_name=data_name, label_name=label_name,
                         last_batch_handle=last_batch_handle)
        self.auglist = CreateDetAugmenter(data_shape, **kwargs) if aug_list is None else aug_list
        self.label_shape = self._estimate_label_shape()
        self.provide_label = [(label_name, (self.batch_size,) + self.label_shape)]

    def _check_valid_label(self, label):
        if len(label.shape) != 2 or label.shape[1] < 5:
            raise RuntimeError(f"Label with shape (1+, 5+) required, {label} received.")
        valid = (label[:, 0] >= 0) & (label[:, 3] > label[:, 1]) & (label[:, 4] > label[:, 2])
        if not valid.any():
            raise RuntimeError("Invalid label occurs.")

    def _estimate_label_shape(self):
        """(most objects in one image, object width), over every label."""
        max_count, width = 0, None
        self.reset()
        try:
            while True:
                label = self._parse_label(self.next_sample()[0])
                max_count, width = max(max_count, label.shape[0]), label.shape[1]
        except StopIteration:
            pass
        self.reset()
        if width is None:
            raise RuntimeError("ImageDetIter: the data set holds no image")
        return (max_count, width)

    def _parse_label(self, label):
        return parse_label(label)

    def reshape(self, data_shape=None, label_shape=None):
        """Change the data shape (C, H, W) and/or the label shape (objects, width)."""
        if data_shape is not None:
            self.check_data_shape(data_shape)
            self.provide_data = [(self.provide_data[0][0], (self.batch_size,) + tuple(data_shape))]
            self.data_shape = tuple(data_shape)
        if label_shape is not None:
            self.check_label_shape(label_shape)
            self.provide_label = [(self.provide_label[0][0],
                                   (self.batch_size,) + tuple(label_shape))]
            self.label_shape = tuple(label_shape)

    def check_label_shape(self, label_shape):
        """A new label shape keeps the object width and never holds fewer objects."""
        if len(label_shape) != 2:
            raise ValueError(f"label_shape should have length 2, got {label_shape}")
        if label_shape[0] < self.label_shape[0]:
            raise ValueError(f"Attempts to reduce label count from {self.label_shape[0]} to "
                             f"{label_shape[0]}, not allowed.")
        if label_shape[1] != self.provide_label[0][1][2]:
            raise ValueError(f"label_shape object width inconsistent: "
                             f"{self.provide_label[0][1][2]} vs {label_shape[1]}.")

    def _sample(self):
        """The next (image, parsed label) that decodes and parses."""
        while True:
            label, s = self.next_sample()
            data = self.imdecode(s)
            try:
                self.check_valid_image([data])
                return data, self._parse_label(label)
            except RuntimeError as exc:
                logging.debug("Invalid image, skipping:  %s", exc)

    def _batchify(self, batch_data, batch_label, start=0):
        i = start
        try:
            while i < self.batch_size:
                data, label = self._sample()
                try:
                    data, label = self.augmentation_transform(data, label)
                    self._check_valid_label(label)
                except RuntimeError as exc:
                    logging.debug("Invalid image, skipping:  %s", exc)
                    continue
                batch_data[i] = self.postprocess_data(data)
                rows = np.full(batch_label.shape[1:], -1, np.float32)
                rows[:label.shape[0]] = label
                batch_label[i] = rows
                i += 1
        except StopIteration:
            if not i:
                raise
        return i

    def _new_batch(self):
        batch_data, batch_label = super()._new_batch()
        batch_label[:] = -1
        return batch_data, batch_label

    def augmentation_transform(self, data, label):  # pylint: disable=arguments-differ
        """(``data``, ``label``) through every detection augmenter."""
        for aug in self.auglist:
            data, label = aug(data, label)
        return data, label

    def draw_next(self, color=None, thickness=2, mean=None, std=None, clip=True,
                  waitKey=None, window_name="draw_next", id2labels=None):
        """Yield the next augmented images as uint8 BGR arrays with their boxes drawn
        (``mean``/``std`` undone first; True: ImageNet's). Boxes are drawn here with numpy;
        class names (``id2labels``) and showing each in a window (``waitKey``) need cv2."""
        cv2 = _cv2_or_none(id2labels is not None or waitKey is not None)
        while True:
            try:
                data, label = self._sample()
            except StopIteration:
                return
            data, label = self.augmentation_transform(data, label)
            image = _to_bgr_uint8(data.asnumpy().astype(np.float64), mean, std, clip)
            height, width = image.shape[:2]
            box_color = None if not color else tuple(color)[::-1]
            for row in label:
                x1 = int(row[1] * width)
                if x1 < 0:
                    continue
                bc = np.random.rand(3) * 255 if not box_color else box_color
                y1, x2, y2 = int(row[2] * height), int(row[3] * width), int(row[4] * height)
                _rectangle(image, x1, y1, x2, y2, bc, thickness)
                if cv2 is not None and id2labels is not None and int(row[0]) in id2labels:
                    _put_text(cv2, image, id2labels[int(row[0])], x1, y1)
            if cv2 is not None and waitKey is not None:
                cv2.imshow(window_name, image)
                cv2.waitKey(waitKey)
            yield image

    def sync_label_shape(self, it, verbose=False):
        """Give this iterator and ``it`` (another ImageDetIter) the larger object count of
        the two; returns ``it``."""
        if not isinstance(it, ImageDetIter):
            raise TypeError(f"sync_label_shape: expected an ImageDetIter, got {type(it).__name__}")
        mine, theirs = self.label_shape, it.label_shape
        if mine[1] != theirs[1]:
            raise ValueError(f"sync_label_shape: object width mismatch: {mine[1]} vs {theirs[1]}")
        max_count = max(mine[0], theirs[0])
        if max_count > mine[0]:
            self.reshape(None, (max_count, mine[1]))
        if max_count > theirs[0]:
            it.reshape(None, (max_count, theirs[1]))
        if verbose and max_count > min(mine[0], theirs[0]):
            logging.info("Resized label_shape to (%d, %d).", max_count, mine[1])
        return it


def _cv2_or_none(wanted):
    if not wanted:
        return None
    try:
        import cv2
    except ImportError:
        logging.warning("draw_next: cv2 is not installed: class names and windows skipped")
        return None
    return cv2


def _put_text(cv2, image, text, x1, y1):
    font = cv2.FONT_HERSHEY_SIMPLEX
    text_height = cv2.getTextSize(text, font, 0.5, 2)[0][1]
    cv2.putText(image, text, (x1 + 5, y1 + text_height + 5), font, 0.5, (255, 255, 255), 2)


def _to_bgr_uint8(image, mean, std, clip):
    """An augmented float RGB image back to uint8 BGR, normalisation undone."""
    if std is not None:
        image *= np.asarray(STD_RGB if std is True else std)
    if mean is not None:
        image += np.asarray(MEAN_RGB if mean is True else mean)
    image = image[:, :, ::-1]
    if clip:
        image = np.clip(image, 0, 255)
    return np.ascontiguousarray(image.astype(np.uint8))
