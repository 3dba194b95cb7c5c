"""Gluon's per-step Python overhead: a small MLP (784-64-64-10, batch 128, SGD) whose
kernels take little time, imperative and hybridized (static_alloc, the loss hybridized too),
in CPU milliseconds per call (process time: steadier than wall time on a loaded machine).

Run from the repository root::

    .venv/bin/python bench/gluon_overhead.py

Columns are cumulative: ``fwd`` (the net under ``record``, no backward), ``+loss``,
``+bwd`` and ``step`` (with ``Trainer.step``). Printed, never asserted.
"""

import time

import numpy as np

import mxnext as mx
from mxnext import gluon


def _build(hybridize, units=64):
    net = gluon.nn.HybridSequential()
    for u, act in ((units, "relu"), (units, "relu"), (10, None)):
        net.add(gluon.nn.Dense(u, activation=act))
    net.initialize()
    loss = gluon.loss.L2Loss()
    if hybridize:
        net.hybridize(static_alloc=True, static_shape=True)
        loss.hybridize(static_alloc=True, static_shape=True)
    return net, loss, gluon.Trainer(net.collect_params(), "sgd", {"learning_rate": 0.01})


def _cpu_ms(fn, calls=50, repeats=7):
    """Best CPU milliseconds per call over ``repeats`` blocks (after 5 warm-up calls)."""
    for _ in range(5):
        fn()
    mx.nd.waitall()
    best = float("inf")
    for _ in range(repeats):
        t = time.process_time()
        for _ in range(calls):
            fn()
        mx.nd.waitall()
        best = min(best, (time.process_time() - t) / calls)
    return best * 1e3


def main():
    rs = np.random.RandomState(0)
    x = mx.nd.array(rs.rand(128, 784).astype("float32"))
    y = mx.nd.array(rs.rand(128, 10).astype("float32"))
    for hybridize in (False, True):
        net, loss_fn, trainer = _build(hybridize)

        def fwd():
            with mx.autograd.record():
                net(x)

        def fwd_loss():
            with mx.autograd.record():
                return loss_fn(net(x), y)

        def fwd_loss_bwd():
            fwd_loss().backward()

        def step():
            fwd_loss_bwd()
            trainer.step(128)

        cols = [("fwd", fwd), ("+loss", fwd_loss), ("+bwd", fwd_loss_bwd), ("step", step)]
        print(f"{'hybridized' if hybridize else 'imperative':<11}",
              "  ".join(f"{name} {_cpu_ms(fn):.3f}" for name, fn in cols), "ms")


if __name__ == "__main__":
    main()
