"""DataLoader workers whose loading process is SIGKILLed exit at once and leave no shared
memory; a new pool removes the folders of loading processes nothing cleaned up after."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from mxnext.gluon import data as gdata
from mxnext.gluon.data import _workers

pytestmark = pytest.mark.timeout(120)

LOADER = """
import multiprocessing, sys, time
import numpy as np
from mxnext.gluon import data as gdata

class Slow(gdata.Dataset):
    def __len__(self):
        return 64

    def __getitem__(self, i):
        if i >= 8:                  # the fifth batch on: a worker is busy for minutes
            time.sleep(300)
        return np.full((4,), i, np.float32)

if __name__ == "__main__":
    multiprocessing.set_start_method(sys.argv[1])
    loader = gdata.DataLoader(Slow(), 2, num_workers=2, prefetch=4)
    it = iter(loader)
    next(it)                        # batches 1-3 wait in shared memory, batch 4 is loading
    print(*(p.pid for p in loader._pool._workers.procs), flush=True)
    time.sleep(300)
"""


def _running(pid):
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rpartition(")")[2].split()[0] not in "ZX"
    except FileNotFoundError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("method", ["fork", "spawn"])
def test_workers_of_a_killed_loader_exit_and_remove_its_shared_memory(tmp_path, method):
    script = tmp_path / "loader.py"
    script.write_text(LOADER)
    proc = subprocess.Popen([sys.executable, str(script), method], stdout=subprocess.PIPE,
                            text=True)
    try:
        workers = [int(p) for p in proc.stdout.readline().split()]
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert len(workers) == 2
    pattern = os.path.join(_workers._SHM_DIR, f"mxnext-dataloader-{proc.pid}-*")
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (any(map(_running, workers)) or glob.glob(pattern)):
        time.sleep(0.05)
    assert [pid for pid in workers if _running(pid)] == []
    assert glob.glob(pattern) == []


def test_a_new_pool_removes_folders_of_dead_loading_processes():
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    orphan = os.path.join(_workers._SHM_DIR, f"mxnext-dataloader-{dead.stdout.strip()}-0a1b")
    os.mkdir(orphan)
    with open(os.path.join(orphan, "0-1"), "wb") as f:
        f.write(b"\0" * 4096)
    live = os.path.join(_workers._SHM_DIR, f"mxnext-dataloader-{os.getpid()}-0a1b")
    os.mkdir(live)                               # this process's: not an orphan
    try:
        loader = gdata.DataLoader(np.arange(4.0), 2, num_workers=1)
        assert [b.asnumpy().tolist() for b in loader] == [[0, 1], [2, 3]]
        assert not os.path.exists(orphan) and os.path.exists(live)
    finally:
        os.rmdir(live)
