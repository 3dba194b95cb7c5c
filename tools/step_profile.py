"""Where the time of a training step goes: mx.profiler's per-operator totals over a few steps
of the hybridized Gluon ResNet-18 (bench/gluon.py's step), of Module.fit's LeNet step
(bench/training.py's network) or of bench/executor.py's MLP step (a bound executor and
``sgd_update``), as shares of the summed operator time.

    .venv/bin/python tools/step_profile.py resnet18 [--steps 3]
    .venv/bin/python tools/step_profile.py lenet
    .venv/bin/python tools/step_profile.py mlp
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


def mlp_step():
    h = mx.sym.var("data")
    for k, n in enumerate((1024, 1024, 10)):
        h = mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{k + 1}")
        h = mx.sym.Activation(h, act_type="relu") if k < 2 else h
    sym = mx.sym.SoftmaxOutput(h, name="softmax")
    reqs = {n: "null" if n in ("data", "softmax_label") else "write"
            for n in sym.list_arguments()}
    ex = sym.simple_bind(mx.cpu(), grad_req=reqs, data=(128, 784))
    for n, a in ex.arg_dict.items():
        a[:] = np.random.uniform(-0.1, 0.1, a.shape) if n != "softmax_label" else \
            np.random.randint(0, 10, a.shape)
    params = [n for n in reqs if reqs[n] == "write"]

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for n in params:
            mx.nd.sgd_update(ex.arg_dict[n], ex.grad_dict[n], lr=0.1, rescale_grad=1 / 128,
                             out=ex.arg_dict[n])
    return step


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net", choices=("resnet18", "lenet", "mlp"))
    ap.add_argument("--steps", type=int, default=3)
    args = ap.parse_args()
    step = {"resnet18": resnet18_step, "lenet": lenet_step, "mlp": mlp_step}[args.net]()
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
