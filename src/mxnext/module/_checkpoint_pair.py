"""A Module checkpoint's ``prefix-%04d.params`` and ``prefix-%04d.states`` as one pair.

The ``.states`` file ends, after its pickle (which ``pickle.loads``, MXNet's included, stops
reading at), with a line naming the SHA-256 of the ``.params`` bytes saved with it. Both
files are written and synced in full before either is renamed into place, and loading the
pair compares that line with the ``.params`` bytes it read: a pair that an interrupted save
left mixed (one file new, the other old) raises an error naming both files instead of
training on states of other parameters. A ``.states`` file without the line (MXNet's, or
one ``save_optimizer_states`` wrote alone) pairs with any ``.params``.
"""

from __future__ import annotations

import hashlib
import os

from .._atomic_write import AtomicFile
from ..optimizer._states_file import StatesFormatError

__all__ = ["params_digest", "save_pair", "check_pair"]

_TAG = b"\nmxnext-params-sha256:"
_TAIL = len(_TAG) + 64 + 1          # the tag, 64 hex digits, a newline


def params_digest(data) -> str:
    """The SHA-256 (hex) of ``.params`` bytes, as the ``.states`` file of the pair names it."""
    return hashlib.sha256(data).hexdigest()


def save_pair(params_name, params_data, states_name, states_data) -> None:
    """Write both files so that each is whole and they pair (see the module docstring)."""
    line = _TAG + params_digest(params_data).encode("ascii") + b"\n"
    outs = [AtomicFile(states_name)]
    try:
        outs.append(AtomicFile(params_name))
        for out, data in zip(outs, (states_data + line, params_data)):
            out.file.write(data)
            out.file.flush()
            os.fsync(out.file.fileno())
    except BaseException:
        for out in outs:
            out.discard()
        raise
    for out in outs:           # renamed one right after the other: each was synced above
        out.commit()


def check_pair(params_name, digest, states_name, what: str) -> None:
    """Raise ``StatesFormatError`` when ``states_name`` was saved with a ``.params`` file
    other than the one ``params_name`` held (bytes of SHA-256 ``digest``)."""
    with open(states_name, "rb") as f:
        f.seek(max(0, f.seek(0, os.SEEK_END) - _TAIL))
        tail = f.read()
    if len(tail) != _TAIL or not tail.startswith(_TAG):
        return
    if tail[len(_TAG):-1].decode("ascii", "replace") != digest:
        raise StatesFormatError(
            f"{what}: {os.fspath(states_name)!r}",
            f"saved with other parameters than those in {os.fspath(params_name)!r} (a save "
            f"of that epoch was interrupted between the two files, or one of them was saved "
            f"again alone); save the checkpoint again, or load it without "
            f"load_optimizer_states to start the optimizer afresh")
