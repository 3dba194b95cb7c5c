"""A rank whose program raises inside ``Trainer.step`` (its learning-rate schedule fails after
the step's first push was issued): every other rank gets a RankFault naming that rank and its
error at once, not when the timeout (60 s here) runs out, also when it is already in the
transfer the failed rank had arrived at; the failed rank reports its own error; the job ends."""

from __future__ import annotations

import time

import pytest

ERROR = "ValueError: rank 1 cannot compute its learning rate"

STEP_RAISES = '''
import json, os, sys, time
from mpi4py import MPI
import mxnext as mx
from mxnext import autograd, gluon

late, folder = sys.argv[1] == "late", sys.argv[2]
MPI.COMM_WORLD.Barrier()                 # every rank has imported mxnext
kv = mx.kv.create("dist_sync")
report = {"rank": kv.rank, "pid": os.getpid()}
path = f"{folder}/rank-{kv.rank}.json"
open(path, "w").write(json.dumps(report))


class Schedule(mx.lr_scheduler.LRScheduler):
    def __call__(self, num_update):
        if kv.rank == 1 and num_update == 3:             # in the third step
            if late:                     # the step's first push has arrived meanwhile
                time.sleep(0.5)
            raise ValueError("rank 1 cannot compute its learning rate")
        return self.base_lr


net = gluon.nn.Dense(4, in_units=3)
net.initialize()
trainer = gluon.Trainer(net.collect_params(), "sgd", {"lr_scheduler": Schedule(0.1)},
                        kvstore=kv)
x = mx.nd.ones((2, 3))
for step in range(4):
    with autograd.record():
        loss = net(x).sum()
    loss.backward()
    if late and step == 2 and kv.rank == 0:
        time.sleep(1)                    # it reaches the push after rank 1 has raised
    start = time.monotonic()
    try:
        trainer.step(2)
        mx.nd.waitall()
    except Exception as exc:
        report.update(error=f"{type(exc).__name__}: {exc}", step=step,
                      seconds=time.monotonic() - start)
        open(path, "w").write(json.dumps(report))
        raise
'''


@pytest.mark.parametrize("n, mode", [(2, "late"), (3, "late"), (2, "together")])
def test_every_other_rank_names_the_rank_that_raised_in_step_and_its_error(jobs, tmp_path,
                                                                           n, mode):
    script = jobs.write_script(tmp_path, STEP_RAISES)
    proc = jobs.mpiexec(n, script, mode, tmp_path, extra_env={"MXNEXT_KVSTORE_TIMEOUT": "60"})
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0
    got = jobs.reports(tmp_path, n)
    assert got[1] is not None and (got[1].get("error"), got[1].get("step")) == (ERROR, 2), out
    assert "ended first" not in out
    for rep in got[:1] + got[2:]:
        assert rep is not None and "error" in rep, out
        assert rep["step"] == 2, rep
        assert rep["error"].startswith("RankFault: "), rep["error"]
        assert "rank 1 ended with an error" in rep["error"] and ERROR in rep["error"], \
            rep["error"]
        assert rep["seconds"] < 20, rep          # not the 60 s timeout
    if mode == "late":                            # rank 0 was in the transfer
        assert "rank 1 ended with an error during collective #" in got[0]["error"]
    pids = [rep["pid"] for rep in got]
    deadline = time.monotonic() + 10
    while not all(jobs.gone(p) for p in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert all(jobs.gone(p) for p in pids), "a rank is still running"
