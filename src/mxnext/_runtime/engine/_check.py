"""``MXNEXT_ENGINE_CHECK=1``: the engine verifies at run time what its dependency rule takes
on trust (docs/internals.md, "Engine check").

Memory is known by the vars that guard it: a pooled block by its NDArray chunk's var
(``storage``), an executor arena's groups by their group vars (``executor``). Each block has a
generation, bumped when the pool hands it out and when it comes back. Then:

- a function (or a wait) on a var whose memory changed generation since the var got it ran
  on memory freed, or handed to another owner, before the work using it was done;
- a synchronous host function that changes the bytes of a var it declared read-only wrote
  outside its declared mutable vars (no writer of that var can run meanwhile: the rule).

A failed check raises ``EngineCheckError``, stored on the function's vars like any error.
Off by default: it costs a checksum of every input and a lock per function.
"""

from __future__ import annotations

import os
import threading
import weakref
import zlib

from ..base import EngineError

__all__ = ["ENABLED", "EngineCheckError", "bind", "handed_out", "returned", "run", "verify"]

ENABLED = os.environ.get("MXNEXT_ENGINE_CHECK", "0") not in ("", "0")


class EngineCheckError(EngineError):
    """What ``MXNEXT_ENGINE_CHECK`` found: a use of freed memory, or an undeclared write."""


_lock = threading.RLock()      # a collected array may free its block inside a check
_gens: dict = {}                            # id(raw) -> generation of a pooled block
_regions = weakref.WeakKeyDictionary()      # Var -> {(id(raw), start, stop): [raw, gen]}


def handed_out(raw) -> None:
    """The pool gives ``raw`` to a new owner."""
    with _lock:
        _gens[id(raw)] = _gens.get(id(raw), 0) + 1


returned = handed_out      # back in the pool: a new generation too


def bind(var, raw, start, stop) -> None:
    """``var`` guards bytes ``[start, stop)`` of block ``raw`` from now on."""
    with _lock:
        regions = _regions.get(var)
        if regions is None:
            regions = _regions[var] = {}
        regions[id(raw), start, stop] = [raw, _gens.get(id(raw), 0)]


def _stale(var):
    """A region of ``var`` whose block changed hands since it was bound, if any."""
    regions = _regions.get(var)
    if regions:
        for (key, start, stop), (_raw, gen) in regions.items():
            if _gens.get(key, 0) != gen:
                return stop - start
    return None


def verify(vars_, name) -> None:
    """Raise if memory guarded by one of ``vars_`` went back to the pool after it was bound."""
    with _lock:
        for v in vars_:
            nbytes = _stale(v)
            if nbytes is not None:
                raise EngineCheckError(
                    f"engine check: {name!r} uses {v!r}, whose {nbytes} bytes went back to "
                    f"the pool (and may serve another array) before the work using them was "
                    f"done: memory freed too early")


def _checksums(const):
    """(var, crc32) per host region of the read-only vars."""
    out = []
    with _lock:
        items = [(v, list(_regions.get(v, {}).items())) for v in const]
    for v, regions in items:
        for (_key, start, stop), (raw, _gen) in regions:
            if type(raw).__module__ == "numpy":
                out.append((v, raw, start, stop, zlib.crc32(raw[start:stop])))
    return out


def run(call, fn, rctx, const, mutate, name) -> None:
    """``call(fn, rctx, const, mutate, name)`` (the engine's run of sync ``fn``) with the
    checks; checksums only where ``fn`` runs on the host (a stream device's function only
    enqueues its work)."""
    verify((*const, *mutate), name)
    sums = _checksums(const) if rctx.runner is None else ()
    call(fn, rctx, const, mutate, name)
    for v, raw, start, stop, crc in sums:
        if zlib.crc32(raw[start:stop]) != crc:
            raise EngineCheckError(
                f"engine check: {name!r} changed {v!r}, which it declared read-only (a write "
                f"outside its mutable vars, or an in-place plan over an input)")
