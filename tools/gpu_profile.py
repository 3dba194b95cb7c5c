"""Where mxnext's host time goes on a device: cProfile of warmed-up loops of bench/gpu.py's
cases (a tiny op, the MLP b128 training step through the executor, the hybridized
ResNet-18 b128 step), the top functions by own time for each.

    python3 tools/gpu_profile.py [--ctx gpu] [--cases tiny,mlp,resnet] [--top 22] [--sync]

``--sync`` instead times each engine function with the device synchronized after it (host
and device time together, by function name): which ops the device spends its time on.

Diagnostics for tuning the per-op path; bench/gpu.py gives the figures.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import runpy
import time
from pathlib import Path

import numpy as np

import mxnext as mx

BENCH = runpy.run_path(str(Path(__file__).resolve().parent.parent / "bench" / "gpu.py"))


def _loop(step, n):
    """``step`` run ``n`` times and waited for, as one function, and ``n``."""
    def loop():
        for _ in range(n):
            step()
        mx.nd.waitall()
    return loop, n


def tiny(ctx):
    a = mx.nd.ones((1,), ctx=ctx)
    return _loop(lambda: a + a, 3000)


def mlp(ctx):
    return _loop(BENCH["mlp_step"](128, ctx), 20)


def resnet(ctx):
    return _loop(BENCH["resnet_step"](128, ctx), 5)


def _by_function(loop, top):
    """Run ``loop`` with every engine function followed by a device synchronize; print the
    functions taking the most time."""
    from collections import defaultdict

    from mxnext import device
    from mxnext._runtime.engine._base import Engine
    total, count = defaultdict(float), defaultdict(int)
    orig = Engine._run_guarded

    def timed(self, fn, rctx, const, mutate, name, skip_on_error=True):
        t = time.perf_counter()
        orig(self, fn, rctx, const, mutate, name, skip_on_error)
        ctx = rctx.ctx
        if ctx is not None and ctx.device_type != "cpu":
            device.get(ctx.device_type).synchronize(ctx.device_id)
        total[name] += time.perf_counter() - t
        count[name] += 1
    Engine._run_guarded = timed
    try:
        loop()
    finally:
        Engine._run_guarded = orig
    for name in sorted(total, key=total.get, reverse=True)[:top]:
        print(f"  {total[name] * 1e3:9.2f} ms {count[name]:6d} x  {name}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctx", default="gpu")
    ap.add_argument("--cases", default="tiny,mlp,resnet")
    ap.add_argument("--top", type=int, default=22)
    ap.add_argument("--sync", action="store_true", help="device time by engine function")
    a = ap.parse_args()
    ctx = mx.Context(a.ctx, 0)
    for name in a.cases.split(","):
        loop, n = {"tiny": tiny, "mlp": mlp, "resnet": resnet}[name](ctx)
        loop()
        loop()                                 # warm: kernels compiled, pools filled
        t = time.perf_counter()
        loop()
        plain = (time.perf_counter() - t) / n
        if a.sync:
            print(f"=== {name}: {plain * 1e6:.1f} us per {'op' if name == 'tiny' else 'step'}; "
                  f"synchronized after each function:")
            _by_function(loop, a.top)
            continue
        prof = cProfile.Profile()
        prof.enable()
        loop()
        prof.disable()
        out = io.StringIO()
        pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(a.top)
        print(f"=== {name}: {plain * 1e6:.1f} us per {'op' if name == 'tiny' else 'step'} "
              f"unprofiled")
        print("\n".join(line for line in out.getvalue().splitlines()[6:] if line.strip()))


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
