"""Gluon speed, side by side: mxnext's ``mx.gluon`` beside MXNet 1.9.1's, PyTorch CPU and a
hand-written numpy step.

Run from the repository root::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/gluon.py

- ``mlp``: 784-1024-1024-10 ReLU MLP, batch 128, one SGD step (forward and loss under
  ``autograd.record``, ``backward``, ``Trainer.step``) per batch; samples/s, imperative and
  hybridized. mxnext and MXNet run the very same Gluon code (``mx`` is ``mxnext`` or
  ``mxnet``). Every side starts from the same weights and data and trains with squared
  error on one-hot targets at the same effective step size as the numpy step of
  bench/ndarray.py, so the ``loss`` column (after the same number of steps, in that step's
  units) agrees when the sides really do the same work.
- ``resnet18``: ``gluon.model_zoo.vision.resnet18_v1(classes=10)``, hybridized, on
  3x32x32 images, batch 32: milliseconds per forward + backward.

Each side runs in a fresh interpreter (this file with ``--side``), once per round, the
order rotating; the table shows each side's best round. Interpreters and threads as
bench/training.py: MXNet's from ``MXNEXT_MXNET_PYTHON`` (default /tmp/mxvenv/bin/python),
PyTorch's from ``MXNEXT_TORCH_PYTHON`` (or /tmp/torchvenv); every side (the numpy step
too) at its default threads, ``--cpus N`` puts them all on N CPUs. A side whose interpreter is
left out with a note. Printed, never asserted: the ratios and whether each target is met
(hybridized >= 1.3x MXNet's hybridized and >= 0.95x numpy; imperative >= 1.3x MXNet's
imperative).
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import subprocess
import sys
import time

import ndarray as nd_bench          # bench/ndarray.py: the MLP's weights, data and numpy step
import training                     # bench/training.py: the interpreters and their threads

BATCH = nd_bench.BATCH
# The numpy step's loss is sum((out - y)**2) / BATCH; L2Loss's is 0.5 * mean over the 10
# outputs per sample, and Trainer.step(BATCH) divides by BATCH: this step size makes the
# updates the numpy step's, and this factor its loss.
L2_LR = nd_bench.LR * 20
L2_TO_NUMPY = 20.0
TARGETS = [("mxnext mlp hybridized", "mxnet mlp hybridized", 1.3),
           ("mxnext mlp hybridized", "numpy mlp", 0.95),
           ("mxnext mlp imperative", "mxnet mlp imperative", 1.3)]


def _timed(step, sync, steps, repeats):
    """Best seconds per step over ``repeats`` blocks of ``steps`` (after 3 warm-up steps)."""
    for _ in range(3):
        step()
    sync()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        sync()
        best = min(best, (time.perf_counter() - t) / steps)
    return best


def gluon_mlp(mx, hybridize, steps, repeats):
    """Seconds per SGD step of the Gluon MLP, and the loss after the last step."""
    gluon = mx.gluon
    params, x, y = nd_bench._init_params()
    net = gluon.nn.HybridSequential()
    for i, (units, act) in enumerate(((1024, "relu"), (1024, "relu"), (10, None))):
        layer = gluon.nn.Dense(units, activation=act, in_units=params[2 * i].shape[0])
        net.add(layer)
    net.initialize(ctx=mx.cpu())
    for i, layer in enumerate(net):
        layer.weight.set_data(mx.nd.array(params[2 * i].T))
        layer.bias.set_data(mx.nd.array(params[2 * i + 1]))
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
    loss_fn = gluon.loss.L2Loss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": L2_LR})
    xb, yb = mx.nd.array(x), mx.nd.array(y)
    last = {}

    def step():
        with mx.autograd.record():
            loss = loss_fn(net(xb), yb)
        loss.backward()
        trainer.step(BATCH)
        last["loss"] = loss

    seconds = _timed(step, mx.nd.waitall, steps, repeats)
    return seconds, float(last["loss"].mean().asscalar()) * L2_TO_NUMPY


def gluon_resnet(mx, steps, repeats):
    """Seconds per forward + backward of a hybridized ResNet-18 on a batch of 32 3x32x32."""
    import numpy as np
    net = mx.gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier(), ctx=mx.cpu())
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(np.random.RandomState(0).standard_normal((32, 3, 32, 32)).astype("float32"))

    def step():
        with mx.autograd.record():
            out = net(x)
        out.backward()

    return _timed(step, mx.nd.waitall, steps, repeats)


def torch_mlp(steps, repeats):
    import torch
    params, x, y = nd_bench._init_params()
    layers = []
    for i in range(0, len(params), 2):
        linear = torch.nn.Linear(*params[i].shape)
        with torch.no_grad():
            linear.weight.copy_(torch.from_numpy(params[i].T))
            linear.bias.copy_(torch.from_numpy(params[i + 1]))
        layers += [linear, torch.nn.ReLU()]
    net = torch.nn.Sequential(*layers[:-1])
    opt = torch.optim.SGD(net.parameters(), lr=nd_bench.LR)
    xb, yb = torch.from_numpy(x), torch.from_numpy(y)
    last = {}

    def step():
        opt.zero_grad()
        loss = ((net(xb) - yb) ** 2).sum() / BATCH
        loss.backward()
        opt.step()
        last["loss"] = loss

    return _timed(step, lambda: None, steps, repeats), float(last["loss"])


def numpy_mlp(steps, repeats):
    step = nd_bench.numpy_step()
    last = {}
    seconds = _timed(lambda: last.update(loss=step()), lambda: None, steps, repeats)
    return seconds, last["loss"]


def run_side(side, args):
    """{row: (value, loss or None)} of one side, in this process."""
    n, r = args.steps, args.repeats
    if side == "numpy":
        sec, loss = numpy_mlp(n, r)
        return {"numpy mlp": (BATCH / sec, loss)}
    if side == "torch":
        sec, loss = torch_mlp(n, r)
        return {"torch mlp": (BATCH / sec, loss)}
    mx = importlib.import_module(side)
    rows = {}
    for mode in ("imperative", "hybridized"):
        sec, loss = gluon_mlp(mx, mode == "hybridized", n, r)
        rows[f"{side} mlp {mode}"] = (BATCH / sec, loss)
    if not args.no_resnet:
        rows[f"{side} resnet18"] = (1e3 * gluon_resnet(mx, args.resnet_steps, r), None)
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=20, help="MLP steps per timed block")
    ap.add_argument("--resnet-steps", type=int, default=5, help="ResNet-18 steps per block")
    ap.add_argument("--repeats", type=int, default=3, help="timed blocks per round (best kept)")
    ap.add_argument("--no-resnet", action="store_true")
    ap.add_argument("--cpus", type=int, default=None, help="run every side on this many CPUs")
    ap.add_argument("--side", choices=("mxnext", "mxnet", "torch", "numpy"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.side:
        print(json.dumps(run_side(args.side, args)))
        return

    pythons = training._interpreters(args)
    pythons["numpy"] = sys.executable
    names = list(pythons)
    print(f"batch {BATCH}; best of {args.rounds} rounds x {args.repeats} blocks; every side at "
          f"its default threads on {args.cpus or len(os.sched_getaffinity(0))} CPUs")
    best = {}
    for r in range(args.rounds):
        for side in names[r % len(names):] + names[:r % len(names)]:
            cmd = [pythons[side], os.path.abspath(__file__), "--side", side] + sys.argv[1:]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=1800,
                                  env=training._env(),
                                  preexec_fn=training._on_cpus(args.cpus))
            if proc.returncode:
                raise SystemExit(f"{side} failed:\n{proc.stderr[-3000:]}")
            for row, (value, loss) in json.loads(proc.stdout.splitlines()[-1]).items():
                faster = min if row.endswith("resnet18") else max     # ms / samples per s
                if row not in best or faster(value, best[row][0]) == value:
                    best[row] = (value, loss)

    print(f"\nMLP 784-1024-1024-10, SGD (samples/s; loss after {3 + args.steps * args.repeats} "
          f"steps)")
    for row, (value, loss) in best.items():
        if not row.endswith("resnet18"):
            print(f"  {row:<24} {value:9.0f}   loss {loss:.5f}")
    for ours, theirs, target in TARGETS:
        if ours in best and theirs in best:
            ratio = best[ours][0] / best[theirs][0]
            print(f"  {ours} / {theirs}: {ratio:.2f}x  (target >= {target}x: "
                  f"{'met' if ratio >= target else 'missed'})")
    if "mxnext resnet18" in best:
        print("\nResNet-18 v1, 3x32x32, batch 32, hybridized: forward + backward (ms)")
        for side in ("mxnext", "mxnet"):
            if f"{side} resnet18" in best:
                print(f"  {side:<7} {best[side + ' resnet18'][0]:8.1f}")
        if "mxnet resnet18" in best:
            print(f"  mxnext time / MXNet time: "
                  f"{best['mxnext resnet18'][0] / best['mxnet resnet18'][0]:.2f}x")


if __name__ == "__main__":
    main()
