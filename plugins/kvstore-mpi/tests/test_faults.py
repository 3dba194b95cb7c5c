"""Rank faults in real jobs: a rank that hangs, raises or is killed gives every other rank a
RankFault naming it within the timeout (5 s here, MXNEXT_KVSTORE_TIMEOUT), and the job ends
with nothing left running."""

from __future__ import annotations

import time

import pytest

TIMEOUT = 5

STEPS = '''
import json, os, signal, sys, time
from mpi4py import MPI
import mxnext as mx

mode, bad, folder = sys.argv[1], int(sys.argv[2]), sys.argv[3]
MPI.COMM_WORLD.Barrier()                 # every rank has imported mxnext
kv = mx.kv.create("dist_sync")
report = {"rank": kv.rank, "pid": os.getpid()}
path = f"{folder}/rank-{kv.rank}.json"
open(path, "w").write(json.dumps(report))
kv.init(0, mx.nd.zeros((1000,)))         # collective #1; the steps are #2 to #5
out = mx.nd.zeros((1000,))
for step in range(4):
    value = mx.nd.ones((1000,))
    if kv.rank == bad and step == 2:
        if mode == "hang":
            time.sleep(300)
        if mode == "raise":
            raise RuntimeError("rank gives up")
        if mode == "kill":
            os.kill(os.getpid(), signal.SIGKILL)
        if mode == "poison":             # the gradient failed to compute
            mx.engine.get().push_sync(lambda rctx: 1 / 0, value.context, (),
                                      (value._chunk.var,))
    start = time.monotonic()
    try:
        if step == 2 and mode != "poison":
            kv._barrier()
        else:
            kv.pushpull(0, value, out=out)
            out.wait_to_read()
    except mx.MXNetError as exc:
        report.update(error=str(exc), seconds=time.monotonic() - start, step=step)
        open(path, "w").write(json.dumps(report))
        raise
'''


@pytest.mark.parametrize("mode, n, launcher, cause", [
    ("hang", 3, "mpiexec", f"KVStore dist_sync barrier failed: rank 1 did not reach "
                           f"collective #4 within {TIMEOUT} s"),
    ("raise", 2, "mpiexec", "barrier failed: rank 1 ended with an error before collective #4"),
    ("kill", 2, "launch", "barrier failed: rank 1 died before collective #4"),
    ("poison", 2, "mpiexec", "rank 1 failed at collective #4: an array of dist_sync pushpull "
                             "of key 0 holds an error (ZeroDivisionError"),
])
def test_every_other_rank_names_the_rank_at_fault_and_the_job_ends(jobs, tmp_path, mode, n,
                                                                   launcher, cause):
    script = jobs.write_script(tmp_path, STEPS)
    started = time.monotonic()
    if launcher == "launch":
        proc = jobs.run([jobs.MXNEXT, "launch", "-n", str(n), "--timeout", str(TIMEOUT),
                         str(script), mode, 1, tmp_path])
    else:
        proc = jobs.mpiexec(n, script, mode, 1, tmp_path,
                            extra_env={"MXNEXT_KVSTORE_TIMEOUT": str(TIMEOUT)})
    took = time.monotonic() - started
    assert proc.returncode != 0
    got = jobs.reports(tmp_path, n)
    for rep in got[:1] + got[2:]:            # every rank but rank 1
        assert rep is not None and "error" in rep, proc.stdout + proc.stderr
        assert rep["step"] == 2 and cause in rep["error"], rep["error"]
        assert rep["seconds"] < TIMEOUT + 3, rep
    assert took < 120, took                   # the sleeping rank (300 s) was ended
    pids = [rep["pid"] for rep in got]
    deadline = time.monotonic() + 10
    while not all(jobs.gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(jobs.gone(p) for p in pids), "a rank is still running"


def test_a_rank_that_never_starts_its_store_is_named(jobs, tmp_path):
    script = jobs.write_script(tmp_path, '''
        import json, sys, time
        from mpi4py import MPI
        import mxnext as mx
        MPI.COMM_WORLD.Barrier()
        if MPI.COMM_WORLD.rank == 1:
            time.sleep(300)
        try:
            mx.kv.create("dist_sync")
        except mx.MXNetError as exc:
            open(f"{sys.argv[1]}/rank-0.json", "w").write(json.dumps({"error": str(exc)}))
            raise
    ''')
    proc = jobs.mpiexec(2, script, tmp_path, extra_env={"MXNEXT_KVSTORE_TIMEOUT": "3"})
    assert proc.returncode != 0
    assert jobs.reports(tmp_path, 1)[0]["error"] == (
        "KVStore start-up failed: rank 1 did not create a dist KVStore within 3 s (rank 0 "
        "waited; set MXNEXT_KVSTORE_TIMEOUT to wait longer)")


def test_one_worker_fails_at_once_after_a_push_of_an_array_holding_an_error(jobs):
    code = """if True:
        import mxnext as mx
        kv = mx.kv.create("dist_sync")
        kv.init(0, mx.nd.zeros((3,)))
        g = mx.nd.ones((3,))
        mx.engine.get().push_sync(lambda rctx: 1 / 0, g.context, (), (g._chunk.var,))
        kv.push(0, g)
        try:
            kv._barrier()
        except mx.MXNetError as exc:
            print(exc)
    """
    proc = jobs.run([jobs.sys_executable, "-c", code], timeout=60)
    assert ("KVStore dist_sync barrier failed: rank 0 failed at collective #2: an array of "
            "dist_sync push of key 0 holds an error (ZeroDivisionError" in proc.stdout), \
        proc.stdout + proc.stderr


def test_a_bad_timeout_setting_is_named(jobs):
    proc = jobs.run([jobs.sys_executable, "-c", "import mxnext as mx; mx.kv.create('dist_sync')"],
                    {"MXNEXT_KVSTORE_TIMEOUT": "soon"})
    assert "MXNEXT_KVSTORE_TIMEOUT must be a positive number of seconds, got 'soon'" in \
        proc.stderr
