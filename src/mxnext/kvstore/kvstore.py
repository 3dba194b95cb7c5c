"""``KVStore``: MXNet 1.x's single-process store (types ``local``, ``local_update_cpu``,
``local_allreduce_cpu``), the builtin backend.

Values live on ``cpu(0)``. A push sums the arrays given for a key (one engine function,
across devices); without an updater the sum replaces the stored value, with one the updater
runs as ``updater(key, summed, stored)``. A pull copies the stored value into each output.
Everything is pushed to the engine: nothing here waits for data.
"""

from __future__ import annotations

import numpy as np

from .._runtime.base import MXNetError
from .._runtime.context import cpu
from ..ndarray import NDArray
from ..ndarray._imperative import new_array
from ..optimizer._states_file import load_states_file, save_states_file
from ._comm import assign_sum
from ._rows import any_sparse, retained_rows, sparse_sum
from .base import KVStoreBase

__all__ = ["KVStore", "LOCAL_TYPES"]

# MXNet 1.x's names for this store on a machine without GPUs; they behave the same here.
LOCAL_TYPES = ("local", "local_update_cpu", "local_allreduce_cpu")


class KVStore(KVStoreBase):
    """A key-value store summing values pushed from several devices (``mx.kv.create()``)."""

    def __init__(self, name: str = "local"):
        self._type = name
        self._ctx = cpu(0)
        self._store: dict = {}       # key -> NDArray on cpu(0)
        self._merge_bufs: dict = {}  # tag -> buffer (``buffer``)
        self._key_type = None        # int or str, fixed by the first call
        self._updater = None

    def __repr__(self):
        return f"<KVStore type={self._type!r} keys={len(self._store)}>"

    # -- description ------------------------------------------------------------------
    @property
    def type(self) -> str:
        return self._type

    @property
    def rank(self) -> int:
        return 0

    @property
    def num_workers(self) -> int:
        return 1

    @staticmethod
    def is_capable(capability) -> bool:
        if capability.lower() == KVStoreBase.OPTIMIZER:
            return True
        raise ValueError(f"KVStore.is_capable: unknown capability {capability!r}; known: "
                         f"{KVStoreBase.OPTIMIZER!r}")

    # -- data ---------------------------------------------------------------------------
    def init(self, key, value) -> None:
        """Store a copy of ``value`` under ``key`` (or of each value under each key)."""
        for k, vals in self.group("init", key, value).items():
            if k in self._store:
                raise MXNetError(f"KVStore.init: key {k!r} is already initialized")
            if len(vals) != 1:
                raise MXNetError(f"KVStore.init: key {k!r} takes one NDArray, got {len(vals)}")
            if vals[0].stype != "default":
                self._store[k] = vals[0].copyto(self._ctx)
                continue
            stored = new_array(vals[0].shape, vals[0]._dtype, self._ctx)
            assign_sum(vals, stored, 0, "KVStore.init", k)
            self._store[k] = stored

    def push(self, key, value, priority=0) -> None:
        """Sum the arrays pushed for each key (``reduce_devices``), then across the workers
        (``reduce_workers``), and store the sum (or hand it to ``run_updater``)."""
        jobs = []
        for k, vals in self.group("push", key, value).items():
            stored = self.stored("push", k)
            if stored.stype != "default" or any_sparse(vals):
                self._push_sparse(k, vals, stored)
                continue
            if self._updater is None:
                self.reduce_devices(k, vals, stored, priority)
                jobs.append((k, stored, stored))
            else:
                summed, _ = self.reduce_for_update(k, vals, stored, priority)
                jobs.append((k, summed, summed))
        self.reduce_workers("push", jobs, priority)
        if self._updater is not None:
            for k, summed, _ in jobs:
                self.run_updater(k, summed, self.stored("push", k))

    def _push_sparse(self, key, values, stored) -> None:
        """A push involving sparse arrays: summed as sparse arrays (one worker)."""
        summed = sparse_sum(values, self._ctx)
        if self._updater is None:
            summed.copyto(stored)
        else:
            self._updater(key, summed, stored)

    # -- extension points: what a backend changes ------------------------------------------
    def reduce_devices(self, key, values, dst, priority) -> None:
        """Push ``dst = sum(values)``: one key's values from this worker's devices (a
        subclass may compress on the way)."""
        assign_sum(values, dst, priority, "KVStore.push", key)

    def reduce_for_update(self, key, values, stored, priority):
        """``(sum of values, stored value)`` for the updater: the sum in a buffer of the key's
        (``buffer``), or the value itself when one comes from the store's device."""
        if len(values) == 1 and values[0].context == stored.context:
            return values[0], stored
        summed = self.buffer(key, stored)
        self.reduce_devices(key, values, summed, priority)
        return summed, stored

    def reduce_workers(self, what, jobs, priority) -> None:
        """Sum across the workers: for each ``(key, this worker's sum, dst)`` of ``jobs``, push
        ``dst = sum over workers``. With one worker, a copy where ``dst`` is another array."""
        for k, src, dst in jobs:
            if src is not dst:
                self.copy_value(k, src, dst, priority)

    def run_updater(self, key, summed, stored) -> None:
        """Apply the updater: ``updater(key, summed, stored)`` updates ``stored`` in place."""
        self._updater(key, summed, stored)

    # -- building blocks for backends ------------------------------------------------------
    @property
    def updater(self):
        """The updater ``set_optimizer`` installed, or None."""
        return self._updater

    def copy_value(self, key, src, dst, priority) -> None:
        """Push ``dst[...] = src`` (uncompressed, across devices and dtypes)."""
        assign_sum([src], dst, priority, "KVStore.push", key)

    def buffer(self, tag, like):
        """A buffer of the store's own, kept under ``tag`` (any hashable), shaped, typed and
        placed as ``like``; made again when ``like`` moved to another device."""
        buf = self._merge_bufs.get(tag)
        if buf is None or buf.context != like.context:
            buf = self._merge_bufs[tag] = new_array(like.shape, like._dtype, like.context)
        return buf

    def pull(self, key, out=None, priority=0, ignore_sparse=True) -> None:
        """Copy the stored value of each key into its output array(s); with
        ``ignore_sparse`` sparse outputs are left alone (MXNet's)."""
        if out is None:
            raise MXNetError("KVStore.pull: out is required (an NDArray or a list of them)")
        for k, outs in self.group("pull", key, out).items():
            stored = self.stored("pull", k)
            for o in outs:
                if o.stype == "default" and stored.stype == "default":
                    assign_sum([stored], o, priority, "KVStore.pull", k)
                elif not (ignore_sparse and o.stype != "default"):
                    stored.copyto(o)

    def row_sparse_pull(self, key, out=None, priority=0, row_ids=None):
        """Copy the rows ``row_ids`` of each key's row_sparse value into its RowSparseNDArray
        output(s). ``row_ids`` has the form of ``out`` (per key, an NDArray or a list with one
        per output), or is one NDArray (or a list of one) for every output."""
        if out is None or row_ids is None:
            raise MXNetError("KVStore.row_sparse_pull: out and row_ids are required")
        if isinstance(row_ids, NDArray):
            row_ids = [row_ids]
        single = isinstance(row_ids, (list, tuple)) and len(row_ids) == 1 \
            and isinstance(row_ids[0], NDArray)
        grouped = None if single else self.group("row_sparse_pull", key, row_ids)
        for k, outs in self.group("row_sparse_pull", key, out).items():
            ids = list(row_ids) * len(outs) if single else grouped[k]
            if len(ids) != len(outs):
                raise MXNetError(f"KVStore.row_sparse_pull: key {k!r}: {len(outs)} outputs "
                                 f"but {len(ids)} row_ids")
            stored = self.stored("row_sparse_pull", k)
            for o, rows in zip(outs, ids):
                if o.stype != "row_sparse":
                    raise MXNetError(f"KVStore.row_sparse_pull: key {k!r}: outputs must be "
                                     f"row_sparse, got {o.stype}")
                o._take(retained_rows("row_sparse_pull", k, stored, rows, o.context))

    def set_gradient_compression(self, compression_params):
        raise MXNetError(f"KVStore.set_gradient_compression: not supported for KVStore type "
                         f"{self._type!r}")

    # -- updater and optimizer ---------------------------------------------------------
    def set_optimizer(self, optimizer) -> None:
        """Run ``optimizer`` here at every push (``mx.optimizer.get_updater``)."""
        from .. import optimizer as opt
        self._set_updater(opt.get_updater(optimizer))

    def _set_updater(self, updater) -> None:
        """Call ``updater(key, summed_value, stored_value)`` at every push; it updates
        ``stored_value`` in place."""
        if not callable(updater):
            raise MXNetError(f"KVStore._set_updater: expected a callable "
                             f"updater(key, recv, local), got {type(updater).__name__}")
        self._updater = updater

    def save_optimizer_states(self, fname, dump_optimizer=False) -> None:
        """Write the updater's states (``get_states``) to ``fname`` (atomically)."""
        save_states_file(self._states_updater("save_optimizer_states", "get_states"), fname,
                         dump_optimizer)

    def load_optimizer_states(self, fname) -> None:
        """Give the updater the states saved in ``fname`` (``set_states``)."""
        load_states_file(self._states_updater("load_optimizer_states", "set_states"), fname,
                         "KVStore.load_optimizer_states")

    def _states_updater(self, what, method):
        if self._updater is None:
            raise MXNetError(f"KVStore.{what}: no optimizer is set; call set_optimizer first")
        if not hasattr(self._updater, method):
            raise MXNetError(f"KVStore.{what}: the updater {self._updater!r} has no "
                             f"{method}(); set one with set_optimizer")
        return self._updater

    # -- single process: nothing to synchronise with -------------------------------------
    def _barrier(self) -> None:
        """Wait for every worker: there is only this one."""

    def _send_command_to_servers(self, head, body) -> None:
        """A local store has no servers; the command has nobody to go to."""

    # -- keys ---------------------------------------------------------------------------
    def stored(self, what, key):
        """The stored value of ``key``; an error naming the call ``what`` when ``key`` was
        never initialized."""
        stored = self._store.get(key)
        if stored is None:
            raise MXNetError(f"KVStore.{what}: key {key!r} is not initialized; call "
                             f"init({key!r}, value) first")
        return stored

    def group(self, what, key, value) -> dict:
        """``{key: [NDArray, ...]}`` in first-seen order from MXNet's key/value forms: one
        key with an NDArray or a list of them, or a list of keys with one such per key."""
        if isinstance(key, (list, tuple)):
            if not isinstance(value, (list, tuple)) or len(value) != len(key):
                got = len(value) if isinstance(value, (list, tuple)) else type(value).__name__
                raise MXNetError(f"KVStore.{what}: {len(key)} keys need a list of "
                                 f"{len(key)} values, got {got}")
            pairs = zip(key, value)
        else:
            pairs = ((key, value),)
        groups: dict = {}
        for k, v in pairs:
            k = self._check_key(what, k)
            arrays = [v] if isinstance(v, NDArray) else v
            if not isinstance(arrays, (list, tuple)) or not all(
                    isinstance(a, NDArray) for a in arrays):
                raise MXNetError(f"KVStore.{what}: key {k!r}: expected an NDArray or a list of "
                                 f"NDArrays, got {v!r:.80}")
            groups.setdefault(k, []).extend(arrays)
        return groups

    def _check_key(self, what, key):
        if isinstance(key, str):
            kind = str
        elif isinstance(key, (int, np.integer)):
            key, kind = int(key), int
        else:
            raise MXNetError(f"KVStore.{what}: keys must be int or str, got "
                             f"{type(key).__name__} {key!r}")
        if self._key_type is None:
            self._key_type = kind
        elif kind is not self._key_type:
            raise MXNetError(f"KVStore.{what}: key {key!r} is {kind.__name__}, but this store "
                             f"uses {self._key_type.__name__} keys (int and str keys cannot "
                             f"be mixed)")
        return key
