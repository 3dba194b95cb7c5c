"""All-or-nothing file writes: every file mxnext writes goes through here.

The bytes go to a temp file beside the target, named ``.<target>.<host>-<pid>.<random>.tmp``
(``<host>``: 8 hex digits of the host name's hash), are flushed and fsynced, and the temp
file is renamed over the target: a reader, or a process killed mid-write, sees the old
complete file or the new complete one, never a part. A write that fails removes its temp
file; one killed outright leaves it, and the next write into the same folder removes every
such file (of any target) whose writer (same host, that pid) is gone. Errors name the target, never the
temp file. A symlinked target is written through (its link stays a link).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import socket
import stat
import tempfile

__all__ = ["AtomicFile", "write_atomic"]

_HOST = hashlib.sha1(socket.gethostname().encode()).hexdigest()[:8]
_TEMP = re.compile(r"\..+\.(?P<host>[0-9a-f]{8})-(?P<pid>[0-9]+)\.[^.]+\.tmp\Z", re.DOTALL)


def _stem(path: str) -> str:
    """The target's name as temp names carry it (hashed when too long for a file name)."""
    name = os.path.basename(path)
    return name if len(name.encode()) <= 200 else hashlib.sha1(name.encode()).hexdigest()


def _alive(pid: int) -> bool:
    """Whether process ``pid`` of this host still runs."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:       # another user's process
        return True
    return True


def _remove_stale(folder: str) -> None:
    """Remove the temp files that dead writers of this host left in ``folder``."""
    if os.name != "posix":        # os.kill(pid, 0) is no liveness probe elsewhere
        return
    mine = os.getpid()
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        found = _TEMP.match(entry.name)
        if not found or found["host"] != _HOST:
            continue
        pid = int(found["pid"])
        if pid != mine and not _alive(pid):
            try:
                os.unlink(entry.path)
            except OSError:
                pass


def _umask() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)        # no getter elsewhere: read it and put it back
    os.umask(mask)
    return mask


def _fsync_dir(folder: str) -> None:
    """Make the rename durable; best effort (some platforms cannot sync a folder, and the
    file is complete and in place by now)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _naming(exc: OSError, target: str) -> OSError:
    """``exc`` again (same class and errno), naming ``target`` instead of a temp file."""
    return type(exc)(exc.errno, exc.strerror or str(exc), target)


class AtomicFile:
    """A binary file that becomes ``target`` at :meth:`commit`, or never.

    ``file`` is the open temp file to write to; with ``append=True`` it starts with the
    target's current bytes. As a context manager it commits on success and discards on an
    error: ``with AtomicFile(path) as f: f.write(...)``."""

    def __init__(self, target, append: bool = False):
        self.target = os.fspath(target)
        path = os.path.realpath(self.target) if os.path.islink(self.target) else self.target
        self._path = os.path.abspath(path)
        folder, stem = os.path.dirname(self._path), _stem(self._path)
        _remove_stale(folder)
        try:
            fd, self._tmp = tempfile.mkstemp(dir=folder, prefix=f".{stem}.{_HOST}-{os.getpid()}.",
                                             suffix=".tmp")
        except OSError as exc:
            raise _naming(exc, self.target) from None
        self.file = os.fdopen(fd, "wb")
        try:
            try:
                mode = stat.S_IMODE(os.stat(self._path).st_mode)   # what open(..., "w") keeps
            except FileNotFoundError:
                mode = 0o666 & ~_umask()                          # what open(..., "w") makes
            os.fchmod(fd, mode)
            if append and os.path.exists(self._path):
                with open(self._path, "rb") as old:
                    shutil.copyfileobj(old, self.file)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise _naming(exc, self.target) from None
            raise

    def commit(self) -> None:
        """Flush, sync and rename the temp file over the target."""
        if self.file is None:
            return
        try:
            self.file.flush()
            os.fsync(self.file.fileno())
            self.file.close()
            self.file = None
            os.replace(self._tmp, self._path)
        except BaseException as exc:
            self.discard()
            if isinstance(exc, OSError):
                raise _naming(exc, self.target) from None
            raise
        _fsync_dir(os.path.dirname(self._path))

    def discard(self) -> None:
        """Drop what was written; the target stays as it was."""
        try:
            if self.file is not None:
                self.file.close()
        except OSError:
            pass
        finally:
            self.file = None
            try:
                os.unlink(self._tmp)
            except OSError:
                pass

    def __enter__(self):
        return self.file

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.commit()
        else:
            self.discard()


def write_atomic(target, payload, append: bool = False) -> None:
    """Write ``payload`` (bytes, or str as UTF-8) to ``target`` all at once or not at all;
    ``append=True`` adds it to the target's current bytes."""
    if isinstance(payload, str):
        payload = payload.encode("utf-8")
    with AtomicFile(target, append) as f:
        f.write(payload)
