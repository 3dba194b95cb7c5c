"""MXNet's ``dist_sync`` and ``dist_sync_device`` KVStores over MPI, written against
``opsdk.kvstore`` alone.

Every worker keeps a whole copy of the store. ``init`` takes rank 0's values (broadcast). A
push sums the pushed values on this worker as ``local`` (``dist_sync``) or ``device``
(``dist_sync_device``) does, then sums that across the workers with ``MPI_Iallreduce``
(its wait hears of a rank that fails) straight between the arrays' buffers (no pickling):
into the stored value, or, with an optimizer, into a buffer the updater then applies on
every worker, the same sum giving the same update everywhere (MXNet runs it once on a
server; the result is the same). Keys above ``MXNET_KVSTORE_BIGARRAY_BOUND`` elements
(default 4M) are reduced in parts of that size; keys of at most ``FUSE_BOUND`` elements
pushed in one call travel in one message. With 2-bit compression each worker sends its
quantized sum (its residual kept here) and every worker adds up the dequantized parts in
rank order, as MXNet's server does.
"""

from __future__ import annotations

import os
import zlib

import numpy as np

from opsdk import MXNetError
from opsdk.kvstore import DeviceKVStore, GradientCompression, KVStore, KVStoreBase

from . import comm as _comm

__all__ = ["DistSyncKVStore", "DistSyncDeviceKVStore"]

FUSE_BOUND = 1 << 16            # elements: smaller keys of one call share a message
_FUSED_MAX = 1 << 22            # elements in one fused message


def bigarray_bound() -> int:
    raw = os.environ.get("MXNET_KVSTORE_BIGARRAY_BOUND", str(1 << 22))
    try:
        bound = int(raw)
    except ValueError:
        bound = 0
    if bound <= 0:
        raise MXNetError(f"MXNET_KVSTORE_BIGARRAY_BOUND must be a positive number of "
                         f"elements, got {raw!r}")
    return bound


class _Dist:
    """What ``dist_sync`` adds to a single-process store: the workers."""

    def __init__(self, name):
        super().__init__(name)
        self._world = _comm.world()
        self._wire_gc = None
        self._residual: dict = {}    # key -> numpy residual of what this worker sent
        self._bound = bigarray_bound()

    def __repr__(self):
        return (f"<{type(self).__name__} type={self.type!r} rank={self.rank}/"
                f"{self.num_workers}>")

    @property
    def rank(self) -> int:
        return self._world.rank

    @property
    def num_workers(self) -> int:
        return self._world.size

    def set_gradient_compression(self, compression_params) -> None:
        """Send 2-bit quantized sums between workers (``{'type': '2bit', 'threshold': t}``);
        the devices of one worker are summed uncompressed, as in MXNet."""
        self._wire_gc = GradientCompression(compression_params)
        self._residual.clear()

    # -- data ---------------------------------------------------------------------------
    def init(self, key, value) -> None:
        """Store each value, rank 0's for every worker."""
        _dense_only("init", self.group("init", key, value))
        super().init(key, value)
        keys = list(self.group("init", key, value))
        arrays = [self.stored("init", k) for k in keys]
        self._submit("init", keys, arrays, _bcast_work(len(arrays)), (), arrays, 0)

    def push(self, key, value, priority=0) -> None:
        """Sum the values pushed for each key here, then across the workers, into the stored
        value (or, with an updater, into the sum it applies)."""
        jobs = []
        groups = self.group("push", key, value)
        _dense_only("push", groups)
        for k, vals in groups.items():
            stored = self.stored("push", k)
            src, stored = self._local_sum(k, vals, stored, priority)
            dst = stored if self.updater is None else self.buffer(("recv", k), stored)
            jobs.append((k, src, dst))
        self.reduce_workers("push", jobs, priority)
        if self.updater is not None:
            for k, _, dst in jobs:
                self.run_updater(k, dst, self.stored("push", k))

    def pushpull(self, key, value, out=None, priority=0) -> None:
        """``push`` then ``pull``; without an updater the sum goes across the workers
        straight into the first output."""
        if self.updater is not None:
            KVStoreBase.pushpull(self, key, value, out, priority)
            return
        groups = self.group("pushpull", key, value)
        outs = groups if out is None else self.group("pushpull", key, out)
        if list(outs) != list(groups):
            raise MXNetError(f"KVStore.pushpull: out must name the same keys as value, got "
                             f"{list(outs)} for {list(groups)}")
        jobs, copies = [], []
        for k, vals in groups.items():
            stored = self.stored("pushpull", k)
            src, stored = self._local_sum(k, vals, stored, priority)
            first = outs[k][0]
            direct = (first.shape == stored.shape and first.dtype == stored.dtype
                      and first.context.device_type == "cpu")
            dst = first if direct else stored
            jobs.append((k, src, dst))
            copies.append((k, dst, [stored] * direct + [o for o in outs[k] if o is not dst]))
        self.reduce_workers("pushpull", jobs, priority)
        for k, dst, targets in copies:
            for t in targets:
                self.copy_value(k, dst, t, priority)

    def _barrier(self) -> None:
        """Wait until every worker has reached its barrier (and issued what came before)."""
        self._world.run(f"{self.type} barrier", lambda w: w.wait(w.comm.Ibarrier()),
                        _sig("barrier"))

    # -- helpers ---------------------------------------------------------------------------
    def _local_sum(self, key, vals, stored, priority):
        """(this worker's sum of ``vals`` as an NDArray MPI can read, the stored value)."""
        for v in vals:
            if v.shape != stored.shape:
                raise MXNetError(f"KVStore.push: key {key!r}: expected arrays of shape "
                                 f"{stored.shape}, got one of shape {v.shape}")
        src, stored = self.reduce_for_update(key, vals, stored, priority)
        if src.dtype != stored.dtype or src.context.device_type != "cpu":
            buf = self.buffer(("cast", key), stored)
            self.copy_value(key, src, buf, priority)
            src = buf
        return src, stored

    def reduce_workers(self, what, jobs, priority):
        """Queue the cross-worker sums of ``jobs`` ([(key, src, dst)]): small keys fused,
        each other key alone."""
        gc = self._wire_gc
        fused, size = [], 0
        for job in jobs:
            k, src, dst = job
            if gc is not None:
                gc.check_dtype(f"KVStore.{what}", k, dst.dtype)
                self._submit(what, [k], [src, dst], _compressed_work(gc, self._residual, k),
                             (src,), (dst,), priority)
            elif dst.size <= FUSE_BOUND and len(jobs) > 1:
                if fused and (size + dst.size > _FUSED_MAX or fused[0][2].dtype != dst.dtype):
                    self._submit_fused(what, fused, priority)
                    fused, size = [], 0
                fused.append(job)
                size += dst.size
            else:
                self._submit(what, [k], [src, dst], _allreduce_work(self._bound), (src,),
                             (dst,), priority)
        if fused:
            self._submit_fused(what, fused, priority)

    def _submit_fused(self, what, jobs, priority):
        keys = [k for k, _, _ in jobs]
        srcs, dsts = [s for _, s, _ in jobs], [d for _, _, d in jobs]
        self._submit(what, keys, srcs + dsts, _fused_work(len(jobs)), srcs, dsts, priority)

    def _submit(self, what, keys, arrays, work, reads, writes, priority):
        desc = (f"{what} of key {keys[0]!r}" if len(keys) == 1
                else f"{what} of {len(keys)} keys {keys[0]!r}..{keys[-1]!r}")
        sig = _sig(what, keys, [(a.shape, np.dtype(a.dtype).str) for a in arrays])
        self._world.submit(f"{self.type} {desc}", work, sig, reads, writes, priority)


