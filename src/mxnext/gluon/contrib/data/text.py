"""WikiText-2 and WikiText-103 (MXNet 1.9's ``gluon.contrib.data.text``) read from their
local token files (``wiki.train.tokens``, ``wiki.valid.tokens``, ``wiki.test.tokens``, or
the archive ``wikitext-2-v1.zip`` / ``wikitext-103-v1.zip`` holding them) in ``root``.
Nothing is downloaded."""

from __future__ import annotations

import os
import zipfile

import numpy as np

from .... import ndarray as nd
from ...._atomic_write import AtomicFile
from ...._runtime.base import MXNetError, data_dir
from ....contrib import text
from ...data.dataset import _DownloadedDataset

__all__ = ["WikiText2", "WikiText103"]

EOS = "<eos>"
_FILES = {"train": "wiki.train.tokens", "validation": "wiki.valid.tokens",
          "test": "wiki.test.tokens"}


class _WikiText(_DownloadedDataset):
    """Samples (``seq_len`` token indices, the same shifted by one token): the segment's
    lines, each ended by ``<eos>``, as one stream cut into rows (the tail that fills no row
    is dropped). Without ``vocab`` the vocabulary is built from this segment."""

    _name = _archive = None

    def __init__(self, root=None, segment="train", vocab=None, seq_len=35):
        if segment not in _FILES:
            raise ValueError(f"{type(self).__name__}: segment: expected one of "
                             f"{sorted(_FILES)}, got {segment!r}")
        self._segment, self._seq_len = segment, seq_len
        self._vocab, self._counter = vocab, None
        super().__init__(root or os.path.join(data_dir(), "datasets", self._name), None)

    @property
    def vocabulary(self):
        return self._vocab

    @property
    def frequencies(self):
        return self._counter

    def _path(self):
        name = _FILES[self._segment]
        path = os.path.join(self._root, name)
        archive = os.path.join(self._root, self._archive)
        if not os.path.exists(path) and os.path.exists(archive):
            with zipfile.ZipFile(archive) as zf:
                member = next((m for m in zf.namelist() if os.path.basename(m) == name), None)
                if member is not None:
                    with AtomicFile(path) as out:
                        out.write(zf.read(member))
        if not os.path.exists(path):
            raise MXNetError(f"{type(self).__name__}: {name} not found in {self._root} (nor "
                             f"{self._archive} holding it); mxnext does not download "
                             f"datasets: put the file there, or pass root= its folder")
        return path

    def _get_data(self):
        with open(self._path(), encoding="utf8") as f:
            content = f.read()
        self._counter = text.utils.count_tokens_from_str(content)
        if self._vocab is None:
            self._vocab = text.Vocabulary(counter=self._counter, reserved_tokens=[EOS])
        tokens = [tok for line in content.splitlines() if line.split()
                  for tok in line.split() + [EOS]]
        ids = np.array(self._vocab.to_indices(tokens), dtype=np.int32)
        rows = (len(ids) - 1) // self._seq_len
        if rows == 0:
            raise MXNetError(f"{type(self).__name__}: {self._path()} holds {len(ids)} tokens, "
                             f"fewer than seq_len+1 = {self._seq_len + 1}")
        used = rows * self._seq_len
        self._data = nd.array(ids[:used].reshape(rows, self._seq_len), dtype=np.int32)
        self._label = nd.array(ids[1:used + 1].reshape(rows, self._seq_len), dtype=np.int32)


class WikiText2(_WikiText):
    """WikiText-2 (default root ``$MXNET_HOME/datasets/wikitext-2``)."""

    _name, _archive = "wikitext-2", "wikitext-2-v1.zip"


class WikiText103(_WikiText):
    """WikiText-103 (default root ``$MXNET_HOME/datasets/wikitext-103``)."""

    _name, _archive = "wikitext-103", "wikitext-103-v1.zip"
