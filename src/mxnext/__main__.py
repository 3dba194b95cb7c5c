"""``python -m mxnext run script.py [args]`` (or ``run -m module [args]``): run a program
written for MXNet unmodified, its ``import mxnet`` giving mxnext (``mxnext.mxnet_alias``),
with numpy's 1.x builtin-type aliases (``np.float``, ...) back in place.
``mxnext run`` (the console command) is the same."""

import os
import runpy
import sys

from . import _numpy_aliases
from .mxnet_alias import install

USAGE = "usage: python -m mxnext run SCRIPT.py [ARGS...] | run -m MODULE [ARGS...]"
HELP = f"""{USAGE}

Run a program written for MXNet 1.x unmodified: its 'import mxnet' gives mxnext.
The console command 'mxnext run' is the same; 'mxnext --help' lists the other commands."""


def main(argv) -> int:
    if argv[:1] in (["-h"], ["--help"]) or argv[:2] in (["run", "-h"], ["run", "--help"]):
        print(HELP)
        return 0
    if len(argv) < 2 or argv[0] != "run" or (argv[1] == "-m" and len(argv) < 3):
        print(USAGE, file=sys.stderr)
        return 2
    if argv[1] != "-m" and not os.path.isfile(argv[1]):
        print(f"mxnext run: no such script {argv[1]!r} (from {os.getcwd()})", file=sys.stderr)
        return 2
    install()
    _numpy_aliases.restore()
    if argv[1] == "-m":
        sys.argv = argv[2:]
        runpy.run_module(argv[2], run_name="__main__", alter_sys=True)
    else:
        sys.argv = argv[1:]
        sys.path.insert(0, os.path.dirname(os.path.abspath(argv[1])))
        runpy.run_path(argv[1], run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