def _dense_only(what, groups):
    """The dist stores move dense values only (MXNet's row_sparse dist paths are not here)."""
    for k, vals in groups.items():
        for v in vals:
            if v.stype != "default":
                raise MXNetError(f"KVStore.{what}: key {k!r}: the dist stores take dense "
                                 f"values, got a {v.stype} one")


def _sig(*parts) -> int:
    return zlib.crc32(repr(parts).encode()) & 0x7FFFFFFF


def _allreduce_work(bound):
    def work(world, src, dst):
        MPI = world.MPI
        s, d = src.reshape(-1), dst.reshape(-1)
        in_place = s.ctypes.data == d.ctypes.data
        if not in_place and np.shares_memory(s, d):
            s = s.copy()
        for lo in range(0, d.size, bound):
            part = d[lo:lo + bound]
            world.wait(world.comm.Iallreduce(MPI.IN_PLACE if in_place else s[lo:lo + bound],
                                             part))
    return work


def _fused_work(n):
    def work(world, *data):
        srcs, dsts = data[:n], data[-n:]
        buf = np.concatenate([s.reshape(-1) for s in srcs])
        world.wait(world.comm.Iallreduce(world.MPI.IN_PLACE, buf))
        at = 0
        for d in dsts:
            d.reshape(-1)[...] = buf[at:at + d.size]
            at += d.size
    return work


def _bcast_work(n):
    def work(world, *data):
        for a in data[-n:]:
            world.wait(world.comm.Ibcast(a.reshape(-1), root=0))
    return work


def _compressed_work(gc, residuals, key):
    def work(world, src, dst):
        r = residuals.get(key)
        if r is None or r.shape != dst.shape:
            r = residuals[key] = np.zeros(dst.shape, np.float32)
        words = np.empty(gc.compressed_size(dst.size), np.float32)
        gc.quantize(src, r, words)
        everyone = np.empty((world.size, words.size), np.float32)
        world.wait(world.comm.Iallgather(words, everyone))
        for i in range(world.size):
            gc.dequantize(everyone[i], dst, add=i > 0)
    return work


class DistSyncKVStore(_Dist, KVStore):
    """``dist_sync``: workers' values summed on the host, then across workers."""


class DistSyncDeviceKVStore(_Dist, DeviceKVStore):
    """``dist_sync_device`` (``dist_device_sync``): each key summed on one of this worker's
    devices (as ``device``), then across workers."""
