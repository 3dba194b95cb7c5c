"""``DataLoader``: mini-batches of a dataset, read in this process or by workers
(``_workers``: processes handing batches back through shared memory, or threads)."""

from __future__ import annotations

from collections import deque
from multiprocessing.reduction import ForkingPickler

import numpy as np

from ... import ndarray as nd
from ..._runtime.context import cpu_pinned
from . import sampler as _sampler
from ._workers import ProcessPool, ThreadPool

__all__ = ["DataLoader", "ForkingPickler", "default_batchify_fn", "default_mp_batchify_fn"]

# ``ForkingPickler`` is multiprocessing's, as in MXNet; code that dumps batches with it
# (GluonNLP's worker function) gets NDArrays pickled through their MXNet-format state.


def default_batchify_fn(data):
    """Samples into a batch: NDArrays stacked, tuples as a list of batched fields, anything
    else (numbers, numpy arrays, lists) through ``numpy.asarray`` into an NDArray of its
    dtype."""
    first = data[0]
    if isinstance(first, nd.NDArray):
        return nd.stack(*data)
    if isinstance(first, tuple):
        return [default_batchify_fn(field) for field in zip(*data)]
    arr = np.asarray(data)
    return nd.array(arr, dtype=arr.dtype)


# MXNet's batchify for worker processes (it stacks into shared memory); mxnext's workers
# stack into shared memory with either
default_mp_batchify_fn = default_batchify_fn


def _as_in_context(data, ctx):
    if isinstance(data, nd.NDArray):
        return data.as_in_context(ctx)
    if isinstance(data, (list, tuple)):
        return [_as_in_context(d, ctx) for d in data]
    return data


class _MultiWorkerIter:
    """One pass over the batches, ``prefetch`` of them handed to the workers ahead."""

    def __init__(self, pool, batch_sampler, prefetch, timeout, pin_ctx):
        self._pool = pool
        self._batches = iter(batch_sampler)
        self._length = len(batch_sampler)
        self._tickets = deque()
        self._timeout = timeout
        self._pin_ctx = pin_ctx
        for _ in range(prefetch):
            self._push()

    def _push(self):
        indices = next(self._batches, None)
        if indices is not None:
            self._tickets.append(self._pool.submit(indices))

    def __len__(self):
        return self._length

    def __iter__(self):
        return self

    def __next__(self):
        self._push()
        if not self._tickets:
            raise StopIteration
        try:
            batch = self._pool.result(self._tickets.popleft(), self._timeout)
        except BaseException:
            self.close()
            raise
        if self._pin_ctx is not None:
            batch = _as_in_context(batch, self._pin_ctx)
        return batch

    next = __next__

    def close(self, wait=False):
        """Drops the batches prefetched and not taken (``wait``: until their workers are
        done with them, so that nothing of them is left)."""
        if self._tickets:
            self._pool.cancel(self._tickets)
            self._tickets.clear()
        if wait:
            self._pool.drain(self._timeout)

    def __del__(self):
        self.close()


