"""GPU speed, side by side on one machine: mxnext on ``gpu(0)`` vs cupy vs PyTorch (fp32).

    python3 bench/gpu.py [--quick] [--ctx gpu]

- ``tiny op``: ``b = a + a`` on a 1-element array, n times, then a wait; time per op
  (mxnext NDArray, cupy itself, torch).
- ``mlp b128`` / ``mlp b1024``: 784-1024-1024-10 ReLU MLP training step (softmax cross
  entropy, SGD lr 0.01): mxnext through the executor (``simple_bind``, forward, backward,
  ``sgd_update`` per weight), PyTorch eager; samples/s.
- ``conv 3x3``: ResNet-18's 3x3 64->64 layer on 32x32, batch 128, forward only, per call:
  mxnext's ``nd.Convolution`` on the gpu's kernel, PyTorch's cuDNN with TF32 off (mxnext's
  float32 default too).
- ``resnet18``: ResNet-18 (ImageNet stem, 10 classes) on 3x32x32, b128, a training step
  with SGD momentum 0.9: mxnext's ``gluon.model_zoo`` ``resnet18_v1`` hybridized
  (``static_alloc``) with ``Trainer``, torchvision's ``resnet18``; samples/s. The line says
  which convolution mxnext ran (cuDNN or the im2col + GEMM fallback).

Printed, never asserted; the targets (issue 25) are printed beside the ratios. Numbers are
only comparable within one run on one card.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def _best(fn, repeats=3):
    return min(fn() for _ in range(repeats))


def tiny_mxnext(n, ctx="gpu"):
    import mxnext as mx
    a = mx.nd.ones((1,), ctx=mx.Context(ctx, 0))
    (a + a).wait_to_read()

    def run():
        t = time.perf_counter()
        for _ in range(n):
            b = a + a
        b.wait_to_read()
        return (time.perf_counter() - t) / n
    return _best(run)


def tiny_cupy(n):
    import cupy as cp
    a = cp.ones((1,), cp.float32)

    def run():
        t = time.perf_counter()
        for _ in range(n):
            b = a + a
        cp.cuda.get_current_stream().synchronize()
        del b
        return (time.perf_counter() - t) / n
    return _best(run)


def tiny_torch(n):
    import torch
    a = torch.ones(1, device="cuda")

    def run():
        t = time.perf_counter()
        for _ in range(n):
            b = a + a
        torch.cuda.synchronize()
        del b
        return (time.perf_counter() - t) / n
    return _best(run)


def _mlp_data(batch):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((batch, 784)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.float32)
    return x, y


def mlp_step(batch, ctx):
    """One MLP training step through the executor on ``ctx`` (a Context), as a function."""
    import mxnext as mx
    data = mx.sym.Variable("data")
    h = mx.sym.Activation(mx.sym.FullyConnected(data, num_hidden=1024, name="fc1"), "relu")
    h = mx.sym.Activation(mx.sym.FullyConnected(h, num_hidden=1024, name="fc2"), "relu")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=10, name="fc3"),
                               name="softmax")
    ex = net.simple_bind(ctx, data=(batch, 784))
    x, y = _mlp_data(batch)
    ex.arg_dict["data"][:] = x
    ex.arg_dict["softmax_label"][:] = y
    init = mx.init.Xavier()
    params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
    for n in params:
        init(mx.init.InitDesc(n), ex.arg_dict[n])

    def step():
        ex.forward(is_train=True)
        ex.backward()
        for n in params:
            mx.nd.sgd_update(ex.arg_dict[n], ex.grad_dict[n], lr=0.01, out=ex.arg_dict[n])
    return step


def _throughput(step, batch, steps):
    """Samples/s of training ``step`` on ``batch`` samples: warmed up, best of 3 runs."""
    import mxnext as mx
    for _ in range(3):
        step()
    mx.nd.waitall()

    def run():
        t = time.perf_counter()
        for _ in range(steps):
            step()
        mx.nd.waitall()
        return (time.perf_counter() - t) / steps
    return batch / _best(run)


def mlp_mxnext(batch, steps, ctx="gpu"):
    import mxnext as mx
    return _throughput(mlp_step(batch, mx.Context(ctx, 0)), batch, steps)


def mlp_torch(batch, steps):
    import torch
    net = torch.nn.Sequential(torch.nn.Linear(784, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 1024), torch.nn.ReLU(),
                              torch.nn.Linear(1024, 10)).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    x, y = _mlp_data(batch)
    xt, yt = torch.from_numpy(x).cuda(), torch.from_numpy(y).long().cuda()
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(net(xt), yt).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()

    def run():
        t = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / steps
    return batch / _best(run)


def resnet_torch(batch, steps):
    import torch
    try:
        import torchvision
    except ImportError:
        return None
    net = torchvision.models.resnet18(num_classes=10).cuda()
    opt = torch.optim.SGD(net.parameters(), lr=0.01, momentum=0.9)
    x = torch.randn(batch, 3, 32, 32, device="cuda")
    y = torch.randint(0, 10, (batch,), device="cuda")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        opt.zero_grad(set_to_none=True)
        loss_fn(net(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(steps):
        step()
    torch.cuda.synchronize()
    return batch * steps / (time.perf_counter() - t)


def conv_mxnext(n, ctx="gpu"):
    import mxnext as mx
    ctx = mx.Context(ctx, 0)
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((128, 64, 32, 32)), ctx=ctx)
    w = mx.nd.array(rng.standard_normal((64, 64, 3, 3)) * 0.05, ctx=ctx)

    def run():
        mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=64,
                          no_bias=True).wait_to_read()
        t = time.perf_counter()
        for _ in range(n):
            y = mx.nd.Convolution(x, w, kernel=(3, 3), pad=(1, 1), num_filter=64, no_bias=True)
        y.wait_to_read()
        return (time.perf_counter() - t) / n
    return _best(run)


def conv_torch(n):
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = True
    x = torch.randn(128, 64, 32, 32, device="cuda")
    w = torch.randn(64, 64, 3, 3, device="cuda") * 0.05

    def run():
        torch.nn.functional.conv2d(x, w, padding=1)
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(n):
            torch.nn.functional.conv2d(x, w, padding=1)
        torch.cuda.synchronize()
        return (time.perf_counter() - t) / n
    return _best(run)


def resnet_step(batch, ctx):
    """One hybridized ResNet-18 training step on ``ctx`` (a Context), as a function."""
    import mxnext as mx
    from mxnext import autograd, gluon
    net = gluon.model_zoo.vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier(), ctx=ctx)
    net.hybridize(static_alloc=True, static_shape=True)
    trainer = gluon.Trainer(net.collect_params(), "sgd",
                            {"learning_rate": 0.01, "momentum": 0.9})
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()
    rng = np.random.default_rng(0)
    x = mx.nd.array(rng.standard_normal((batch, 3, 32, 32)), ctx=ctx)
    y = mx.nd.array(rng.integers(0, 10, batch), ctx=ctx)

    def step():
        with autograd.record():
            loss = loss_fn(net(x), y)
        loss.backward()
        trainer.step(batch)
    return step


def resnet_mxnext(batch, steps, ctx="gpu"):
    import mxnext as mx
    return _throughput(resnet_step(batch, mx.Context(ctx, 0)), batch, steps)


def _conv_kind(ctx):
    """Which convolution mxnext runs on ``ctx``: the device's own kernel or the generic one."""
    import mxnext as mx
    kind = getattr(mx.device.get(ctx), "conv_kernel", None)
    return kind() if kind else "generic xp"


