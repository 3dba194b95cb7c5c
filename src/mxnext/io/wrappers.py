"""Iterators over other iterators: ``ResizeIter`` and the threaded ``PrefetchingIter``."""

import threading

from .._runtime.base import MXNetError
from .batch import DataBatch, DataDesc, DataIter

__all__ = ["ResizeIter", "PrefetchingIter"]


class _CurrentBatch(DataIter):
    """The getters of an iterator that keeps its latest batch in ``current_batch``."""

    def getdata(self):
        return self.current_batch.data

    def getlabel(self):
        return self.current_batch.label

    def getindex(self):
        return self.current_batch.index

    def getpad(self):
        return self.current_batch.pad


class ResizeIter(_CurrentBatch):
    """``size`` batches per epoch from ``data_iter``, restarting it whenever it runs out.

    ``reset_internal``: whether ``reset`` also resets ``data_iter`` (else the next epoch
    continues where this one stopped).
    """

    def __init__(self, data_iter, size, reset_internal=True):
        super().__init__(data_iter.batch_size)
        self.data_iter = data_iter
        self.size = size
        self.reset_internal = reset_internal
        self.cur = 0
        self.current_batch = None
        self.provide_data = data_iter.provide_data
        self.provide_label = data_iter.provide_label
        if hasattr(data_iter, "default_bucket_key"):
            self.default_bucket_key = data_iter.default_bucket_key

    def reset(self):
        self.cur = 0
        if self.reset_internal:
            self.data_iter.reset()

    def iter_next(self):
        if self.cur == self.size:
            return False
        try:
            self.current_batch = self.data_iter.next()
        except StopIteration:
            self.data_iter.reset()
            self.current_batch = self.data_iter.next()
        self.cur += 1
        return True


class _Fetcher:
    """One background thread that reads batches of one iterator, one ahead of the consumer.

    The thread holds this object only (never the ``PrefetchingIter``), so an abandoned
    ``PrefetchingIter`` is collected and its ``__del__`` stops the threads.
    """

    def __init__(self, data_iter):
        self.iter = data_iter
        self.batch = None          # the batch read ahead; None at the end of the data
        self.error = None          # an exception the iterator raised, re-raised by take()
        self.ready = threading.Event()
        self.wanted = threading.Event()
        self.running = True
        self.wanted.set()
        self.thread = threading.Thread(target=self._run, daemon=True,
                                       name=f"PrefetchingIter({type(data_iter).__name__})")
        self.thread.start()

    def _run(self):
        while True:
            self.wanted.wait()
            if not self.running:
                return
            self.wanted.clear()
            try:
                self.batch = self.iter.next()
            except StopIteration:
                self.batch = None
            except BaseException as exc:  # handed to the consumer thread by take()
                self.batch, self.error = None, exc
            self.ready.set()

    def wait(self):
        self.ready.wait()
        if self.error is not None:
            error, self.error = self.error, None
            raise MXNetError(f"PrefetchingIter: {type(self.iter).__name__}.next() failed in the "
                             f"prefetch thread: {error}") from error

    def request(self):
        """Let the thread read the next batch (after the current one was taken)."""
        self.ready.clear()
        self.wanted.set()

    def stop(self):
        self.running = False
        self.wanted.set()
        if self.thread is not threading.current_thread():
            self.thread.join()


class PrefetchingIter(_CurrentBatch):
    """Reads the next batch of each of ``iters`` in a background thread while the current
    one is used, and joins the batches of all ``iters`` into one.

    ``rename_data`` / ``rename_label``: one ``{old_name: new_name}`` dict per iterator.
    """

    def __init__(self, iters, rename_data=None, rename_label=None):
        super().__init__()
        if not isinstance(iters, list):
            iters = [iters]
        if not iters:
            raise ValueError("PrefetchingIter: iters must hold at least one DataIter, got none")
        self.iters = iters
        self.n_iter = len(iters)
        self.rename_data = rename_data
        self.rename_label = rename_label
        self.batch_size = self.provide_data[0][1][0]
        self.current_batch = None
        self._fetchers = [_Fetcher(it) for it in iters]

    def __del__(self):
        for fetcher in getattr(self, "_fetchers", ()):
            fetcher.stop()

    @staticmethod
    def _renamed(descs_per_iter, renames):
        if renames is None:
            return sum(descs_per_iter, [])
        return [DataDesc(rename[d.name], d.shape, d.dtype) if isinstance(d, DataDesc)
                else DataDesc(rename[d[0]], *d[1:])
                for rename, descs in zip(renames, descs_per_iter) for d in descs]

    @property
    def provide_data(self):
        return self._renamed([it.provide_data for it in self.iters], self.rename_data)

    @property
    def provide_label(self):
        return self._renamed([it.provide_label for it in self.iters], self.rename_label)

    def reset(self):
        for fetcher in self._fetchers:
            fetcher.wait()
        for it in self.iters:
            it.reset()
        for fetcher in self._fetchers:
            fetcher.request()

    def iter_next(self):
        for fetcher in self._fetchers:
            fetcher.wait()
        batches = [fetcher.batch for fetcher in self._fetchers]
        if batches[0] is None:
            if any(b is not None for b in batches):
                raise MXNetError("PrefetchingIter: the iterators hold different numbers of "
                                 "batches (the first one ended before the others)")
            return False
        if any(b is None or b.pad != batches[0].pad for b in batches):
            raise MXNetError("PrefetchingIter: the iterators hold different numbers of "
                             f"examples (pads {[None if b is None else b.pad for b in batches]})")
        self.current_batch = DataBatch(sum((list(b.data) for b in batches), []),
                                       sum((list(b.label or []) for b in batches), []),
                                       batches[0].pad, batches[0].index,
                                       provide_data=self.provide_data,
                                       provide_label=self.provide_label)
        for fetcher in self._fetchers:
            fetcher.request()
        return True

    def next(self):
        if not self.iter_next():
            raise StopIteration
        return self.current_batch
