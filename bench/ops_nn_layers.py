"""Layer op speed, side by side: mxnext's ops-nn vs MXNet 1.9.1 (oneDNN), forward and backward.

Run from the repo root::

    .venv/bin/python bench/ops_nn_layers.py [--rounds 3] [--repeats 5]

Each side runs in its own fresh interpreter (this file with ``--side mxnext|mxnet``; MXNet's
from ``--mxnet-python``, default /opt/mxnet-ref/bin/python), with the same environment; the
sides take turns within a round (the order rotates), so a machine whose speed drifts slows
them alike, and the table keeps each side's best round. Both run the very same code through
``mx.nd`` and ``mx.autograd``: forward = the op call under ``autograd.record()`` until its
output is ready; backward = ``backward()`` on it until every input gradient is ready.

``--threads N`` sets OMP_NUM_THREADS and OPENBLAS_NUM_THREADS for both sides (one thread
gives the steadiest comparison of the kernels on a shared, busy machine, where a threaded
BLAS call waits on its helper thread whenever another process holds that core);
``--clock cpu`` times the process's CPU time instead of the wall clock (with one thread: the
work done, whatever else the machine runs meanwhile).

Cases: a ResNet 3x3 convolution 64->64 on 32x32, batch 32 (no bias); LeNet's two 5x5
convolutions (1->20 on 28x28 and 20->50 on 12x12, batch 64, with bias); 2x2/2 max pooling
of (32, 64, 32, 32); FullyConnected 1024->1024, batch 128; then the other layers of a CIFAR
ResNet-18 step (strided 3x3 and 1x1 convolutions, the 3-channel stem, BatchNorm, ReLU,
global average pooling). Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

CASES = {  # name: (op, input shapes, kwargs)
    "conv 3x3 64->64 32x32 b32": ("Convolution", [(32, 64, 32, 32), (64, 64, 3, 3)],
                                  {"kernel": (3, 3), "pad": (1, 1), "num_filter": 64,
                                   "no_bias": True}),
    "lenet conv1 5x5 1->20 b64": ("Convolution", [(64, 1, 28, 28), (20, 1, 5, 5), (20,)],
                                  {"kernel": (5, 5), "num_filter": 20}),
    "lenet conv2 5x5 20->50 b64": ("Convolution", [(64, 20, 12, 12), (50, 20, 5, 5), (50,)],
                                   {"kernel": (5, 5), "num_filter": 50}),
    "pool max 2x2/2 (32,64,32,32)": ("Pooling", [(32, 64, 32, 32)],
                                     {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"}),
    "fc 1024->1024 b128": ("FullyConnected", [(128, 1024), (1024, 1024), (1024,)],
                           {"num_hidden": 1024}),
    # the rest of a CIFAR ResNet-18 step
    "conv 3x3/2 64->128 32x32 b32": ("Convolution", [(32, 64, 32, 32), (128, 64, 3, 3)],
                                     {"kernel": (3, 3), "pad": (1, 1), "stride": (2, 2),
                                      "num_filter": 128, "no_bias": True}),
    "conv 1x1/2 64->128 32x32 b32": ("Convolution", [(32, 64, 32, 32), (128, 64, 1, 1)],
                                     {"kernel": (1, 1), "stride": (2, 2), "num_filter": 128,
                                      "no_bias": True}),
    "conv 3x3 3->64 32x32 b32": ("Convolution", [(32, 3, 32, 32), (64, 3, 3, 3)],
                                 {"kernel": (3, 3), "pad": (1, 1), "num_filter": 64,
                                  "no_bias": True}),
    "batchnorm (32,64,32,32)": ("BatchNorm", [(32, 64, 32, 32), (64,), (64,), (64,), (64,)],
                                {"fix_gamma": False}),
    "relu (32,64,32,32)": ("Activation", [(32, 64, 32, 32)], {"act_type": "relu"}),
    "global avg pool (32,512,4,4)": ("Pooling", [(32, 512, 4, 4)],
                                     {"global_pool": True, "pool_type": "avg",
                                      "kernel": (1, 1)}),
}


def run_side(mx, repeats: int, clock) -> dict:
    """Best forward and backward seconds per case with ``mx`` (mxnext or mxnet)."""
    nd, autograd = mx.nd, mx.autograd
    rng = np.random.RandomState(0)
    result = {}
    for name, (op, shapes, kwargs) in CASES.items():
        inputs = [nd.array(rng.uniform(-1, 1, s).astype(np.float32)) for s in shapes]
        grads = inputs[:3] if op == "BatchNorm" else inputs     # not BatchNorm's aux states
        for a in grads:
            a.attach_grad()
        fn = getattr(nd, op)
        head = None
        fwd, bwd = [], []
        for _ in range(repeats + 2):                  # two warm-up runs
            nd.waitall()
            t0 = clock()
            with autograd.record():
                y = fn(*inputs, **kwargs)
            y.wait_to_read()
            t1 = clock()
            if head is None:
                head = nd.array(rng.uniform(-1, 1, y.shape).astype(np.float32))
            y.backward(head)
            for a in grads:
                a.grad.wait_to_read()
            t2 = clock()
            fwd.append(t1 - t0)
            bwd.append(t2 - t1)
        result[name] = (min(fwd[2:]), min(bwd[2:]))
    return result


def _run(python: str, side: str, repeats: int, threads, clock) -> dict:
    cmd = [python, os.path.abspath(__file__), "--side", side, "--repeats", str(repeats),
           "--clock", clock]
    env = dict(os.environ)
    if threads:
        env.update(OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800, env=env)
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return {"error": lines[-1] if lines else "failed"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--side", choices=["mxnext", "mxnet"])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=0, help="BLAS/OpenMP threads (0: as set)")
    ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
    ap.add_argument("--mxnet-python", default=os.environ.get("MXNEXT_MXNET_PYTHON",
                                                             "/opt/mxnet-ref/bin/python"))
    args = ap.parse_args(argv)
    if args.side:
        clock = time.perf_counter if args.clock == "wall" else time.process_time
        print(json.dumps(run_side(__import__(args.side), args.repeats, clock)))
        return
    sides = {"mxnext": sys.executable}
    if os.path.exists(args.mxnet_python):
        sides["mxnet"] = args.mxnet_python
    runs = {s: [] for s in sides}
    for r in range(args.rounds):
        order = list(sides)[r % len(sides):] + list(sides)[:r % len(sides)]
        for s in order:
            runs[s].append(_run(sides[s], s, args.repeats, args.threads, args.clock))
    best = {}
    for s, results in runs.items():
        errors = [x["error"] for x in results if "error" in x]
        good = [x for x in results if "error" not in x]
        if errors and not good:
            print(f"{s}: failed: {errors[0]}")
        best[s] = {c: tuple(min(x[c][k] for x in good) for k in (0, 1)) for c in CASES} \
            if good else {}
    threads = args.threads or os.environ.get("OMP_NUM_THREADS", "default")
    print(f"best of {args.repeats} runs x {args.rounds} rounds, {threads} threads, "
          f"{args.clock} milliseconds (ratio = mxnext / mxnet 1.9.1)")
    print(f"{'case':<30}{'mxnext fwd':>11}{'mxnet fwd':>11}{'ratio':>7}"
          f"{'mxnext bwd':>12}{'mxnet bwd':>11}{'ratio':>7}")
    for c in CASES:
        ours, theirs = best["mxnext"].get(c), best.get("mxnet", {}).get(c)
        cells = []
        for k in (0, 1):
            a = ours[k] * 1e3 if ours else None
            b = theirs[k] * 1e3 if theirs else None
            cells += [f"{a:.2f}" if a is not None else "-", f"{b:.2f}" if b is not None else "-",
                      f"{a / b:.2f}" if a and b else "-"]
        print(f"{c:<30}{cells[0]:>11}{cells[1]:>11}{cells[2]:>7}{cells[3]:>12}{cells[4]:>11}"
              f"{cells[5]:>7}")


if __name__ == "__main__":
    main()
