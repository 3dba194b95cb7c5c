"""``dist_sync`` pushpull bandwidth beside a raw mpi4py ``Allreduce`` (printed, never asserted).

Run from the repository root (it starts itself under the environment's ``mpiexec -n 2``):

    .venv/bin/python bench/kvstore.py [--ranks N] [--rounds R]

For 1, 16 and 64 MB of float32 each rank times, in alternating rounds, (a) a raw
``MPI.COMM_WORLD.Allreduce`` of the buffer into another and (b) ``kv.pushpull(key, grad,
out=out)`` on a ``dist_sync`` store followed by ``out.wait_to_read()`` (the sum is readable;
the store's own copy of it goes on in the background and is waited for untimed); both start
after a barrier. Bandwidth is the buffer size over the median time (the same definition for
both); the ratio is pushpull's over Allreduce's.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SIZES_MB = (1, 16, 64)


def under_mpi() -> bool:
    return any(v in os.environ for v in ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK"))


def launch(args) -> int:
    mpiexec = Path(sys.executable).parent / "mpiexec"
    cmd = [str(mpiexec), "-n", str(args.ranks), sys.executable, __file__,
           "--rounds", str(args.rounds)]
    return subprocess.run(cmd).returncode


def measure(rounds):
    import mxnext as mx
    from mpi4py import MPI
    kv = mx.kv.create("dist_sync")
    world = MPI.COMM_WORLD
    rows = []
    for mb in SIZES_MB:
        n = mb * (1 << 20) // 4
        grad = mx.nd.ones((n,)) * (kv.rank + 1)
        out = mx.nd.zeros((n,))
        kv.init(mb, mx.nd.zeros((n,)))
        a = np.full(n, kv.rank + 1, np.float32)
        b = np.empty_like(a)
        raw, store = [], []
        for _ in range(rounds + 1):          # the first round warms up both
            world.Barrier()
            t0 = time.perf_counter()
            world.Allreduce(a, b)
            raw.append(time.perf_counter() - t0)
            world.Barrier()
            t0 = time.perf_counter()
            kv.pushpull(mb, grad, out=out)
            out.wait_to_read()
            store.append(time.perf_counter() - t0)
            mx.nd.waitall()                  # the store's own copy of the sum, untimed
        expect = kv.num_workers * (kv.num_workers + 1) / 2
        assert out.asnumpy()[0] == expect and b[0] == expect
        t_raw, t_kv = statistics.median(raw[1:]), statistics.median(store[1:])
        rows.append((mb, mb / 1024 / t_raw, mb / 1024 / t_kv))
    return kv, rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=15)
    args = parser.parse_args()
    if not under_mpi():
        sys.exit(launch(args))
    kv, rows = measure(args.rounds)
    if kv.rank == 0:
        print(f"dist_sync pushpull vs mpi4py Allreduce, {kv.num_workers} ranks, float32, "
              f"median of {args.rounds} rounds (GB/s = size / time)")
        print(f"{'size':>6}  {'Allreduce GB/s':>14}  {'pushpull GB/s':>13}  {'ratio':>5}")
        for mb, raw, store in rows:
            print(f"{mb:>4}MB  {raw:>14.2f}  {store:>13.2f}  {store / raw:>5.2f}")


if __name__ == "__main__":
    main()
