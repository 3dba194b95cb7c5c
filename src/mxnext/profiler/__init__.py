"""``mx.profiler``: MXNet 1.9's profiler.

``set_config(...)`` then ``set_state('run')``: every function the engine runs (operators,
copies, executor segments, custom ops' Python code) is recorded with its span, device and
thread, with the program's own ``Domain``/``Task``/``Frame``/``Event``/``Counter``/``Marker``
objects. ``dump()`` writes the Chrome trace-event file (``filename``, default
``profile.json``; chrome://tracing reads it); ``dumps()`` prints aggregate statistics as a
table or JSON when ``aggregate_stats`` is on. Stopped (the default), the profiler costs the
engine one flag test per function. ``MXNET_PROFILER_AUTOSTART=1`` starts it with the
first engine and dumps at exit; ``MXNET_PROFILER_MODE`` sets what it records (bits:
symbolic 1, imperative 2, api 4, memory 8; MXNet's default 13).
"""

from __future__ import annotations

import warnings

from .._runtime.base import MXNetError, ParamError, did_you_mean
from ._objects import Counter, Domain, Event, Frame, Marker, Task, current_scope, scope
from ._record import API, IMPERATIVE, MEMORY, SYMBOLIC, _flag, profiler
from ._stats import SORT_KEYS

__all__ = ["set_config", "set_state", "dump", "dumps", "pause", "resume", "Domain", "Task",
           "Frame", "Event", "Counter", "Marker", "scope", "current_scope",
           "profiler_set_config", "profiler_set_state", "dump_profile"]

_DEFAULTS = {"profile_all": False, "profile_symbolic": True, "profile_imperative": True,
             "profile_memory": True, "profile_api": True, "filename": "profile.json",
             "continuous_dump": True, "dump_period": 1.0, "aggregate_stats": False,
             "profile_process": "worker"}
_MODE_BITS = {"profile_symbolic": SYMBOLIC, "profile_imperative": IMPERATIVE,
              "profile_api": API, "profile_memory": MEMORY}


def set_config(**kwargs):
    """Configure the profiler (keywords only; each one not given takes MXNet's default):
    ``profile_all``, ``profile_symbolic``, ``profile_imperative``, ``profile_memory``,
    ``profile_api`` (what is recorded), ``filename`` (the trace file, started afresh),
    ``continuous_dump`` and ``dump_period`` (append to the file every period seconds),
    ``aggregate_stats`` (keep statistics for ``dumps``), ``profile_process``."""
    for key in kwargs:
        if key not in _DEFAULTS:
            raise ParamError(f"profiler.set_config: unknown parameter {key!r}"
                             f"{did_you_mean(key, _DEFAULTS)}; known: {', '.join(_DEFAULTS)}")
    cfg = {**_DEFAULTS, **kwargs}
    _check_process(cfg["profile_process"], "set_config")
    mode = 0
    every = _flag(cfg["profile_all"], "profile_all")
    for key, bit in _MODE_BITS.items():
        if every or _flag(cfg[key], key):
            mode |= bit
    try:
        period = float(cfg["dump_period"])
    except (TypeError, ValueError):
        raise ParamError(f"profiler.set_config: dump_period must be a number of seconds, "
                         f"got {cfg['dump_period']!r}") from None
    profiler.configure(mode, str(cfg["filename"]), _flag(cfg["continuous_dump"],
                                                         "continuous_dump"),
                       period, _flag(cfg["aggregate_stats"], "aggregate_stats"))


def set_state(state="stop", profile_process="worker"):
    """Start (``'run'``) or stop (``'stop'``) recording."""
    _check_process(profile_process, "set_state")
    if state not in ("run", "stop"):
        raise ParamError(f"profiler.set_state: state must be 'run' or 'stop', got {state!r}")
    profiler.set_state(state == "run")


def dump(finished=True, profile_process="worker"):
    """Write what was recorded to the trace file; ``finished`` closes it (a continuous
    profile keeps appending until then)."""
    _check_process(profile_process, "dump")
    if not profiler.output:
        raise MXNetError("profiler.dump: the profiler hasn't been run; configure it and "
                         "set_state('run') first")
    profiler.dump(finished is True)


def dumps(reset=False, format="table", sort_by="total", ascending=False):
    """The aggregate statistics (``aggregate_stats=True``) as MXNet prints them:
    ``format`` 'table' or 'json', rows of each category sorted by ``sort_by`` ('total',
    'avg', 'min', 'max', 'count'); ``reset`` clears them after. Empty without
    aggregate statistics."""
    for what, value, allowed in (("format", format, ("table", "json")),
                                 ("sort_by", sort_by, SORT_KEYS),
                                 ("ascending", ascending, (False, True)),
                                 ("reset", reset, (False, True))):
        if value not in allowed:
            raise ParamError(f"profiler.dumps: invalid {what} {value!r}; supported: "
                             f"{', '.join(map(repr, allowed))}")
    with profiler.lock:
        if profiler.output:
            profiler.dump(False)      # what was recorded so far counts
        stats = profiler.stats
        if stats is None:
            return ""
        text = (stats.table_text if format == "table" else stats.json_text)(sort_by,
                                                                            ascending)
        if reset:
            stats.clear()
        return text


def pause(profile_process="worker"):
    """Stop recording until ``resume``."""
    _check_process(profile_process, "pause")
    profiler.set_paused(True)


def resume(profile_process="worker"):
    """Record again after ``pause``."""
    _check_process(profile_process, "resume")
    profiler.set_paused(False)


def _check_process(process, what):
    if process == "worker":
        return
    if process == "server":
        raise MXNetError(f"profiler.{what}: profile_process='server' profiles the servers "
                         f"of a distributed KVStore, which mxnext's profiler does not "
                         f"reach; profile each worker process instead")
    raise ParamError(f"profiler.{what}: profile_process must be 'worker' or 'server', "
                     f"got {process!r}")


# -- MXNet's deprecated spellings -------------------------------------------------------
def profiler_set_config(mode="symbolic", filename="profile.json"):
    """Deprecated: ``set_config(profile_<mode>=True, filename=...)``."""
    warnings.warn("profiler.profiler_set_config() is deprecated. Please use "
                  "profiler.set_config() instead", stacklevel=2)
    set_config(**{f"profile_{mode}": True, "filename": filename})


def profiler_set_state(state="stop"):
    """Deprecated: ``set_state``."""
    warnings.warn("profiler.profiler_set_state() is deprecated. Please use "
                  "profiler.set_state() instead", stacklevel=2)
    set_state(state)


def dump_profile():
    """Deprecated: ``dump(True)``."""
    warnings.warn("profiler.dump_profile() is deprecated. Please use profiler.dump() "
                  "instead", stacklevel=2)
    dump(True)


def _autostart():
    """``MXNET_PROFILER_AUTOSTART``: record from the first engine on (what
    ``MXNET_PROFILER_MODE`` selects) and write ``profile.json`` at exit."""
    if not profiler.running:
        profiler.set_state(True)
