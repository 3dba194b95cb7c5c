"""Where the time of a training step goes: mx.profiler's per-operator totals over a few steps
of the hybridized Gluon ResNet-18 (bench/gluon.py's step) or of Module.fit's LeNet step
(bench/training.py's network), as shares of the summed operator time.

    .venv/bin/python tools/step_profile.py resnet18 [--steps 3]
    .venv/bin/python tools/step_profile.py lenet
    MXNEXT_DISABLE_PLUGINS=ops-onednn .venv/bin/python tools/step_profile.py resnet18

Bulked segments show as ``[op,op,...]`` rows. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import os
import re
import tempfile

import numpy as np

import mxnext as mx
from mxnext import autograd, gluon


def resnet18_step():
    net = gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    net.hybridize(static_alloc=True, static_shape=True)
    x = mx.nd.array(np.random.rand(32, 3, 32, 32).astype("f4"))
    y = mx.nd.array(np.random.randint(0, 10, 32))
    loss = gluon.loss.SoftmaxCrossEntropyLoss()
    trainer = gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})

    def step():
        with autograd.record():
            out = loss(net(x), y)
        out.backward()
        trainer.step(32)
    return step


def lenet_step():
    data = mx.sym.var("data")
    h = data
    for n in (20, 50):
        h = mx.sym.Convolution(h, kernel=(5, 5), num_filter=n)
        h = mx.sym.Activation(h, act_type="tanh")
        h = mx.sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2))
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=500),
                          act_type="tanh")
    sym = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10), name="softmax")
    mod = mx.mod.Module(sym)
    batch = mx.io.DataBatch([mx.nd.array(np.random.rand(64, 1, 28, 28))],
                            [mx.nd.array(np.random.randint(0, 10, 64))])
    mod.bind(data_shapes=[("data", (64, 1, 28, 28))], label_shapes=[("softmax_label", (64,))])
    mod.init_params(mx.init.Xavier())
    mod.init_optimizer(optimizer="sgd", optimizer_params={"learning_rate": 0.05})

    def step():
        mod.forward_backward(batch)
        mod.update()
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net", choices=("resnet18", "lenet"))
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    step = {"resnet18": resnet18_step, "lenet": lenet_step}[args.net]()
    for _ in range(2):
        step()
    mx.nd.waitall()
    dump = os.path.join(tempfile.mkdtemp(), "profile.json")
    mx.profiler.set_config(profile_all=True, aggregate_stats=True, filename=dump)
    mx.profiler.set_state("run")
    for _ in range(args.steps):
        step()
    mx.nd.waitall()
    mx.profiler.set_state("stop")
    rows = re.findall(r"^(\S.*?)\s{2,}(\d+)\s+([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+$",
                      mx.profiler.dumps(sort_by="total"), re.M)
    total = sum(float(t) for _, _, t in rows)
    print(f"{args.net}: {total / args.steps:.1f} ms of operator time per step")
    for name, count, t in rows:
        print(f"  {name:48s} {int(count) // args.steps:4d}/step  {float(t) / args.steps:8.2f} ms"
              f"  {100 * float(t) / total:5.1f}%")


if __name__ == "__main__":
    main()
