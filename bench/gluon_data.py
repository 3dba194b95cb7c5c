"""``gluon.data.DataLoader`` throughput, side by side: samples/s in mxnext and in MXNet 1.9.1
(printed, never asserted).

    .venv/bin/python bench/gluon_data.py [--epochs E]

Each side runs the same loop in its own interpreter (mxnext's through the ``mxnet`` import
alias; MXNet's from ``MXNEXT_MXNET_PYTHON``, default /tmp/mxvenv/bin/python, skipped when it
cannot import mxnet): 8192 MNIST-sized samples (784 float32 and a label) in batches of 128,
shuffled, with 0 and 2 worker processes, plain and with a per-sample transform (scale and
shift in numpy); every batch is read back with ``asnumpy``. One warm-up epoch, then the
median of ``--epochs`` timed ones.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

LOOP = r"""
import json, statistics, sys, time
import numpy as np
if sys.argv[1] == "mxnext":
    import mxnext.mxnet_alias
    mxnext.mxnet_alias.install()
import mxnet as mx
from mxnet.gluon.data import ArrayDataset, DataLoader

def scale(x, y):
    return (x - 0.5) * 2.0, y

epochs = int(sys.argv[2])
x = np.random.RandomState(0).uniform(size=(8192, 784)).astype(np.float32)
y = np.arange(8192, dtype=np.float32) % 10
results = {}
for workers in (0, 2):
    for name, ds in (("plain", ArrayDataset(x, y)),
                     ("transform", ArrayDataset(x, y).transform(scale))):
        loader = DataLoader(ds, batch_size=128, shuffle=True, num_workers=workers)
        times = []
        for epoch in range(epochs + 1):
            start = time.perf_counter()
            for data, label in loader:
                data.asnumpy(), label.asnumpy()
            times.append(time.perf_counter() - start)
        results[f"{name}, {workers} workers"] = len(x) / statistics.median(times[1:])
        del loader
print(json.dumps(results))
"""


def run(python, side, epochs):
    out = subprocess.run([python, "-c", LOOP, side, str(epochs)], capture_output=True,
                         text=True, cwd=os.path.dirname(os.path.abspath(__file__)))
    if out.returncode:
        print(f"{side} failed:\n{out.stderr[-2000:]}", file=sys.stderr)
        return None
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=3)
    args = parser.parse_args()
    sides = {"mxnext": run(sys.executable, "mxnext", args.epochs)}
    mxnet = os.environ.get("MXNEXT_MXNET_PYTHON", "/tmp/mxvenv/bin/python")
    if os.path.exists(mxnet) and subprocess.run([mxnet, "-c", "import mxnet"],
                                                capture_output=True).returncode == 0:
        sides["MXNet 1.9.1"] = run(mxnet, "mxnet", args.epochs)
    else:
        print(f"note: MXNet 1.9.1 skipped: {mxnet} cannot import mxnet")
    sides = {k: v for k, v in sides.items() if v}
    cases = next(iter(sides.values()), {})
    print(f"{'DataLoader samples/s':28}" + "".join(f"{k:>14}" for k in sides))
    for case in cases:
        print(f"{case:28}" + "".join(f"{v[case]:14.0f}" for v in sides.values()))


if __name__ == "__main__":
    main()
