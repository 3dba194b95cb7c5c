"""Every op of ops-nn and ops-tensor on a device against cpu, on the ops' conformance
examples: forward outputs, then input gradients (autograd, fixed head gradients) where the
op has them. Prints one summary and a line per failing op (its first error line); ops whose
cpu run fails too are counted apart. Stops starting ops after ``--seconds``.

    python3 tools/gpu_op_sweep.py [--ctx gpu] [--seconds 90] [--ops NAME,...] [--shard K/N]

``--shard K/N`` takes every N-th op from the K-th (tools/gpu-check.sh runs N processes side
by side: cupy compiles each new kernel once per machine, which is CPU work).

Exits 1 when an op fails on the device. ``--ctx testdev`` runs it anywhere (testdev's arrays
keep cupy's host boundary).
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

import mxnext as mx
from mxnext import ops as registry
from mxnext.ndarray._imperative import invoke_name
from opsdk.testing import examples_for, make_inputs

PLUGINS = ("ops-nn", "ops-tensor")


def _random(opdef, params):
    reqs = opdef.get_attr("FResourceRequest")
    return any("RANDOM" in getattr(r, "name", str(r)) for r in (reqs(params) if reqs else ()))


def _run(name, example, ctx, grad):
    """Host copies of the outputs, then of the input gradients (when ``grad``)."""
    ins = [mx.nd.array(a, ctx=ctx, dtype=a.dtype) for a in make_inputs(example)]
    if not grad:
        outs = invoke_name(name, ins, dict(example.params))
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
        return [o.asnumpy() for o in outs]
    wrt = [a for a in ins if np.dtype(a.dtype).kind == "f"]
    for a in wrt:
        a.attach_grad()
    with mx.autograd.record():
        outs = invoke_name(name, ins, dict(example.params))
        outs = outs if isinstance(outs, (list, tuple)) else [outs]
    rng = np.random.default_rng(5)
    heads = [mx.nd.array(rng.uniform(-1, 1, o.shape), ctx=ctx, dtype=o.dtype) for o in outs]
    mx.autograd.backward(outs, heads)
    return [a.grad.asnumpy() for a in wrt]


def _same(got, want, exact):
    if len(got) != len(want):
        return f"{len(got)} results, cpu gives {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        if g.shape != w.shape or g.dtype != w.dtype:
            return f"result {k}: {g.dtype}{g.shape}, cpu gives {w.dtype}{w.shape}"
        if exact and not np.allclose(g.astype(np.float64), w.astype(np.float64), rtol=1e-3,
                                     atol=1e-3, equal_nan=True):
            err = np.nanmax(np.abs(g.astype(np.float64) - w.astype(np.float64)))
            return f"result {k}: differs from cpu by up to {err:.3g}"
    return None


def _first_line(exc):
    text = f"{type(exc).__name__}: {exc}".strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:240]


def check_op(opdef, ctx):
    """``(status, detail)``: PASS, FAIL (device), CPU (cpu fails too), NONE (no examples)."""
    examples, why = examples_for(opdef)
    if not examples:
        return "NONE", why
    ran = False
    for i, ex in enumerate(examples):
        params = opdef.parse_params(dict(ex.params))
        for grad in (False, True):
            if grad and (not opdef.get_attr("FGradient") or ex.grad is False):
                continue
            stage = f"example {i} {'backward' if grad else 'forward'}"
            try:
                want = _run(opdef.name, ex, mx.cpu(), grad)
            except Exception:   # the example is not runnable this way on cpu either
                continue
            try:
                got = _run(opdef.name, ex, ctx, grad)
            except Exception as e:
                return "FAIL", f"{stage}: {_first_line(e)}"
            bad = _same(got, want, exact=not _random(opdef, params))
            if bad:
                return "FAIL", f"{stage}: {bad}"
            ran = True
    return ("PASS", "") if ran else ("CPU", "no example runs on cpu through the frontend")


def sweep(ctx, seconds, only=(), shard=(0, 1)):
    """``({op: (status, detail)}, [ops not run for time])`` over the plugins' ops."""
    ops = sorted((d for d in registry.list_ops() if d.provider in PLUGINS
                  and not d.name.startswith("_backward") and (not only or d.name in only)),
                 key=lambda d: (PLUGINS.index(d.provider), d.name))
    ops = ops[shard[0]::shard[1]]
    t0, results, left = time.perf_counter(), {}, []
    for d in ops:
        if time.perf_counter() - t0 > seconds:
            left.append(d.name)
            continue
        try:
            results[d.name] = check_op(d, ctx)
        except Exception as e:          # the sweep itself must go on
            results[d.name] = ("FAIL", f"sweep: {_first_line(e)}")
        try:
            mx.nd.waitall()
        except Exception:               # an error left on an array by a failed op
            pass
    return results, left


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ctx", default="gpu")
    ap.add_argument("--seconds", type=float, default=90)
    ap.add_argument("--ops", default="", help="comma-separated op names (default: all)")
    ap.add_argument("--shard", default="0/1", help="K/N: every N-th op from the K-th")
    a = ap.parse_args()
    k, n = (int(v) for v in a.shard.split("/"))
    if not 0 <= k < n:
        ap.error(f"--shard: expected K/N with 0 <= K < N, got {a.shard!r}")
    ctx = mx.Context(a.ctx, 0)
    t0 = time.perf_counter()
    results, left = sweep(ctx, a.seconds, set(filter(None, a.ops.split(","))), (k, n))
    ops = list(results) + left
    count = {s: sum(1 for v in results.values() if v[0] == s)
             for s in ("PASS", "FAIL", "CPU", "NONE")}
    print(f"op sweep on {ctx} (shard {a.shard}): {len(ops)} ops in {time.perf_counter() - t0:.0f}s: "
          f"{count['PASS']} PASS, {count['FAIL']} FAIL, {count['CPU']} not runnable on cpu, "
          f"{count['NONE']} without examples, {len(left)} not run (time)")
    for name, (status, detail) in results.items():
        if status == "FAIL":
            print(f"  FAIL {name}: {detail}")
    if left:
        print(f"  not run: {', '.join(left[:40])}{' ...' if len(left) > 40 else ''}")
    sys.exit(1 if count["FAIL"] else 0)


if __name__ == "__main__":
    main()
