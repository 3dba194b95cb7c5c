"""The DataLoader's workers: processes that read and batch samples, handing each batch back
through a shared-memory file, or threads of the loading process (``thread_pool=True``).

A worker process writes a batch's arrays into one file (through ``_atomic_write``, so it
appears complete) in the pool's folder under ``/dev/shm`` (the temp dir where there is no
``/dev/shm``), mapped with ``mmap``; only the file's name and each array's offset, shape
and dtype travel through the pipe. The loading process maps the file copy-on-write, removes
its name at once and wraps the arrays as NDArrays over the mapping (numpy arrays stay
numpy), so array data is never pickled and never copied again; the memory goes when the
last array over it does. A pool that shuts down (when no loader or iterator holds it any
more, or at exit) stops its workers and removes its folder with whatever they left.

A worker watches the loading process (a pidfd on Linux, else a poll of its parent): when
that process dies, even by SIGKILL, the worker removes the pool's folder and exits at once.
A new pool removes the folders of dead loading processes that nothing removed (the folder
names carry the loading process's pid).

Tasks go to the worker with the fewest outstanding ones, at most ``_PER_WORKER`` each; the
loading process receives results only while it waits for one, so no thread runs beside it.
"""

from __future__ import annotations

import math
import mmap
import multiprocessing
import multiprocessing.connection
import os
import pickle
import random
import select
import shutil
import signal
import threading
import time
import traceback
import weakref
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as _FutureTimeout

import numpy as np

from ..._atomic_write import AtomicFile, _alive
from ..._runtime.base import MXNetError
from ...ndarray import NDArray, from_numpy

__all__ = ["ProcessPool", "ThreadPool"]

if os.access("/dev/shm", os.W_OK):
    _SHM_DIR = "/dev/shm"
else:                                   # a file-backed mapping of a file on disk
    import tempfile
    _SHM_DIR = tempfile.gettempdir()
_ALIGN = 64
_POPULATE = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)  # map the pages at once
_PER_WORKER = 4       # tasks in a worker's pipe at once: keeps both pipes far from full
_STOP = pickle.dumps(None)
_PREFIX = "mxnext-dataloader-"       # then the loading process's pid, "-", random hex
# messages are pickled here (the connections' own send pickles with multiprocessing's
# ForkingPickler, whose set-up costs more than these small messages)


class _Leaf:
    """Where an array of a batch sits in the batch's file."""

    __slots__ = ("offset", "shape", "dtype", "nd")

    def __init__(self, offset, shape, dtype, nd):
        self.offset, self.shape, self.dtype, self.nd = offset, shape, dtype, nd

    def __reduce__(self):
        return _Leaf, (self.offset, self.shape, self.dtype, self.nd)


class _Stack:
    """Equal-shaped arrays to be stacked straight into the batch file (the default
    batchify), coming back as one NDArray."""

    __slots__ = ("parts",)

    def __init__(self, parts):
        self.parts = parts


def collate(samples):
    """The default batchify of a worker: NDArray and numpy samples stacked, tuples as a
    list of fields, anything else through ``numpy.asarray``; every array an NDArray."""
    first = samples[0]
    if isinstance(first, NDArray):
        return _Stack([s.asnumpy() for s in samples])
    if isinstance(first, tuple):
        return [collate(list(field)) for field in zip(*samples)]
    if isinstance(first, np.ndarray):
        return _Stack(samples)
    return _Stack(list(np.asarray(samples)))


# -- the batch file ----------------------------------------------------------------------
def _plan(obj, leaves):
    """``obj`` with its arrays replaced by ``_Leaf``s; ``leaves`` gets (leaf, what to write)."""
    kind = type(obj)
    if kind is _Stack:
        parts = obj.parts
        shapes = {np.shape(part) for part in parts}
        if len(shapes) > 1:
            raise MXNetError(f"DataLoader: the default batchify_fn stacks samples of one "
                             f"shape, got shapes {sorted(shapes)}; pass a batchify_fn that "
                             f"pads or lists them")
        dtype = np.result_type(*{part.dtype for part in parts})
        leaf = _Leaf(0, (len(parts),) + np.shape(parts[0]), dtype.str, True)
        leaves.append((leaf, obj))
        return leaf
    if isinstance(obj, NDArray):
        arr = obj.asnumpy()
        leaf = _Leaf(0, arr.shape, arr.dtype.str, True)
        leaves.append((leaf, arr))
        return leaf
    if kind is np.ndarray and not obj.dtype.hasobject:
        leaf = _Leaf(0, obj.shape, obj.dtype.str, False)
        leaves.append((leaf, obj))
        return leaf
    if kind is list or kind is tuple:
        return kind(_plan(o, leaves) for o in obj)
    if kind is dict:
        return {k: _plan(v, leaves) for k, v in obj.items()}
    return obj


