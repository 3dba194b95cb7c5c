"""``ImageRecordDataset``: encoded images packed in a RecordIO file (``im2rec``'s output,
or ``recordio.pack``), decoded on access as MXNet 1.9 does."""

from __future__ import annotations

from .... import recordio
from ....image import imdecode
from ..dataset import RecordFileDataset

__all__ = ["ImageRecordDataset"]


class ImageRecordDataset(RecordFileDataset):
    """Samples (the decoded uint8 (H, W, 3) NDArray, or (H, W, 1) when ``flag`` is 0; the
    record header's label: a float, or a float32 array for multi-value labels) of the
    records in ``filename`` (its ``.idx`` index beside it).
    ``transform(data, label)`` is applied to each sample."""

    def __init__(self, filename, flag=1, transform=None):
        super().__init__(filename)
        self._flag = flag
        self._transform = transform

    def __getitem__(self, idx):
        header, payload = recordio.unpack(super().__getitem__(idx))
        img = imdecode(payload, self._flag)
        if self._transform is not None:
            return self._transform(img, header.label)
        return img, header.label
