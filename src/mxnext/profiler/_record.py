"""The process profiler: configuration, state, the record buffer and the Chrome trace file.

Records are tuples appended to one list by any thread (an append is atomic) while the
profiler runs; a dump takes the ones there so far, writes them to the trace file (Chrome's
trace-event JSON, as MXNet writes it) and adds them to the aggregate statistics. Operator
spans come from the engine's hooks (``engine._events``), installed only while operators are
recorded, so a stopped profiler costs the engine one flag test per function.

Record layouts (``kind`` first):
  ``("op", name, category, t0_ns, t1_ns, device_index, thread)``
  ``("span", name, category, ph_begin, ph_end, t0_ns, t1_ns, thread)``  Task/Frame/Event
  ``("count", name, category, t_ns, value, thread)``                    Counter, memory
  ``("mark", name, category, t_ns, scope_char, thread)``                Marker
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
import zlib
from time import perf_counter_ns

from .._atomic_write import write_atomic
from .._runtime import engine as _engine
from .._runtime import storage
from .._runtime.base import MXNetError, ParamError
from .._runtime.engine import _events
from ._stats import Stats

__all__ = ["Profiler", "profiler", "SYMBOLIC", "IMPERATIVE", "API", "MEMORY"]

SYMBOLIC, IMPERATIVE, API, MEMORY = 1, 2, 4, 8      # MXNet's ProfilerMode bits
OPERATOR, CUSTOM = "operator", "Custom Operator"
MEMORY_CATEGORY = "Device Storage"
# MXNet's wrappers around a custom op's Python code, never reported themselves
_UNREPORTED = frozenset({"Custom", "_backward_Custom", "CustomOperatorWait"})
# perf_counter_ns -> microseconds since the epoch, the timestamps MXNet writes
_EPOCH_US = time.time_ns() // 1000 - perf_counter_ns() // 1000


def _flag(value, key):
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("true", "1", "yes"):
            return True
        if low in ("false", "0", "no"):
            return False
        raise ParamError(f"profiler.set_config: {key} must be a boolean, got {value!r}")
    return bool(value)


class Profiler:
    """MXNet's ``Profiler`` singleton: one per process (``profiler`` below)."""

    def __init__(self):
        self.lock = threading.RLock()
        self.mode = _env_int("MXNET_PROFILER_MODE", SYMBOLIC | API | MEMORY)
        self.filename = "profile.json"
        self.continuous = False
        self.period = 1.0
        self.stats: Stats | None = None
        self.running = False
        self.paused = False
        self.output = False          # MXNet's enable_output: a dump may write the file
        self.records: list = []
        self._file_dumps = 0         # dumps into the current file
        self._file_pids: set = set()  # categories whose process_name the file holds
        self._timer: threading.Event | None = None
        self._memory: dict = {}      # device index -> last in-use bytes reported
        self._at_exit = False
        ncpu = os.cpu_count() or 64
        self.devices = [f"cpu/{i}" for i in range(ncpu)]
        self._ngpu = None

    # -- configuration and state ------------------------------------------------------
    def configure(self, mode, filename, continuous, period, aggregate):
        if continuous and not period > 0:
            raise MXNetError(f"profiler.set_config: dump_period must be > 0 with "
                             f"continuous_dump, got {period}")
        with self.lock:
            if self.output and self.continuous and self._file_dumps:
                self.dump(True)              # close the file appended to so far
                self.output = True
            self.mode = mode
            self.filename = filename
            if filename:
                try:
                    os.unlink(filename)      # a fresh file, as MXNet starts one
                except FileNotFoundError:
                    pass
            self._file_dumps = 0
            self._memory = {}
            if aggregate:
                self.stats = self.stats or Stats()
            else:
                self.stats = None
            self._set_continuous(continuous, period)
            self._sync_hooks()

    def set_state(self, run: bool):
        with self.lock:
            self.running = run
            if run:
                self.output = True
                self.gpu_count()             # settled here, not in an engine worker
                self._ensure_exit_dump()
            self.paused = not run
            self._sync_hooks()

    def set_paused(self, paused: bool):
        with self.lock:
            self.paused = paused
            self._sync_hooks()

    @property
    def recording(self) -> bool:
        return self.running and not self.paused

    def _sync_hooks(self):
        hooked = self.mode & (SYMBOLIC | IMPERATIVE | MEMORY)
        _events.install(self._on_run if self.recording and hooked else None)

    def _ensure_exit_dump(self):
        if not self._at_exit:      # MXNet's profiler closes its file when the process ends
            self._at_exit = True
            atexit.register(self._exit_dump)

    def _exit_dump(self):
        try:
            _engine.get().wait_for_all()   # what is still running belongs in the file
        except MXNetError:
            pass
        try:
            self.dump(True)
        except OSError:
            pass

    # -- recording ------------------------------------------------------------------------
    def add(self, record):
        if self.running and not self.paused:
            self.records.append(record)

    def _on_run(self, name, fn, ctx, t0, t1):
        """The engine's sink: one function run (``fn`` None: a custom op's Python code)."""
        ops = getattr(fn, _events.SYMBOLIC, None)
        wanted = self.mode & (IMPERATIVE if ops is None else SYMBOLIC)
        if ops is not None:
            name = ops
        dev = self.device_index(ctx)
        tid = threading.get_ident()
        if wanted and name not in _UNREPORTED:
            prefix = _events.custom.op_type
            if prefix is not None:
                name = f"{prefix}::{name}"
            self.records.append(("op", name, CUSTOM if "::" in name else OPERATOR, t0, t1,
                                 dev, tid))
        if self.mode & MEMORY and ctx is not None:
            self._sample_memory(ctx, dev, t1, tid)

    def _sample_memory(self, ctx, dev, t, tid):
        """A ``Memory: <device>`` counter of the bytes the device's pool has handed out,
        reported when it changed since the last run on that device."""
        try:
            used = storage.pool(ctx).in_use
        except MXNetError:
            return
        if self._memory.get(dev) != used:
            self._memory[dev] = used
            self.records.append(("count", f"Memory: {self.device_name(dev)}",
                                 MEMORY_CATEGORY, t, used, tid))

    def device_index(self, ctx) -> int:
        """MXNet's device numbering: CPUs, then GPUs, then pinned and shared CPU memory."""
        if ctx is None:
            return 0
        ncpu, ngpu = len(self.devices), self.gpu_count()
        kind = ctx.device_type
        if kind == "cpu":
            return ctx.device_id
        if kind == "gpu":
            return ncpu + ctx.device_id
        return ncpu + ngpu + (0 if kind == "cpu_pinned" else 1)

    def gpu_count(self) -> int:
        if self._ngpu is None:
            from .._runtime.context import num_gpus
            self._ngpu = num_gpus()
        return self._ngpu

    def device_name(self, index) -> str:
        ncpu, ngpu = len(self.devices), self.gpu_count()
        if index < ncpu:
            return self.devices[index]
        if index < ncpu + ngpu:
            return f"gpu/{index - ncpu}"
        return "cpu pinned/" if index == ncpu + ngpu else "cpu shared/"

    # -- dumps ----------------------------------------------------------------------------
    def take(self) -> list:
        """The records so far, removed (appends racing with this land after them)."""
        n = len(self.records)
        batch = self.records[:n]
        del self.records[:n]
        return batch

    def dump(self, finished: bool):
        """Write what was recorded to the trace file (MXNet's ``DumpProfile``): a
        continuous profile appends to the file until a finishing dump closes it; otherwise
        every dump writes a whole file and ends the output until the profiler runs again."""
        with self.lock:
            if not self.output:
                return
            if finished:
                self._stop_timer()
            batch = self.take()
            if self.stats is not None:
                self.stats.add(batch)
            last = finished or not self.continuous
            if self.filename:
                self._write(batch, last)
            self.output = self.continuous and not last

    def _write(self, batch, last):
        fresh = self._file_dumps == 0 or not self.continuous
        self._file_dumps += 1
        parts = []
        if fresh:
            self._file_pids = set()
            parts.extend(_metadata(self.device_name(i), i)
                         for i in range(len(self.devices) + self.gpu_count() + 2))
        parts.extend(self._events(batch))
        head = '{\n    "traceEvents": [\n' if fresh else ",\n" if parts else ""
        tail = '\n    ],\n    "displayTimeUnit": "ms"\n}\n' if last else ""
        write_atomic(self.filename, head + ",\n".join(parts) + tail, append=not fresh)
        if last:
            self._file_dumps = 0          # closed: a later dump starts the file again

    def _events(self, batch):
        """Trace events of ``batch``: device operators under their device's pid, the rest
        under one pid per category, named by a process_name event the first time."""
        esc = _Escaper()
        out, rest = [], []
        for r in batch:
            if r[0] != "op":
                rest.append(r)
                continue
            _, name, cat, t0, t1, dev, tid = r
            head = f'{{"name": {esc(name)}, "cat": {esc(cat)}, "ph": "'
            tail = f', "pid": {dev}, "tid": {tid}}}'
            out.append(f'{head}B", "ts": {t0 // 1000 + _EPOCH_US}{tail}')
            out.append(f'{head}E", "ts": {t1 // 1000 + _EPOCH_US}{tail}')
        for r in rest:
            kind, name, cat = r[:3]
            pid = _category_pid(cat)
            if cat not in self._file_pids:
                self._file_pids.add(cat)
                out.append(_metadata(cat, pid))
            head = f'{{"name": {esc(name)}, "cat": {esc(cat)}, "ph": "'
            if kind == "span":
                _, _, _, b, e, t0, t1, tid = r
                extra = f', "id": {tid}' if b == "b" else ""
                tail = f'{extra}, "pid": {pid}, "tid": {tid}}}'
                out.append(f'{head}{b}", "ts": {t0 // 1000 + _EPOCH_US}{tail}')
                out.append(f'{head}{e}", "ts": {t1 // 1000 + _EPOCH_US}{tail}')
            elif kind == "count":
                _, _, _, t, value, tid = r
                out.append(f'{head}C", "ts": {t // 1000 + _EPOCH_US}, "args": '
                           f'{{{esc(name)}: {value}}}, "pid": {pid}, "tid": {tid}}}')
            else:
                _, _, _, t, scope, tid = r
                out.append(f'{head}n", "ts": {t // 1000 + _EPOCH_US}, "s": "{scope}", '
                           f'"pid": {pid}, "tid": {tid}}}')
        return out

    # -- continuous dumps -----------------------------------------------------------------
    def _set_continuous(self, on, period):
        """Start (dumping once now, then every ``period`` seconds) or stop periodic dumps."""
        self._stop_timer()
        self.continuous, self.period = on, period
        if not on:
            return
        self.dump(False)
        stop = self._timer = threading.Event()
        threading.Thread(target=self._dump_every, args=(stop, period), daemon=True,
                         name="mxnext-profile-dump").start()

    def _stop_timer(self):
        if self._timer is not None:
            self._timer.set()
            self._timer = None

    def _dump_every(self, stop, period):
        while not stop.wait(period):
            with self.lock:
                if stop.is_set():
                    return
                self.dump(False)


def _metadata(name, pid) -> str:
    return (f'{{"ph": "M", "args": {{"name": {json.dumps(name)}}}, "pid": {pid}, '
            f'"name": "process_name"}}')


def _category_pid(category) -> int:
    """A category's process id in the trace: a stable hash of its name (MXNet hashes it
    too), above any device index."""
    return (zlib.crc32(category.encode()) << 8) | 0xFF


class _Escaper(dict):
    """JSON strings of names, made once per dump."""

    def __call__(self, s):
        v = self.get(s)
        if v is None:
            v = self[s] = json.dumps(s)
        return v


def _env_int(name, default):
    value = os.environ.get(name)
    if not value:
        return default
    try:
        return int(value)
    except ValueError:
        raise MXNetError(f"{name} must be an integer (ProfilerMode bits: symbolic 1, "
                         f"imperative 2, api 4, memory 8), got {value!r}") from None


profiler = Profiler()