def _nbytes(leaf):
    return math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize


def _write(path, batch):
    """Writes ``batch``'s arrays into a new file at ``path``; returns (tree, file size),
    size 0 when there is nothing to write (then there is no file)."""
    leaves = []
    tree = _plan(batch, leaves)
    size = 0
    for leaf, _ in leaves:
        leaf.offset = size
        size += -(-_nbytes(leaf) // _ALIGN) * _ALIGN
    if size == 0:
        return tree, 0
    out = AtomicFile(path)
    try:
        fd = out.file.fileno()
        os.posix_fallocate(fd, 0, size)     # a full /dev/shm fails here, not as SIGBUS
        mem = mmap.mmap(fd, size, flags=_POPULATE)
    except OSError as exc:
        out.discard()
        raise MXNetError(f"DataLoader: no room for a batch of {size} bytes in {_SHM_DIR} "
                         f"({exc.strerror}); use fewer workers, a smaller prefetch, or "
                         f"thread_pool=True") from None
    buf = np.frombuffer(mem, np.uint8)
    for leaf, src in leaves:
        view = buf[leaf.offset:leaf.offset + _nbytes(leaf)].view(leaf.dtype).reshape(leaf.shape)
        if type(src) is _Stack:
            np.stack(src.parts, out=view)
        else:
            view[...] = src
        del view
    del buf
    try:
        mem.close()
    except BufferError:     # a view still held (by a cycle): unmapped when it goes
        pass
    out.commit()
    return tree, size


def _read(path, size, tree):
    """The batch a worker wrote into the file at ``path``: maps it (copy-on-write: writes
    to the arrays stay here) and removes its name."""
    if size == 0:
        return _build(tree, None)
    try:
        with open(path, "rb") as f:
            mem = mmap.mmap(f.fileno(), size, access=mmap.ACCESS_COPY)
    finally:
        os.unlink(path)
    return _build(tree, np.frombuffer(mem, np.uint8))


def _build(obj, buf):
    kind = type(obj)
    if kind is _Leaf:
        if buf is None:
            arr = np.empty(obj.shape, obj.dtype)
        else:
            arr = buf[obj.offset:obj.offset + _nbytes(obj)].view(obj.dtype).reshape(obj.shape)
        return from_numpy(arr) if obj.nd else arr
    if kind is list or kind is tuple:
        return kind(_build(o, buf) for o in obj)
    if kind is dict:
        return {k: _build(v, buf) for k, v in obj.items()}
    return obj


# -- the worker process ------------------------------------------------------------------
def _watch(parent, folder):
    """Waits for the loading process ``parent`` to end, then removes the pool's folder
    (renamed first, so that no batch file appears in it any more) and ends this worker."""
    first = os.getppid()        # ``parent``, or the fork server that started this worker
    try:
        fd = os.pidfd_open(parent)
    except (AttributeError, OSError):               # no pidfd here, or ``parent`` is gone
        while os.getppid() == first and _alive(parent):
            time.sleep(0.1)
    else:
        select.select([fd], [], [])
    gone = f"{folder}.gone-{os.getpid()}"
    try:
        os.rename(folder, gone)                     # the other workers find nothing to do
    except OSError:
        pass
    else:
        shutil.rmtree(gone, ignore_errors=True)
    os._exit(0)


def _worker_main(wid, conn, dataset, batchify_fn, folder, seed, parent):
    watcher = threading.Thread(target=_watch, args=(parent, folder), daemon=True,
                               name="mxnext DataLoader parent watch")
    watcher.start()
    signal.signal(signal.SIGINT, signal.SIG_IGN)    # Ctrl-C is the loading process's
    np.random.seed((seed + wid) % 2**32)            # workers draw different random numbers
    random.seed(seed + wid)
    batchify = batchify_fn or collate
    count = 0
    while True:
        try:
            task = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):                 # the loading process has gone: the
            watcher.join(1.0)                       # watcher cleans up and ends this one
            return
        if task is None:
            return
        ticket, indices = task
        try:
            batch = batchify([dataset[i] for i in indices])
            count += 1
            path = os.path.join(folder, f"{wid}-{count}")
            tree, size = _write(path, batch)
            reply = (ticket, True, (path, size, tree))
        except Exception as exc:                    # noqa: BLE001  (the parent raises it)
            reply = (ticket, False, _describe(exc))
        try:
            conn.send_bytes(pickle.dumps(reply, -1))
        except (EOFError, OSError):
            watcher.join(1.0)
            return


