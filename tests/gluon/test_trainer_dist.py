"""gluon.Trainer over the MPI plugin's dist_sync store: a real ``mpiexec -n 2`` job (started
as plugins/kvstore-mpi/tests do) whose ranks end with the same parameters, those of the
summed gradients applied to rank 0's initial values."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

MPIEXEC = Path(sys.executable).parent / "mpiexec"

JOB = '''
import sys
import numpy as np
import mxnext as mx
from mxnext import autograd, gluon

folder = sys.argv[1]
out = {}
for update_on_kvstore in (True, False):
    kv = mx.kv.create("dist_sync")
    rank = kv.rank
    w = gluon.Parameter("w", shape=(2, 3))
    w.initialize(ctx=[mx.cpu(0), mx.cpu(1)], init="zeros")
    w.set_data(mx.nd.arange(6).reshape((2, 3)) + 10 * rank)   # rank 0's values win
    trainer = gluon.Trainer([w], "sgd", {"learning_rate": 0.1, "momentum": 0.5}, kvstore=kv,
                            update_on_kvstore=update_on_kvstore)
    for step in range(3):
        with autograd.record():
            losses = [(x * (rank + 1 + step)).sum() for x in w.list_data()]
        autograd.backward(losses)
        trainer.step(4)
    out[str(update_on_kvstore)] = np.stack([d.asnumpy() for d in w.list_data()])
np.savez(f"{folder}/rank-{rank}.npz", **out)
'''


def _mpiexec(n, script, *args):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MXNEXT_", "PMI_"))}
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return subprocess.run([str(MPIEXEC), "-n", str(n), sys.executable, str(script), *args],
                          capture_output=True, text=True, timeout=240, env=env)


@pytest.mark.skipif(not MPIEXEC.exists(), reason="no mpiexec in this environment (mpich)")
def test_two_ranks_end_with_identical_parameters(tmp_path):
    script = tmp_path / "job.py"
    script.write_text(textwrap.dedent(JOB))
    proc = _mpiexec(2, script, tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    ranks = [np.load(tmp_path / f"rank-{r}.npz") for r in range(2)]
    w, mom = np.arange(6, dtype=np.float64).reshape(2, 3), 0.0
    for step in range(3):
        # both contexts of both ranks: (1 + step) + (2 + step) per context, twice
        grad = 2 * ((1 + step) + (2 + step)) / 4
        mom = 0.5 * mom - 0.1 * grad
        w = w + mom
    for key in ("True", "False"):
        for got in ranks:
            for copy in got[key]:
                np.testing.assert_allclose(copy, w, rtol=1e-5)
        assert (ranks[0][key] == ranks[1][key]).all()
