"""The graph executor, side by side: mxnext vs MXNet 1.9.1 (vs hand-written numpy for the MLP).

Run from the repo root (OpenBLAS's processor overrides removed for every side alike)::

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/executor.py

Networks, written once against the API both libraries share: ``mlp`` (784-1024-1024-10,
batch 128), ``lenet`` (MXNet's LeNet on 1x28x28, batch 64) and ``resnet18`` (a CIFAR-style
ResNet-18 on 3x32x32, batch 32), each ending in SoftmaxOutput.

- memory: bytes the executor plans for the intermediate arrays (``simple_bind`` with
  ``grad_req='write'``, then ``'null'`` for inference); mxnext's exact figure and naive
  total from ``debug_str()``, MXNet's "Total N MB allocated" from its ``debug_str()`` (whole
  MB, truncated). MXNet's figure is also taken at 16x the batch, divided by 16, where whole
  MB are precise enough to compare (activations scale with the batch).
- speed: samples/s of a training step: ``forward(is_train=True)``, ``backward()`` and
  ``sgd_update`` of every parameter (gradients of the parameters only, not of the data;
  numpy: the same MLP step written by hand).

Each side runs in its own interpreter (this file with ``--side``) at its default threads
(``--cpus N`` puts every side on the same N CPUs); the sides take turns over ``--rounds``,
and the best round counts. Printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time

import numpy as np

from training import side_result     # bench/training.py: every side on the same CPUs

NETS = {"mlp": ((1, 784), 128), "lenet": ((1, 1, 28, 28), 64), "resnet18": ((1, 3, 32, 32), 32)}
LR = 0.05


# ---------------------------------------------------------------------------- networks

def mlp(mx):
    h = mx.sym.var("data")
    for k, n in enumerate((1024, 1024)):
        h = mx.sym.FullyConnected(h, num_hidden=n, name=f"fc{k + 1}")
        h = mx.sym.Activation(h, act_type="relu", name=f"relu{k + 1}")
    h = mx.sym.FullyConnected(h, num_hidden=10, name="fc3")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def lenet(mx):
    h = mx.sym.var("data")
    for k, n in enumerate((20, 50)):
        h = mx.sym.Convolution(h, kernel=(5, 5), num_filter=n, name=f"conv{k + 1}")
        h = mx.sym.Activation(h, act_type="tanh", name=f"tanh{k + 1}")
        h = mx.sym.Pooling(h, pool_type="max", kernel=(2, 2), stride=(2, 2), name=f"pool{k + 1}")
    h = mx.sym.Flatten(h)
    h = mx.sym.FullyConnected(h, num_hidden=500, name="fc1")
    h = mx.sym.Activation(h, act_type="tanh", name="tanh3")
    h = mx.sym.FullyConnected(h, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(h, name="softmax")


def resnet18(mx):
    def conv_bn(x, filters, kernel, stride, name, relu=True):
        x = mx.sym.Convolution(x, num_filter=filters, kernel=(kernel, kernel),
                               stride=(stride, stride), pad=(kernel // 2, kernel // 2),
                               no_bias=True, name=f"{name}_conv")
        x = mx.sym.BatchNorm(x, fix_gamma=False, name=f"{name}_bn")
        return mx.sym.Activation(x, act_type="relu", name=f"{name}_relu") if relu else x

    def block(x, filters, stride, name):
        y = conv_bn(x, filters, 3, stride, f"{name}a")
        y = conv_bn(y, filters, 3, 1, f"{name}b", relu=False)
        if stride != 1:
            x = conv_bn(x, filters, 1, stride, f"{name}s", relu=False)
        return mx.sym.Activation(y + x, act_type="relu", name=f"{name}_out")

    h = conv_bn(mx.sym.var("data"), 64, 3, 1, "stem")
    for stage, filters in enumerate((64, 128, 256, 512)):
        for k in range(2):
            h = block(h, filters, 2 if stage and not k else 1, f"s{stage}b{k}")
    h = mx.sym.Pooling(h, global_pool=True, pool_type="avg", kernel=(1, 1), name="gap")
    h = mx.sym.FullyConnected(mx.sym.Flatten(h), num_hidden=10, name="fc")
    return mx.sym.SoftmaxOutput(h, name="softmax")


# ---------------------------------------------------------------------------- one side

def _initial(arrays, rng):
    return {n: rng.uniform(-0.1, 0.1, a.shape).astype(np.float32) for n, a in arrays.items()}


def run_framework(name, net, steps, repeats):
    import mxnet as mx
    build = globals()[net]
    (_, *sample), batch = NETS[net]
    sym = build(mx)
    shape = (batch, *sample)
    result = {"memory": {}}
    for req in ("write", "null"):
        for scale in (1, 16):
            ex = sym.simple_bind(mx.cpu(), grad_req=req, data=(batch * scale, *sample))
            result["memory"][f"{req}x{scale}"] = _planned(ex.debug_str())
    reqs = {n: "null" if n in ("data", "softmax_label") else "write"
            for n in sym.list_arguments()}          # a training step: parameters' gradients
    ex = sym.simple_bind(mx.cpu(), grad_req=reqs, data=shape)
    rng = np.random.RandomState(0)
    params = {n: a for n, a in ex.arg_dict.items() if n not in ("data", "softmax_label")}
    for n, v in _initial(params, rng).items():
        params[n][:] = v
    for a in ex.aux_dict.values():
        a[:] = 1.0
    ex.arg_dict["data"][:] = rng.standard_normal(shape).astype(np.float32)
    ex.arg_dict["softmax_label"][:] = rng.randint(0, 10, batch).astype(np.float32)

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for n, w in params.items():
            mx.nd.sgd_update(w, ex.grad_dict[n], lr=LR, rescale_grad=1.0 / batch, out=w)

    for _ in range(2):
        step()
    mx.nd.waitall()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        mx.nd.waitall()
        best = min(best, (time.perf_counter() - t) / steps)
    result["samples/s"] = batch / best
    result["loss"] = float(-np.log(ex.outputs[0].asnumpy()[
        np.arange(batch), ex.arg_dict["softmax_label"].asnumpy().astype(int)] + 1e-12).mean())
    return result


def _planned(text):
    """(planned bytes or None, naive bytes or None, whole MB) from a debug_str()."""
    mb = int(re.search(r"Total (\d+) MB allocated", text).group(1))
    mine = re.search(r"Planned (\d+) bytes .*naive (\d+) bytes", text)
    return (int(mine.group(1)), int(mine.group(2)), mb) if mine else (None, None, mb)


def run_numpy(net, steps, repeats):
    """The MLP step by hand: softmax output gradient (p - onehot), SGD with 1/batch."""
    (_, features), batch = NETS[net]
    rng = np.random.RandomState(0)
    sizes = (features, 1024, 1024, 10)
    shapes = {}
    for k, (i, o) in enumerate(zip(sizes[:-1], sizes[1:])):
        shapes[f"fc{k + 1}_weight"], shapes[f"fc{k + 1}_bias"] = (o, i), (o,)
    init = _initial({n: np.empty(s) for n, s in shapes.items()}, rng)   # argument order
    ws = [init[f"fc{k}_weight"] for k in (1, 2, 3)]
    bs = [init[f"fc{k}_bias"] for k in (1, 2, 3)]
    x = rng.standard_normal((batch, features)).astype(np.float32)
    label = rng.randint(0, 10, batch)
    onehot = np.eye(10, dtype=np.float32)[label]
    probs = [None]

    def step():
        acts = [x]
        for k in range(3):
            z = acts[-1] @ ws[k].T + bs[k]
            acts.append(np.maximum(z, 0) if k < 2 else z)
        e = np.exp(acts[-1] - acts[-1].max(axis=1, keepdims=True))
        p = probs[0] = e / e.sum(axis=1, keepdims=True)
        g = p - onehot
        for k in (2, 1, 0):
            gw, gb = g.T @ acts[k], g.sum(axis=0)
            if k:
                g = (g @ ws[k]) * (acts[k] > 0)
            ws[k] -= (LR / batch) * gw
            bs[k] -= (LR / batch) * gb

    for _ in range(2):
        step()
    best = float("inf")
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(steps):
            step()
        best = min(best, (time.perf_counter() - t) / steps)
    return {"samples/s": batch / best,
            "loss": float(-np.log(probs[0][np.arange(batch), label] + 1e-12).mean())}


# ---------------------------------------------------------------------------- driver

def _side(python, side, net, steps, repeats, cpus):
    return side_result([python, __file__, "--side", side, "--net", net, "--steps", str(steps),
                        "--repeats", str(repeats)], cpus, f"{side} {net}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--side", choices=("mxnext", "mxnet", "numpy"))
    ap.add_argument("--net", default=None, choices=tuple(NETS))
    ap.add_argument("--steps", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cpus", type=int, default=None, help="run every side on this many CPUs")
    ap.add_argument("--mxnet-python", default=os.environ.get("MXNEXT_MXNET_PYTHON",
                                                             "/opt/mxnet-ref/bin/python"))
    args = ap.parse_args()
    if args.side:
        if args.side == "mxnext":
            import mxnext
            sys.modules["mxnet"] = mxnext          # the networks say ``mx`` for either
        res = (run_numpy if args.side == "numpy" else
               lambda *a: run_framework(args.side, *a))(args.net, args.steps, args.repeats)
        print(json.dumps(res))
        return
    steps = {"mlp": 20, "lenet": 10, "resnet18": 2}
    have_mxnet = os.path.exists(args.mxnet_python)
    print(f"training step: best of {args.rounds} rounds x {args.repeats} repeats; "
          f"MXNet 1.9.1 at {args.mxnet_python}" + ("" if have_mxnet else " (absent)"))
    for net in ([args.net] if args.net else NETS):
        sides = {"mxnext": sys.executable}
        if have_mxnet:
            sides["mxnet 1.9.1"] = args.mxnet_python
        if net == "mlp":
            sides["numpy"] = sys.executable
        best = {}
        for _ in range(args.rounds):
            for label, python in sides.items():
                side = {"mxnext": "mxnext", "mxnet 1.9.1": "mxnet", "numpy": "numpy"}[label]
                res = _side(python, side, net, args.steps or steps[net], args.repeats, args.cpus)
                if label not in best or res["samples/s"] > best[label]["samples/s"]:
                    best[label] = res
        _report(net, best)


def _report(net, best):
    (_, *sample), batch = NETS[net]
    print(f"\n{net} (batch {batch}, input {tuple(sample)})")
    mine = best["mxnext"]["memory"]
    theirs = best.get("mxnet 1.9.1", {}).get("memory")
    for req, mode in (("write", "training"), ("null", "inference")):
        planned, naive, _ = mine[f"{req}x1"]
        line = (f"  memory {mode:<9}: mxnext {planned / 2**20:7.2f} MB planned "
                f"(naive {naive / 2**20:7.2f} MB, {planned / naive:.2f}x)")
        if theirs:
            mb1, mb16 = theirs[f"{req}x1"][2], theirs[f"{req}x16"][2]
            p16 = mine[f"{req}x16"][0] / 2**20
            line += (f"; mxnet {mb1} MB (debug_str, truncated); at 16x batch mxnext "
                     f"{p16:.1f} MB vs mxnet {mb16} MB: {p16 / max(mb16, 1e-9):.2f}x")
        print(line)
    for label, res in best.items():
        ratio = "" if label == "mxnext" else \
            f"   mxnext/{label}: {best['mxnext']['samples/s'] / res['samples/s']:.2f}x"
        print(f"  {label:<12} {res['samples/s']:9.1f} samples/s   loss {res['loss']:.4f}{ratio}")


if __name__ == "__main__":
    main()