def _try(fn, *args):
    try:
        return fn(*args)
    except Exception as e:   # a side that cannot run is reported, the others still run
        print(f"  ({fn.__name__} failed: {type(e).__name__}: {str(e)[:200]})")
        return None


def _fmt(v, unit):
    if v is None:
        return "-"
    if unit == "ms":
        return f"{v * 1e3:.3f} ms"
    return f"{v * 1e6:.1f} us" if unit == "us" else f"{v / 1e3:.1f}k/s"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer ops and steps")
    ap.add_argument("--ctx", default="gpu", help="mxnext's device type (testdev: anywhere)")
    a = ap.parse_args()
    n, steps = (500, 5) if a.quick else (3000, 20)

    print(f"{'case':<12} {'mxnext':>12} {'cupy':>12} {'torch':>12}   target")
    mt, ct, tt = _try(tiny_mxnext, n, a.ctx), _try(tiny_cupy, n), _try(tiny_torch, n)
    note = f"mxnext/cupy {mt / ct:.1f}x (target <= 2x, <= 25 us)" if mt and ct else ""
    print(f"{'tiny op':<12} {_fmt(mt, 'us'):>12} {_fmt(ct, 'us'):>12} {_fmt(tt, 'us'):>12}   "
          f"{note}")
    for batch in (128, 1024):
        m, t = _try(mlp_mxnext, batch, steps, a.ctx), _try(mlp_torch, batch, steps)
        note = f"mxnext/torch {m / t:.2f}x (target >= 1.0x)" if m and t else ""
        print(f"{'mlp b' + str(batch):<12} {_fmt(m, 'k'):>12} {'-':>12} {_fmt(t, 'k'):>12}   "
              f"{note}")
    if not a.quick:
        m, t = _try(conv_mxnext, 20, a.ctx), _try(conv_torch, 20)
        note = f"torch/mxnext {t / m:.2f}x of the time" if m and t else ""
        print(f"{'conv 3x3':<12} {_fmt(m, 'ms'):>12} {'-':>12} {_fmt(t, 'ms'):>12}   {note}")
    batch = 8 if a.quick else 128
    m = _try(resnet_mxnext, batch, max(steps // 2, 2), a.ctx)
    t = _try(resnet_torch, batch, max(steps // 2, 3))
    kind = _try(_conv_kind, a.ctx)
    goal = "0.5x" if kind and "cudnn" in kind else "0.2x"
    note = f"mxnext/torch {m / t:.2f}x (target >= {goal}; conv: {kind})" if m and t else ""
    print(f"{'resnet18 b' + str(batch):<12} {_fmt(m, 'k'):>12} {'-':>12} {_fmt(t, 'k'):>12}   "
          f"{note}")


if __name__ == "__main__":
    main()
