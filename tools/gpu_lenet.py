"""LeNet trained on synthetic digits on cpu and on a device, same seed: both must reach the
same accuracy (tools/gpu-check.sh runs it on gpu(0); ``--ctx testdev`` runs it anywhere).

Data: ten fixed 28x28 class templates plus noise (no network on the GPU machine)."""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import mxnext as mx


def data(n, seed):
    rng = np.random.default_rng(seed)
    templates = np.random.default_rng(99).random((10, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, n)
    x = templates[y] + 0.5 * rng.standard_normal((n, 1, 28, 28)).astype(np.float32)
    return x.astype(np.float32), y.astype(np.float32)


def lenet():
    d = mx.sym.Variable("data")
    h = mx.sym.Convolution(d, kernel=(5, 5), num_filter=20, name="conv1")
    h = mx.sym.Pooling(mx.sym.Activation(h, act_type="tanh"), pool_type="max", kernel=(2, 2),
                       stride=(2, 2))
    h = mx.sym.Convolution(h, kernel=(5, 5), num_filter=50, name="conv2")
    h = mx.sym.Pooling(mx.sym.Activation(h, act_type="tanh"), pool_type="max", kernel=(2, 2),
                       stride=(2, 2))
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=500, name="fc1"),
                          act_type="tanh")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc2"),
                                name="softmax")


def fit(ctx, n, epochs):
    mx.random.seed(1)
    np.random.seed(1)
    x, y = data(n, 0)
    xv, yv = data(512, 1)
    mod = mx.mod.Module(lenet(), context=ctx)
    t = time.perf_counter()
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=64), num_epoch=epochs, optimizer="sgd",
            optimizer_params={"learning_rate": 0.05, "momentum": 0.9},
            initializer=mx.init.Xavier())
    seconds = time.perf_counter() - t
    acc = mod.score(mx.io.NDArrayIter(xv, yv, batch_size=64), "acc")[0][1]
    return acc, seconds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctx", default="gpu")
    ap.add_argument("--n", type=int, default=2048)
    ap.add_argument("--epochs", type=int, default=2)
    a = ap.parse_args()
    dev = mx.Context(a.ctx, 0)
    acc_cpu, t_cpu = fit(mx.cpu(), a.n, a.epochs)
    acc_dev, t_dev = fit(dev, a.n, a.epochs)
    ok = acc_dev >= 0.9 and abs(acc_dev - acc_cpu) <= 0.02
    print(f"lenet: cpu acc {acc_cpu:.3f} in {t_cpu:.1f}s, {dev} acc {acc_dev:.3f} in "
          f"{t_dev:.1f}s -> {'same accuracy' if ok else 'MISMATCH'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
