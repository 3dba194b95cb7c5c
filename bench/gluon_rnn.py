"""Gluon recurrent layers, side by side: ms per forward+backward of ``gluon.rnn.LSTM`` and
``GRU`` layers (imperative and hybridized) and of an ``LSTMCell`` unrolled step by step, in
mxnext and in MXNet 1.9.1.

Run from the repository root::

    .venv/bin/python bench/gluon_rnn.py [--repeat 20]

Both sides run the very same code (``import mxnext as mx`` / ``import mxnet as mx``), each
in a fresh interpreter of its own (this file with ``--side``). MXNet's interpreter is
``MXNEXT_MXNET_PYTHON`` (default /tmp/mxvenv/bin/python); a missing one is skipped with a
note. Both sides run with their default threads (mxnext's thread policy, MXNet's OpenMP
and BLAS defaults); ``--cpus N`` runs both on N CPUs. Printed, never asserted: the best of
``--repeat`` timings per case and side, and mxnext's time over MXNet's.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

from training import _on_cpus       # bench/training.py: every side on the same CPUs

# (name, layer class, kwargs, input (T, N, C))
LAYERS = [("LSTM 2x256 bi, T=35 N=32 C=128", "LSTM",
           {"hidden_size": 256, "num_layers": 2, "bidirectional": True}, (35, 32, 128)),
          ("GRU 1x128, T=50 N=16 C=64", "GRU", {"hidden_size": 128}, (50, 16, 64)),
          ("LSTM 1x16, T=5 N=2 C=8 (overhead)", "LSTM", {"hidden_size": 16}, (5, 2, 8))]


def side(module, repeat):
    mx = __import__(module)
    gluon, autograd = mx.gluon, mx.autograd
    rng = np.random.RandomState(0)

    def best(step):
        step()
        mx.nd.waitall()
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            step()
            mx.nd.waitall()
            times.append(time.perf_counter() - start)
        return min(times) * 1e3

    def train_step(block, x, run):
        def step():
            with autograd.record():
                out = run(block, x)
            out.backward()
        return step

    results = {}
    for name, kind, kwargs, shape in LAYERS:
        x = mx.nd.array(rng.uniform(-1, 1, shape))
        layer = getattr(gluon.rnn, kind)(**kwargs)
        layer.initialize()
        for hybrid in (False, True):
            layer.hybridize(hybrid)
            label = f"{name}, {'hybridized' if hybrid else 'imperative'}"
            results[label] = best(train_step(layer, x, lambda b, xx: b(xx)))
    cell = gluon.rnn.LSTMCell(64)
    cell.initialize()
    x = mx.nd.array(rng.uniform(-1, 1, (20, 16, 32)))
    for hybrid in (False, True):
        cell.hybridize(hybrid)
        label = f"LSTMCell(64) unroll T=20 N=16, {'hybridized' if hybrid else 'imperative'}"
        results[label] = best(train_step(
            cell, x, lambda b, xx: b.unroll(20, xx, layout="TNC", merge_outputs=True)[0]))
    print(json.dumps(results))


def run_side(python, module, repeat, cpus):
    out = subprocess.run([python, __file__, "--side", module, "--repeat", str(repeat)],
                         capture_output=True, text=True, preexec_fn=_on_cpus(cpus))
    if out.returncode:
        sys.exit(f"{module} side failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--cpus", type=int, default=None, help="run both sides on this many CPUs")
    ap.add_argument("--side", choices=["mxnext", "mxnet"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        return side(args.side, args.repeat)
    ours = run_side(sys.executable, "mxnext", args.repeat, args.cpus)
    mxnet_python = os.environ.get("MXNEXT_MXNET_PYTHON", "/tmp/mxvenv/bin/python")
    theirs = {}
    if os.path.exists(mxnet_python):
        theirs = run_side(mxnet_python, "mxnet", args.repeat, args.cpus)
    else:
        print(f"MXNet side skipped: no interpreter at {mxnet_python}")
    width = max(map(len, ours))
    print(f"{'forward+backward, best ms':{width}}  {'mxnext':>8}  {'MXNet':>8}  mxnext/MXNet")
    for label, ms in ours.items():
        ref = theirs.get(label)
        tail = f"{ref:8.2f}  {ms / ref:5.2f}x" if ref else f"{'-':>8}"
        print(f"{label:{width}}  {ms:8.2f}  {tail}")


if __name__ == "__main__":
    main()