def _describe(exc):
    """(the exception pickled when it survives that, or None; its text; the traceback)."""
    text = f"{type(exc).__name__}: {exc}"
    tb = "".join(traceback.format_exception(exc))
    try:
        data = pickle.dumps(exc)
        pickle.loads(data)
    except Exception:                               # noqa: BLE001
        data = None
    return data, text, tb


class _RemoteTraceback(Exception):
    def __str__(self):
        return self.args[0]


def _raise_remote(where, payload):
    data, text, tb = payload
    exc = None
    if data is not None:
        try:
            exc = pickle.loads(data)
        except Exception:                           # noqa: BLE001
            exc = None
    if not isinstance(exc, BaseException):
        exc = MXNetError(f"{where} raised {text}")
    exc.add_note(f"raised in {where}; its traceback is the cause above")
    raise exc from _RemoteTraceback(f"\n\n{where} raised:\n{tb}")


# -- the pools ---------------------------------------------------------------------------
class _Workers:
    """What shutting a process pool down needs (kept apart from the pool, so that the
    pool's finalizer does not hold the pool)."""

    def __init__(self, folder):
        self.folder = folder
        self.procs = []
        self.conns = []

    def shutdown(self):
        for conn in self.conns:
            try:
                conn.send_bytes(_STOP)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 1.0
        for proc in self.procs:
            proc.join(max(0.0, deadline - time.monotonic()))
        for proc in self.procs:
            if proc.is_alive():
                proc.terminate()
                proc.join(5)
            if proc.is_alive():
                proc.kill()
                proc.join()
        for conn in self.conns:
            conn.close()
        shutil.rmtree(self.folder, ignore_errors=True)
        self.procs, self.conns = [], []


