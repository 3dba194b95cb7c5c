"""``mxnext launch -n N [--launcher local|mpi] script.py args``: run a training script as N
workers of the dist KVStores, for users of MXNet's ``tools/launch.py``.

Each worker runs under ``mxnext_kvstore_mpi.rank``, which prefixes every line it prints with
``[rank k] `` (and, on Linux, keeps one killed by a signal from ending the job at once).
``local`` starts the N workers on this machine with the ``mpiexec`` of this Python
environment (the ``mpich`` wheel's), told to keep the other ranks running when one dies
(``-disable-auto-cleanup``): every other rank reports which rank it lost before the job
ends. ``mpi`` hands the job to the ``mpiexec`` on ``PATH`` (a cluster's MPI), with a
hostfile and further ``mpiexec`` options if given.
"""

from __future__ import annotations

import os
import shlex
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import click

__all__ = ["launch", "command"]


def _local_mpiexec() -> str:
    here = Path(sys.executable).parent / "mpiexec"
    found = str(here) if here.exists() else shutil.which("mpiexec")
    if found is None:
        raise click.ClickException(f"no mpiexec next to {sys.executable} nor on PATH; "
                                   f"`pip install mpich` provides one")
    return found


def command(num_workers, launcher, script, args, hostfile=None, mpi_args="") -> list[str]:
    """The command line that runs ``script args`` as ``num_workers`` workers."""
    if launcher == "local":
        head = [_local_mpiexec(), "-disable-auto-cleanup", "-n", str(num_workers)]
    else:
        mpiexec = shutil.which("mpiexec")
        if mpiexec is None:
            raise click.ClickException("--launcher mpi: no mpiexec on PATH")
        head = [mpiexec, "-n", str(num_workers)]
        if hostfile:
            head += ["-f" if _is_mpich(mpiexec) else "--hostfile", hostfile]
    wrapper = [sys.executable, "-m", "mxnext_kvstore_mpi.rank"]
    return [*head, *shlex.split(mpi_args), *wrapper, sys.executable, script, *args]


def _is_mpich(mpiexec) -> bool:
    proc = subprocess.run([mpiexec, "--version"], capture_output=True, text=True)
    return "HYDRA" in proc.stdout or "MPICH" in proc.stdout


@click.command(context_settings={"ignore_unknown_options": True,
                                 "allow_interspersed_args": False})
@click.option("-n", "--num-workers", type=click.IntRange(min=1), required=True,
              help="How many workers (MPI ranks) to start.")
@click.option("--launcher", type=click.Choice(["local", "mpi"]), default="local",
              show_default=True,
              help="local: all workers on this machine; mpi: the mpiexec on PATH decides.")
@click.option("-H", "--hostfile", type=click.Path(exists=True, dir_okay=False),
              help="Hosts to run on (--launcher mpi).")
@click.option("--mpi-args", default="", help="More options for mpiexec, as one string.")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True),
              help="Seconds a worker waits for the others before naming the missing one "
                   "(MXNEXT_KVSTORE_TIMEOUT; default 60).")
@click.option("--dry-run", is_flag=True, help="Print the command instead of running it.")
@click.argument("script", type=click.Path(exists=True, dir_okay=False))
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def launch(num_workers, launcher, hostfile, mpi_args, timeout, dry_run, script, args):
    """Run SCRIPT ARGS as NUM_WORKERS workers of a dist KVStore (dist_sync, ...)."""
    if hostfile and launcher != "mpi":
        raise click.UsageError("--hostfile goes with --launcher mpi")
    cmd = command(num_workers, launcher, script, args, hostfile, mpi_args)
    if dry_run:
        click.echo(shlex.join(cmd))
        return
    env = dict(os.environ)
    if timeout is not None:
        env["MXNEXT_KVSTORE_TIMEOUT"] = repr(timeout)
    proc = subprocess.Popen(cmd, env=env)
    for sig in (signal.SIGINT, signal.SIGTERM):    # mpiexec stops the workers on these
        signal.signal(sig, lambda signum, frame: proc.send_signal(signum))
    sys.exit(proc.wait())