class DataLoader:
    """Mini-batches of ``dataset`` (a Dataset, or an array or list used as one), as MXNet
    1.9's ``gluon.data.DataLoader``.

    Batches are drawn by ``batch_sampler``, or by a ``BatchSampler`` of ``batch_size`` over
    ``sampler`` (or a sequential or, with ``shuffle``, random one) keeping, discarding or
    rolling over an incomplete last batch (``last_batch``). ``batchify_fn`` makes a batch
    of a list of samples (default: ``default_batchify_fn``).

    With ``num_workers > 0`` that many processes (made when the loader is, with the default
    start method) read and batch samples, ``prefetch`` batches (default ``2 *
    num_workers``) ahead, and hand each batch back through shared memory (never pickled),
    as NDArrays (numpy arrays a ``batchify_fn`` returns stay numpy). ``thread_pool`` uses
    threads of this process instead. A worker's error is raised here, naming the worker; a
    batch later than ``timeout`` seconds raises ``multiprocessing.TimeoutError``. Workers
    stop when neither the loader nor an iterator of it is left, or at exit.

    ``pin_memory`` puts batches in ``cpu_pinned(pin_device_id)`` memory. Each pass starts
    when it is iterated; ``auto_reload`` (or ``refresh()``) starts the next pass's prefetch
    as soon as a pass ends (or at once).
    """

    def __init__(self, dataset, batch_size=None, shuffle=False, sampler=None,
                 last_batch=None, batch_sampler=None, batchify_fn=None,
                 num_workers=0, pin_memory=False, pin_device_id=0,
                 prefetch=None, thread_pool=False, timeout=120, auto_reload=False):
        if timeout <= 0:
            raise ValueError(f"DataLoader: timeout must be positive, got {timeout}")
        if batch_sampler is None:
            if batch_size is None:
                raise ValueError("DataLoader: batch_size must be specified unless "
                                 "batch_sampler is specified")
            _sampler.check_batch_size("DataLoader", batch_size)
            if sampler is None:
                sampler = (_sampler.RandomSampler if shuffle
                           else _sampler.SequentialSampler)(len(dataset))
            elif shuffle:
                raise ValueError("DataLoader: shuffle must not be specified if sampler is "
                                 "specified")
            batch_sampler = _sampler.BatchSampler(sampler, batch_size, last_batch or "keep")
        elif batch_size is not None or shuffle or sampler is not None or \
                last_batch is not None:
            raise ValueError("DataLoader: batch_size, shuffle, sampler and last_batch must "
                             "not be specified if batch_sampler is specified.")
        self._dataset = dataset
        self._batch_sampler = batch_sampler
        self._num_workers = max(0, num_workers)
        self._prefetch = max(0, int(prefetch) if prefetch is not None
                             else 2 * self._num_workers)
        self._thread_pool = thread_pool
        self._timeout = timeout
        self._pin_ctx = cpu_pinned(pin_device_id) if pin_memory else None
        self._user_batchify = batchify_fn
        self._batchify_fn = batchify_fn or default_batchify_fn
        self._pool = None
        if self._num_workers:
            self._start_pool()
        self.auto_reload = auto_reload
        self._iter = None
        if auto_reload:
            self.refresh()

    def _start_pool(self):
        if self._thread_pool:
            self._pool = ThreadPool(self._num_workers, self._dataset, self._batchify_fn)
        else:
            user = self._user_batchify
            own = user is None or user is default_batchify_fn
            self._pool = ProcessPool(self._num_workers, self._dataset, None if own else user)

    def __iter__(self):
        if self._iter is None:
            self.refresh()
        it, self._iter = self._iter, None
        try:
            yield from it
        finally:
            if isinstance(it, _MultiWorkerIter):
                it.close(wait=True)
        if self._iter is None and self.auto_reload:
            self.refresh()

    def _same_process_iter(self):
        dataset, batchify, pin_ctx = self._dataset, self._batchify_fn, self._pin_ctx
        for indices in self._batch_sampler:
            batch = batchify([dataset[i] for i in indices])
            yield batch if pin_ctx is None else _as_in_context(batch, pin_ctx)

    def refresh(self):
        """Starts the next pass now (with workers: its prefetch)."""
        if not self._num_workers:
            self._iter = self._same_process_iter()
            return
        if self._pool.broken is not None:
            self._start_pool()
        self._iter = _MultiWorkerIter(self._pool, self._batch_sampler, self._prefetch,
                                      self._timeout, self._pin_ctx)

    def clean(self):
        """Drops a pass started ahead, so the next starts when iterated."""
        if isinstance(self._iter, _MultiWorkerIter):
            self._iter.close()
        self._iter = None

    def __len__(self):
        return len(self._batch_sampler)

    def __del__(self):
        pool = getattr(self, "_pool", None)
        if pool is not None:
            self.clean()
