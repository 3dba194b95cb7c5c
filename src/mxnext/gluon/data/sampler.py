"""Samplers: which sample indices a dataset is read at, and in which batches (MXNet 1.9's
``mx.gluon.data`` samplers, with ``IntervalSampler`` from its ``gluon.contrib.data``)."""

from __future__ import annotations

import operator

import numpy as np

from ..._runtime.base import ParamError

__all__ = ["Sampler", "SequentialSampler", "RandomSampler", "FilterSampler", "BatchSampler",
           "IntervalSampler"]

LAST_BATCH = ("keep", "discard", "rollover")


class Sampler:
    """Base class: subclasses define ``__iter__`` (the indices) and ``__len__``."""

    def __iter__(self):
        raise NotImplementedError

    def __len__(self):
        raise NotImplementedError


class SequentialSampler(Sampler):
    """The indices ``start, start+1, ..., start+length-1``."""

    def __init__(self, length, start=0):
        self._length = length
        self._start = start

    def __iter__(self):
        return iter(range(self._start, self._start + self._length))

    def __len__(self):
        return self._length


class RandomSampler(Sampler):
    """The indices ``0 ... length-1`` in a new random order each pass (numpy's global RNG,
    as MXNet)."""

    def __init__(self, length):
        self._length = length

    def __iter__(self):
        indices = np.arange(self._length)
        np.random.shuffle(indices)
        return iter(indices.tolist())

    def __len__(self):
        return self._length


class FilterSampler(Sampler):
    """The indices of the samples of ``dataset`` for which ``fn(sample)`` is true (read once,
    at construction)."""

    def __init__(self, fn, dataset):
        self._fn = fn
        self._dataset = dataset
        self._indices = [i for i in range(len(dataset)) if fn(dataset[i])]

    def __iter__(self):
        return iter(self._indices)

    def __len__(self):
        return len(self._indices)


def check_last_batch(where, last_batch):
    if last_batch not in LAST_BATCH:
        raise ValueError(f"{where}: last_batch must be one of 'keep', 'discard', or "
                         f"'rollover', but got {last_batch!r}")


def check_batch_size(where, batch_size):
    """``batch_size`` as an int, or ParamError unless it is a positive integer (MXNet makes
    one batch of everything of 0 or less)."""
    try:
        size = operator.index(batch_size)
    except TypeError:
        size = None
    if isinstance(batch_size, bool) or size is None or size < 1:
        raise ParamError(f"{where}: batch_size must be a positive integer, got {batch_size!r}")
    return size


class BatchSampler(Sampler):
    """Lists of ``batch_size`` indices drawn from ``sampler``. An incomplete last batch is
    kept (``'keep'``), dropped (``'discard'``) or put in front of the next pass
    (``'rollover'``)."""

    def __init__(self, sampler, batch_size, last_batch="keep"):
        check_last_batch("BatchSampler", last_batch)
        self._sampler = sampler
        self._batch_size = check_batch_size("BatchSampler", batch_size)
        self._last_batch = last_batch
        self._prev = []

    def __iter__(self):
        batch, self._prev = self._prev, []
        size = self._batch_size
        for i in self._sampler:
            batch.append(i)
            if len(batch) == size:
                yield batch
                batch = []
        if batch:
            if self._last_batch == "keep":
                yield batch
            elif self._last_batch == "rollover":
                self._prev = batch

    def __len__(self):
        if self._last_batch == "keep":
            return (len(self._sampler) + self._batch_size - 1) // self._batch_size
        if self._last_batch == "discard":
            return len(self._sampler) // self._batch_size
        return (len(self._prev) + len(self._sampler)) // self._batch_size


class IntervalSampler(Sampler):
    """``0, interval, 2*interval, ...`` below ``length``, then (``rollover``) the same from 1,
    2, ... up to ``interval-1``: every index once, in strides."""

    def __init__(self, length, interval, rollover=True):
        if not 0 < interval <= length:
            raise ValueError(f"IntervalSampler: interval must be in (0, length={length}], "
                             f"got {interval}")
        self._length = length
        self._interval = interval
        self._rollover = rollover

    def __iter__(self):
        starts = range(self._interval) if self._rollover else range(1)
        for start in starts:
            yield from range(start, self._length, self._interval)

    def __len__(self):
        if self._rollover:
            return self._length
        return (self._length + self._interval - 1) // self._interval
