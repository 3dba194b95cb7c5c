"""Running real MPI jobs from the tests (the ``jobs`` fixture): ``mpiexec -n N`` (or
``mxnext launch``) over a script, each rank reporting to ``<dir>/rank-<r>.json``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

BIN = Path(sys.executable).parent
MPIEXEC = str(BIN / "mpiexec")
MXNEXT = str(BIN / "mxnext")


def env(**extra) -> dict:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("MXNEXT_", "PMI_"))}
    out.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", **extra)
    return out


def write_script(folder: Path, source: str) -> Path:
    path = folder / "job.py"
    path.write_text(textwrap.dedent(source))
    return path


def run(cmd, extra_env=None, timeout=240) -> subprocess.CompletedProcess:
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=timeout,
                          env=env(**(extra_env or {})))


def mpiexec(n, script, *args, extra_env=None, timeout=240):
    return run([MPIEXEC, "-n", n, sys.executable, script, *args], extra_env, timeout)


def reports(folder: Path, n: int) -> list[dict]:
    """Each rank's report; a rank that wrote none gets ``None``."""
    out = []
    for r in range(n):
        path = folder / f"rank-{r}.json"
        out.append(json.loads(path.read_text()) if path.exists() else None)
    return out


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie counts as ended)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_bytes()
    except FileNotFoundError:
        return True
    return stat.rsplit(b")", 1)[1].split()[0] in (b"Z", b"X")


@pytest.fixture
def jobs():
    return SimpleNamespace(MXNEXT=MXNEXT, sys_executable=sys.executable, env=env,
                           write_script=write_script, run=run, mpiexec=mpiexec,
                           reports=reports, gone=gone)
