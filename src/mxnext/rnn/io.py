"""MXNet's ``mx.rnn.io``: ``encode_sentences`` (tokens to indices) and
``BucketSentenceIter`` (encoded sentences in batches of equal padded length, for
``BucketingModule``)."""

from __future__ import annotations

import bisect
import logging
import random

import numpy as np

from .. import ndarray as nd
from .._runtime.base import MXNetError
from ..io import DataBatch, DataDesc, DataIter

__all__ = ["encode_sentences", "BucketSentenceIter"]


def encode_sentences(sentences, vocab=None, invalid_label=-1, invalid_key="\n",
                     start_label=0, unknown_token=None):
    """``(encoded sentences, vocab)``: each token of each sentence (a list of str) replaced
    by its index in ``vocab`` (str -> int).

    With ``vocab`` None a vocabulary is built, ``invalid_key`` mapping to ``invalid_label``
    and new tokens numbered from ``start_label``, skipping ``invalid_label`` and indices in
    use. With a ``vocab`` given, a token not in it is an error, unless ``unknown_token`` is
    set: such tokens then map to ``unknown_token``, which is added if missing. ``vocab`` is
    updated in place.
    """
    new_vocab = vocab is None
    if new_vocab:
        vocab = {invalid_key: invalid_label}
    used = set(vocab.values())
    next_index = start_label
    encoded = []
    for sentence in sentences:
        codes = []
        for word in sentence:
            if word not in vocab:
                if unknown_token:
                    word = unknown_token
                elif not new_vocab:
                    raise MXNetError(f"encode_sentences: token {word!r} is not in the "
                                     f"vocabulary and no unknown_token is set")
            if word not in vocab:
                while next_index in used or next_index == invalid_label:
                    next_index += 1
                vocab[word] = next_index
                used.add(next_index)
            codes.append(vocab[word])
        encoded.append(codes)
    return encoded, vocab


class BucketSentenceIter(DataIter):
    """Batches of encoded ``sentences`` (lists of int) for language models: each sentence
    goes to the smallest bucket (a length) that holds it, padded with ``invalid_label``;
    the label is the sentence shifted left by one. A batch comes from one bucket, with
    that bucket's length as ``bucket_key``.

    ``buckets`` default to every sentence length at least ``batch_size`` sentences have;
    sentences longer than the largest bucket are dropped. ``layout`` is ``'NT'`` (batch,
    time) or ``'TN'``. Each ``reset`` shuffles the batches and the sentences in each bucket
    (Python's and numpy's global random state, as MXNet).
    """

    def __init__(self, sentences, batch_size, buckets=None, invalid_label=-1,
                 data_name="data", label_name="softmax_label", dtype="float32",
                 layout="NT"):
        super().__init__(batch_size)
        if layout not in ("NT", "TN"):
            raise ValueError(f"BucketSentenceIter: layout must be 'NT' (batch major) or 'TN' "
                             f"(time major), got {layout!r}")
        if not buckets:
            counts = np.bincount([len(s) for s in sentences]) if sentences else []
            buckets = [n for n, count in enumerate(counts) if count >= batch_size]
        buckets = sorted(buckets)
        rows = [[] for _ in buckets]
        dropped = 0
        for sentence in sentences:
            b = bisect.bisect_left(buckets, len(sentence))
            if b == len(buckets):
                dropped += 1
                continue
            row = np.full(buckets[b], invalid_label, dtype=dtype)
            row[:len(sentence)] = sentence
            rows[b].append(row)
        if dropped:
            logging.warning("BucketSentenceIter: discarded %d sentences longer than the "
                            "largest bucket (%d)", dropped, buckets[-1])
        kept = [b for b, r in enumerate(rows) if r]
        if not kept:
            raise MXNetError(f"BucketSentenceIter: no sentence fits the buckets {buckets} "
                             f"({len(sentences)} sentences, batch_size {batch_size})")
        self.buckets = [buckets[b] for b in kept]
        self.data = [np.asarray(rows[b], dtype=dtype) for b in kept]
        self.batch_size = batch_size
        self.invalid_label = invalid_label
        self.data_name, self.label_name = data_name, label_name
        self.dtype, self.layout = dtype, layout
        self.major_axis = layout.find("N")
        self.default_bucket_key = max(self.buckets)
        self.provide_data = [self._desc(data_name, self.default_bucket_key)]
        self.provide_label = [self._desc(label_name, self.default_bucket_key)]
        self.idx = [(b, start) for b, rows_b in enumerate(self.data)
                    for start in range(0, len(rows_b) - batch_size + 1, batch_size)]
        self.curr_idx = 0
        self.nddata, self.ndlabel = [], []
        self.reset()

    def _desc(self, name, length):
        shape = (self.batch_size, length) if self.major_axis == 0 else (length, self.batch_size)
        return DataDesc(name=name, shape=shape, layout=self.layout)

    def reset(self):
        self.curr_idx = 0
        random.shuffle(self.idx)
        for rows in self.data:
            np.random.shuffle(rows)
        self.nddata, self.ndlabel = [], []
        for rows in self.data:
            label = np.empty_like(rows)
            label[:, :-1] = rows[:, 1:]
            label[:, -1] = self.invalid_label
            self.nddata.append(nd.array(rows, dtype=self.dtype))
            self.ndlabel.append(nd.array(label, dtype=self.dtype))

    def next(self):
        if self.curr_idx == len(self.idx):
            raise StopIteration
        b, start = self.idx[self.curr_idx]
        self.curr_idx += 1
        data = self.nddata[b][start:start + self.batch_size]
        label = self.ndlabel[b][start:start + self.batch_size]
        if self.major_axis == 1:
            data, label = data.T, label.T
        length = self.buckets[b]
        return DataBatch([data], [label], pad=0, bucket_key=length,
                         provide_data=[self._desc(self.data_name, length)],
                         provide_label=[self._desc(self.label_name, length)])
