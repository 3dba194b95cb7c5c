"""One worker under ``mxnext launch --launcher local``: ``python -m mxnext_kvstore_mpi.rank
python script.py args``.

It runs the worker as a child that the kernel kills when this process ends
(``PR_SET_PDEATHSIG``), and exits with the child's status as an exit code (128 + signal for a
signal). mpiexec then sees a worker killed by a signal as one that ended with an error, keeps
the other workers running until they have named it, and when the job ends (``MPI_Abort``)
takes every worker down with its wrapper.
"""

import ctypes
import signal
import subprocess
import sys

_PR_SET_PDEATHSIG = 1


def _die_with_parent():
    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)


def main():
    signal.signal(signal.SIGINT, signal.SIG_IGN)        # the worker gets Ctrl-C itself
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)       # mpiexec's "a rank failed" notice
    child = subprocess.Popen(sys.argv[1:], close_fds=False, preexec_fn=_die_with_parent)
    signal.signal(signal.SIGTERM, lambda signum, frame: child.send_signal(signum))
    code = child.wait()
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__":
    main()
