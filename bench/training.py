"""Training throughput, side by side: ``Module.fit`` samples/s in mxnext and in MXNet 1.9.1,
beside PyTorch CPU running the same networks in a plain training loop.

Run from the repository root::

    .venv/bin/python bench/training.py [--rounds 3] [--epochs 4]

Networks: the MLP 784-1024-1024-10 (ReLU) and MXNet's LeNet for MNIST (5x5 convolutions of
20 and 50 filters with tanh and 2x2 max pooling, 500 hidden units), batch 128, SGD with
momentum, on synthetic 28x28 data whose labels a fixed projection decides (so the runs
learn; each prints its final training accuracy). mxnext and MXNet run the very same
``Module.fit`` code (``import mxnext as mx`` / ``import mxnet as mx``): a first epoch
warms up (binding, first allocations), the epochs after it are timed from the end of one
epoch to the end of the last (each ends in ``get_params``, which waits for the work).
PyTorch runs forward, loss, backward, step and the accuracy per batch, timed the same way.

Each side runs in a fresh interpreter of its own (this file with ``--side``); the sides
take turns within a round (the order rotates) and each keeps its best round. Interpreters:
MXNet's from ``MXNEXT_MXNET_PYTHON`` (default /tmp/mxvenv/bin/python: ``python3 -m venv
/tmp/mxvenv && /tmp/mxvenv/bin/pip install mxnet==1.9.1 "numpy<1.24"``), PyTorch's from
``MXNEXT_TORCH_PYTHON`` (default: the first of this interpreter, /tmp/torchvenv and
/tmp/mxvenv that imports torch); a side whose interpreter is missing is skipped with a
note. Threads: every side runs with its own defaults, as a user gets them (mxnext's thread
policy, ``mx.runtime.thread_policy()``; MXNet's OpenMP and BLAS defaults; PyTorch's);
``--cpus N`` runs every side on the same N CPUs (its affinity mask), each choosing its threads
for them. Thread variables set in this environment reach every side alike.

Then the MLP's 2-rank ``dist_sync`` scaling (``--no-scaling`` leaves it out): mxnext under
``mpiexec -n 1`` and ``-n 2`` (this interpreter's), each rank training on its own shard of
``--batches`` batches of 128 with ``kvstore=mx.kv.create('dist_sync')``; samples/s of all
ranks together, best of the rounds, and the efficiency 2-rank / (2 x 1-rank). The ranks
split the cores (kernel threads cores / ranks, BLAS 1), so on a machine with few cores the figure
says what the exchange and the split cost rather than how training scales over machines.

Printed, never asserted: samples/s per network and side, the ratios mxnext/MXNet and
mxnext/PyTorch, ``target: met|missed`` for mxnext >= 1.3x MXNet on the MLP and >= 1.0x on
LeNet, and the scaling figures.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BATCH = 128
TARGETS = {"mlp": 1.3, "lenet": 1.0}      # mxnext / MXNet samples/s


def _data(batches, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    x = rng.random((batches * BATCH, 1, 28, 28), dtype=np.float32)
    w = rng.normal(size=(784, 10)).astype(np.float32)
    y = (x.reshape(len(x), -1) - 0.5) @ w
    return x, y.argmax(axis=1).astype(np.float32)


# -- the sides --------------------------------------------------------------------------
def _symbol(mx, model):
    data = mx.sym.var("data")
    if model == "mlp":
        net = mx.sym.flatten(data)
        for i, units in enumerate((1024, 1024), 1):
            net = mx.sym.Activation(mx.sym.FullyConnected(net, num_hidden=units, name=f"fc{i}"),
                                    act_type="relu")
        net = mx.sym.FullyConnected(net, num_hidden=10, name="fc3")
    else:
        net = data
        for i, filters in enumerate((20, 50), 1):
            net = mx.sym.Convolution(net, kernel=(5, 5), num_filter=filters, name=f"conv{i}")
            net = mx.sym.Activation(net, act_type="tanh")
            net = mx.sym.Pooling(net, kernel=(2, 2), stride=(2, 2), pool_type="max")
        net = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.flatten(net), num_hidden=500,
                                                      name="fc1"), act_type="tanh")
        net = mx.sym.FullyConnected(net, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(net, name="softmax")


def run_module(side, model, epochs, batches, dist=False):
    """samples/s of ``Module.fit`` in mxnext or MXNet, and the last training accuracy. With
    ``dist`` (mxnext under mpiexec) each rank trains on its own shard of ``batches`` batches
    through a ``dist_sync`` KVStore."""
    import logging
    mx = __import__("mxnext" if side == "mxnext" else "mxnet")
    logging.disable(logging.WARNING)
    kvstore = mx.kv.create("dist_sync") if dist else "local"
    rank, ranks = (kvstore.rank, kvstore.num_workers) if dist else (0, 1)
    x, y = _data(batches * ranks)
    shard = slice(rank * batches * BATCH, (rank + 1) * batches * BATCH)
    mx.random.seed(0)
    train = mx.io.NDArrayIter(x[shard], y[shard], batch_size=BATCH, shuffle=False)
    ends = []
    metric = mx.metric.Accuracy()
    mod = mx.mod.Module(_symbol(mx, model), context=mx.cpu())
    mod.fit(train, num_epoch=epochs, eval_metric=metric, optimizer="sgd", kvstore=kvstore,
            optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
            initializer=mx.init.Xavier(),
            epoch_end_callback=lambda *_: ends.append(time.perf_counter()))
    return {"samples_per_s": (epochs - 1) * batches * BATCH / (ends[-1] - ends[0]),
            "accuracy": metric.get()[1]}


def run_torch(model, epochs, batches):
    import torch
    from torch import nn
    torch.manual_seed(0)
    x, y = (torch.from_numpy(a) for a in _data(batches))
    y = y.long()
    if model == "mlp":
        net = nn.Sequential(nn.Flatten(), nn.Linear(784, 1024), nn.ReLU(), nn.Linear(1024, 1024),
                            nn.ReLU(), nn.Linear(1024, 10))
    else:
        net = nn.Sequential(nn.Conv2d(1, 20, 5), nn.Tanh(), nn.MaxPool2d(2),
                            nn.Conv2d(20, 50, 5), nn.Tanh(), nn.MaxPool2d(2), nn.Flatten(),
                            nn.Linear(800, 500), nn.Tanh(), nn.Linear(500, 10))
    opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    ends = []
    for _ in range(epochs):
        correct = 0
        for i in range(batches):
            xb, yb = x[i * BATCH:(i + 1) * BATCH], y[i * BATCH:(i + 1) * BATCH]
            opt.zero_grad()
            out = net(xb)
            loss_fn(out, yb).backward()
            opt.step()
            correct += int((out.argmax(dim=1) == yb).sum())
        ends.append(time.perf_counter())
    return {"samples_per_s": (epochs - 1) * batches * BATCH / (ends[-1] - ends[0]),
            "accuracy": correct / (batches * BATCH)}


# -- the driver -------------------------------------------------------------------------
def _torch_python():
    candidates = [os.environ.get("MXNEXT_TORCH_PYTHON"), sys.executable,
                  "/tmp/torchvenv/bin/python", "/tmp/mxvenv/bin/python"]
    for python in filter(None, candidates):
        if os.path.exists(python) and subprocess.run(
                [python, "-c", "import torch"], capture_output=True).returncode == 0:
            return python
    return None


def _interpreters(args):
    mxnet = os.environ.get("MXNEXT_MXNET_PYTHON", "/tmp/mxvenv/bin/python")
    found = {"mxnext": sys.executable}
    if os.path.exists(mxnet) and subprocess.run([mxnet, "-c", "import mxnet"],
                                                capture_output=True).returncode == 0:
        found["mxnet"] = mxnet
    else:
        print(f"note: MXNet 1.9.1 skipped: {mxnet} cannot import mxnet (set "
              f"MXNEXT_MXNET_PYTHON, or: python3 -m venv /tmp/mxvenv && "
              f"/tmp/mxvenv/bin/pip install mxnet==1.9.1 'numpy<1.24')")
    torch = _torch_python()
    if torch:
        found["torch"] = torch
    else:
        print("note: PyTorch skipped: no interpreter imports torch (set MXNEXT_TORCH_PYTHON, "
              "or: python3 -m venv /tmp/torchvenv && /tmp/torchvenv/bin/pip install torch)")
    return found


def _env():
    """Every side's environment: this one without OpenBLAS's processor overrides."""
    return {k: v for k, v in os.environ.items()
            if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}


def _on_cpus(cpus):
    """A ``preexec_fn`` putting the child on the first ``cpus`` CPUs of ours (None: all)."""
    if not cpus:
        return None
    mine = sorted(os.sched_getaffinity(0))[:cpus]
    return lambda: os.sched_setaffinity(0, mine)


def side_result(cmd, cpus, what):
    """Run one side's command line (a bench file with ``--side``) on ``cpus`` CPUs and return
    the JSON object it printed last; ``what`` names the side in the error."""
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600,
                          preexec_fn=_on_cpus(cpus))
    if proc.returncode != 0:
        raise RuntimeError(f"{what} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _json_objects(text):
    """Every JSON object printed in ``text``, in order (the ranks of an MPI run may print
    theirs on one line)."""
    decoder, found, i = json.JSONDecoder(), [], text.find("{")
    while i >= 0:
        obj, end = decoder.raw_decode(text, i)
        found.append(obj)
        i = text.find("{", end)
    return found


def _run_side(python, side, model, args, ranks=0):
    """One side's result; ``ranks``: mxnext under ``mpiexec -n ranks`` with ``dist_sync``
    (samples/s summed over the ranks)."""
    cmd = [python, os.path.abspath(__file__), "--side", side, "--model", model,
           "--epochs", str(args.epochs), "--batches", str(args.batches)]
    env = _env()
    if ranks:       # mxnext alone: the ranks split the cores between them
        cmd = [str(_mpiexec()), "-n", str(ranks)] + cmd + ["--dist"]
        env.update(MXNEXT_KERNEL_THREADS=str(max(1, (os.cpu_count() or 1) // ranks)),
                   OPENBLAS_NUM_THREADS="1")
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=900,
                          preexec_fn=_on_cpus(args.cpus))
    if proc.returncode != 0:
        raise SystemExit(f"{side} {model} failed:\n{proc.stderr[-3000:]}")
    results = _json_objects(proc.stdout)
    if not ranks:
        return results[-1]
    return {"samples_per_s": sum(r["samples_per_s"] for r in results),
            "accuracy": results[0]["accuracy"]}


def _mpiexec():
    return Path(sys.executable).parent / "mpiexec"


def _scaling(args):
    """Best-of-rounds samples/s of the MLP with ``dist_sync`` on 1 and on 2 ranks, each rank
    a shard of ``--batches`` batches of 128, and the efficiency 2-rank / (2 x 1-rank)."""
    if not _mpiexec().exists():
        print(f"\nnote: dist_sync scaling skipped: no {_mpiexec()} (pip install mpich mpi4py, "
              f"or the mxnext-kvstore-mpi plugin's test extra)")
        return
    best = {}
    for _ in range(args.rounds):
        for ranks in (1, 2):
            got = _run_side(sys.executable, "mxnext", "mlp", args, ranks)["samples_per_s"]
            best[ranks] = max(best.get(ranks, 0.0), got)
    cores = os.cpu_count() or 1
    print(f"\nmlp dist_sync scaling (mxnext, each rank a shard, batch {BATCH} per rank; "
          f"samples/s of all ranks together)")
    print(f"  1 rank   {best[1]:9.0f}")
    print(f"  2 ranks  {best[2]:9.0f}")
    print(f"  efficiency 2-rank / (2 x 1-rank): {best[2] / (2 * best[1]):.2f}")
    print(f"  note: {cores} cores here; the 1-rank run computes on all of them (kernel threads "
          f"{cores}), each of 2 ranks on {max(1, cores // 2)}: "
          + ("the ranks share the same cores, so the figure says what the dist_sync exchange "
             "and the split of the cores cost, not how training scales over machines"
             if cores <= 2 else "with cores to spare it approaches what a second machine "
             "would give, less the exchange"))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--epochs", type=int, default=4, help="1 warm-up + the timed ones")
    parser.add_argument("--batches", type=int, default=24, help="batches of 128 per epoch")
    parser.add_argument("--models", default="mlp,lenet")
    parser.add_argument("--cpus", type=int, default=None,
                        help="run every side on this many CPUs (default: all)")
    parser.add_argument("--side", choices=("mxnext", "mxnet", "torch"), help=argparse.SUPPRESS)
    parser.add_argument("--model", choices=("mlp", "lenet"), help=argparse.SUPPRESS)
    parser.add_argument("--dist", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--no-scaling", action="store_true",
                        help="leave out the 2-rank dist_sync scaling of the MLP")
    args = parser.parse_args()
    if args.side:
        result = (run_torch(args.model, args.epochs, args.batches) if args.side == "torch"
                  else run_module(args.side, args.model, args.epochs, args.batches, args.dist))
        print(json.dumps(result))
        return

    sides = _interpreters(args)
    names = list(sides)
    print(f"batch {BATCH}, {args.batches} batches per epoch, {args.epochs - 1} timed epochs "
          f"after 1 warm-up, best of {args.rounds} rounds; every side at its default threads "
          f"on {args.cpus or len(os.sched_getaffinity(0))} CPUs")
    for model in args.models.split(","):
        best = {}
        for r in range(args.rounds):
            for side in names[r % len(names):] + names[:r % len(names)]:
                got = _run_side(sides[side], side, model, args)
                if side not in best or got["samples_per_s"] > best[side]["samples_per_s"]:
                    best[side] = got
        print(f"\n{model} (samples/s, final training accuracy)")
        for side in names:
            print(f"  {side:<7} {best[side]['samples_per_s']:9.0f}   acc "
                  f"{best[side]['accuracy']:.3f}")
        ours = best["mxnext"]["samples_per_s"]
        for other in ("mxnet", "torch"):
            if other in best:
                print(f"  mxnext / {other}: {ours / best[other]['samples_per_s']:.2f}x")
        if "mxnet" in best:
            ratio = ours / best["mxnet"]["samples_per_s"]
            print(f"  target: {'met' if ratio >= TARGETS[model] else 'missed'} "
                  f"(>= {TARGETS[model]}x MXNet 1.9.1 on {model})")
    if not args.no_scaling and "mlp" in args.models.split(","):
        _scaling(args)


if __name__ == "__main__":
    main()
