"""``ImageFolderDataset``: images in one sub-folder per class (MXNet 1.9's layout and
labels), read with ``mx.image.imread``."""

from __future__ import annotations

import os
import warnings

from ....image import imread
from ..dataset import Dataset

__all__ = ["ImageFolderDataset"]


class ImageFolderDataset(Dataset):
    """Images under ``root/<class>/<file>`` (``.jpg``, ``.jpeg``, ``.png``): samples (a uint8
    NDArray (H, W, 3), or (H, W, 1) when ``flag`` is 0; the class's index). ``synsets`` are
    the class folders sorted, ``items`` the (filename, label) pairs.
    ``transform(data, label)`` is applied to each sample."""

    _exts = (".jpg", ".jpeg", ".png")

    def __init__(self, root, flag=1, transform=None):
        self._root = os.path.expanduser(root)
        self._flag = flag
        self._transform = transform
        self.synsets, self.items = [], []
        for folder in sorted(os.listdir(self._root)):
            path = os.path.join(self._root, folder)
            if not os.path.isdir(path):
                warnings.warn(f"Ignoring {path}, which is not a directory.", stacklevel=2)
                continue
            label = len(self.synsets)
            self.synsets.append(folder)
            for name in sorted(os.listdir(path)):
                filename = os.path.join(path, name)
                ext = os.path.splitext(name)[1]
                if ext.lower() not in self._exts:
                    warnings.warn(f"Ignoring {filename} of type {ext}. Only support "
                                  f"{', '.join(self._exts)}", stacklevel=2)
                    continue
                self.items.append((filename, label))

    def __getitem__(self, idx):
        filename, label = self.items[idx]
        img = imread(filename, self._flag)
        if self._transform is not None:
            return self._transform(img, label)
        return img, label

    def __len__(self):
        return len(self.items)
