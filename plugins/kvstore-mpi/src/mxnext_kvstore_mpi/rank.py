"""One worker under ``mxnext launch``: ``python -m mxnext_kvstore_mpi.rank python script.py
args``.

It runs the worker as a child and copies the child's stdout and stderr to its own, each line
prefixed with ``[rank k] `` (k from the MPI launcher's environment), whole lines only, so that
the workers' output never interleaves mid-line; the bytes are passed on as they came, a last
line without a newline getting one. On Linux the kernel kills the child when this process ends
(``PR_SET_PDEATHSIG``). It exits with the child's status as an exit code (128 + signal for a
signal). mpiexec then sees a worker killed by a signal as one that ended with an error, keeps
the other workers running until they have named it, and when the job ends (``MPI_Abort``)
takes every worker down with its wrapper.
"""

import ctypes
import os
import signal
import subprocess
import sys
import threading

_PR_SET_PDEATHSIG = 1
_RANK_VARS = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK")


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def prefix() -> bytes:
    """``[rank k] `` for this worker's MPI rank (``?`` where the launcher sets none)."""
    rank = next((os.environ[v] for v in _RANK_VARS if v in os.environ), "?")
    return f"[rank {rank}] ".encode()


def copy_lines(src: int, dst: int, head: bytes) -> None:
    """Copy ``src`` to ``dst`` until end of file, each line prefixed with ``head``."""
    pending = b""
    while chunk := os.read(src, 1 << 16):
        *lines, pending = (pending + chunk).split(b"\n")
        if lines:
            os.write(dst, b"".join(head + line + b"\n" for line in lines))
    if pending:
        os.write(dst, head + pending + b"\n")
    os.close(src)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # the worker gets Ctrl-C itself
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)       # mpiexec's "a rank failed" notice
    linux = sys.platform.startswith("linux")
    child = subprocess.Popen(sys.argv[1:], close_fds=False, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, preexec_fn=_die_with_parent if linux else None)
    signal.signal(signal.SIGTERM, lambda signum, frame: child.send_signal(signum))
    head = prefix()
    copiers = [threading.Thread(target=copy_lines, args=(pipe.fileno(), fd, head), daemon=True)
               for pipe, fd in ((child.stdout, 1), (child.stderr, 2))]
    for t in copiers:
        t.start()
    code = child.wait()
    for t in copiers:   # a process the worker left behind may hold a pipe open: bounded wait
        t.join(timeout=10)
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