class ProcessPool:
    """``num_workers`` processes, each with the dataset (a fork copies it; other start
    methods pickle it) and ``batchify_fn`` (None: ``collate``)."""

    def __init__(self, num_workers, dataset, batchify_fn):
        ctx = multiprocessing.get_context()
        _remove_orphans()
        folder = os.path.join(_SHM_DIR, f"{_PREFIX}{os.getpid()}-{os.urandom(4).hex()}")
        os.mkdir(folder, 0o700)
        self._workers = workers = _Workers(folder)
        self._finalizer = weakref.finalize(self, workers.shutdown)
        seed = int(np.random.randint(0, 2**31 - 1))
        for wid in range(num_workers):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker_main, name=f"mxnext DataLoader worker {wid}",
                               args=(wid, there, dataset, batchify_fn, folder, seed,
                                     os.getpid()),
                               daemon=True)
            proc.start()
            there.close()
            workers.procs.append(proc)
            workers.conns.append(here)
        self._queue = deque()              # tickets not yet sent: (ticket, indices)
        self._sent = {}                    # ticket -> (worker, indices)
        self._load = [0] * num_workers     # tickets sent to each worker, not yet back
        self._done = {}                    # ticket -> (ok, payload) received, not yet taken
        self._dropped = set()              # tickets whose batches nobody takes any more
        self._next = 0
        self.broken = None

    def _check_open(self):
        if not self._finalizer.alive:
            raise MXNetError(self.broken or "DataLoader: its workers were shut down")

    def submit(self, indices):
        self._check_open()
        ticket = self._next
        self._next += 1
        self._queue.append((ticket, indices))
        self._dispatch()
        return ticket

    def _dispatch(self):
        load = self._load
        while self._queue:
            wid = min(range(len(load)), key=load.__getitem__)
            if load[wid] >= _PER_WORKER:
                return
            ticket, indices = self._queue.popleft()
            self._workers.conns[wid].send_bytes(pickle.dumps((ticket, indices), -1))
            self._sent[ticket] = (wid, indices)
            load[wid] += 1

    def _where(self, wid):
        return f"DataLoader worker {wid} (pid {self._workers.procs[wid].pid})"

    def _receive(self, timeout):
        """Receives what workers have sent, waiting up to ``timeout`` for something."""
        workers = self._workers
        busy = [wid for wid, n in enumerate(self._load) if n]
        conns = {workers.conns[w]: w for w in busy}
        sentinels = {workers.procs[w].sentinel: w for w in busy}
        ready = multiprocessing.connection.wait(list(conns) + list(sentinels), timeout)
        dead = [sentinels[obj] for obj in ready if obj in sentinels]
        for obj in ready:
            if obj in conns:
                wid = conns[obj]
                try:
                    while obj.poll():
                        self._take(wid, *pickle.loads(obj.recv_bytes()))
                except (EOFError, OSError):        # it died after its last message
                    dead.append(wid)
        for wid in dead:
            if self._load[wid]:
                workers.procs[wid].join(5)
                code = workers.procs[wid].exitcode
                how = (f"was killed by signal {signal.Signals(-code).name}" if code < 0
                       else f"exited with code {code}")
                self.broken = (f"{self._where(wid)} {how} while loading a batch (the "
                               f"system may be out of memory)")
                self.close()
                raise MXNetError(self.broken)
        return bool(ready)

    def _take(self, wid, ticket, ok, payload):
        self._load[wid] -= 1
        _, indices = self._sent.pop(ticket)
        if ticket in self._dropped:
            self._dropped.discard(ticket)
            if ok:
                _unlink(payload[0], payload[1])
        else:
            self._done[ticket] = (wid, indices, ok, payload)
        self._dispatch()

    def result(self, ticket, timeout):
        """The batch of ``ticket``, waiting at most ``timeout`` seconds for it."""
        deadline = time.monotonic() + timeout
        if ticket not in self._done:
            self._check_open()
        while ticket not in self._done:
            left = deadline - time.monotonic()
            if left <= 0 or not self._receive(left):
                if ticket in self._done:
                    break
                wid = self._sent.get(ticket, (None,))[0]
                who = self._where(wid) if wid is not None else "no DataLoader worker"
                self.cancel([ticket])
                raise multiprocessing.TimeoutError(
                    f"DataLoader: {who} sent no batch within timeout={timeout} s: a slow "
                    f"dataset or transform needs a larger timeout; a full {_SHM_DIR} "
                    f"(shared memory) stalls workers too, then use fewer workers")
        wid, indices, ok, payload = self._done.pop(ticket)
        if not ok:
            _raise_remote(f"{self._where(wid)} (batch of samples {_brief(indices)})", payload)
        return _read(*payload)

    def cancel(self, tickets):
        """Drops the batches of ``tickets``: their files are removed as they come back."""
        for ticket in tickets:
            if ticket in self._done:
                _, _, ok, payload = self._done.pop(ticket)
                if ok:
                    _unlink(payload[0], payload[1])
            elif ticket in self._sent:
                self._dropped.add(ticket)
        queued = set(tickets)
        self._queue = deque(t for t in self._queue if t[0] not in queued)

    def drain(self, timeout):
        """Waits (at most ``timeout`` seconds) for dropped batches, removing their files."""
        deadline = time.monotonic() + timeout
        while self._dropped and self._finalizer.alive:
            left = deadline - time.monotonic()
            try:
                if left <= 0 or not self._receive(left):
                    return
            except MXNetError:        # a worker died: the pool is shut, its files removed
                return

    def close(self):
        self._finalizer()


def _remove_orphans():
    """Removes the pool folders of loading processes that are gone."""
    try:
        names = os.listdir(_SHM_DIR)
    except OSError:
        return
    for name in names:
        pid = name[len(_PREFIX):].partition("-")[0]
        if name.startswith(_PREFIX) and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(os.path.join(_SHM_DIR, name), ignore_errors=True)


def _unlink(path, size):
    if size:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass


def _brief(indices):
    shown = ", ".join(str(i) for i in list(indices)[:8])
    return f"[{shown}{', ...' if len(indices) > 8 else ''}]"


class ThreadPool:
    """``num_workers`` threads of this process; batches stay in this process."""

    broken = None

    def __init__(self, num_workers, dataset, batchify_fn):
        self._executor = ThreadPoolExecutor(num_workers, "mxnext DataLoader thread")
        self._finalizer = weakref.finalize(self, self._executor.shutdown, wait=False,
                                           cancel_futures=True)
        self._dataset = dataset
        self._batchify = batchify_fn

    def _load(self, indices):
        return self._batchify([self._dataset[i] for i in indices])

    def submit(self, indices):
        return self._executor.submit(self._load, indices)

    def result(self, future, timeout):
        try:
            return future.result(timeout)
        except _FutureTimeout:
            raise multiprocessing.TimeoutError(
                f"DataLoader: a worker thread sent no batch within timeout={timeout} s: a "
                f"slow dataset or transform needs a larger timeout") from None

    def cancel(self, futures):
        for future in futures:
            future.cancel()

    def drain(self, timeout):
        pass

    def close(self):
        self._finalizer()
