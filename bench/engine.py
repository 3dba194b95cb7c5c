"""Engine overhead and parallelism (printed, never asserted).

Run from the repository root. Where OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE are
set (they work around old OpenBLAS builds and slow a current numpy), lift both
for this command only:

    env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/engine.py

Prints µs per op for (a) a chain of dependent no-op pushes, (b) independent
no-op pushes over 100 vars, (c) ``new_operator`` + ``push`` reuse, on every
engine (the threaded ones with and without their fast paths) with and without
``cheap=True``, beside a ``ThreadPoolExecutor``
baseline; the median push -> run -> complete latency of one no-op; and the
speedup of two independent 2048x2048 float32 matmuls (BLAS on one thread)
pushed together over one after the other.
"""

from __future__ import annotations

import concurrent.futures as cf
import functools
import statistics
import sys
import threading
import time

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import mxnext as mx
from mxnext.engine import ENGINES

# every engine, and the threaded ones again without their fast paths (engine/_fastpath.py)
MAKERS = {**ENGINES, **{f"{name} (plain)": functools.partial(cls, fast_paths=False)
                        for name, cls in ENGINES.items() if name.startswith("Threaded")}}

N = 20_000
NVARS = 100
CTX = mx.cpu()


def noop(rctx):
    pass


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def chain(e, cheap):
    v = e.new_var()
    for _ in range(N):
        e.push_sync(noop, CTX, (), (v,), cheap=cheap)
    e.wait_for_all()


def independent(e, cheap):
    vs = [e.new_var() for _ in range(NVARS)]
    for i in range(N):
        e.push_sync(noop, CTX, (), (vs[i % NVARS],), cheap=cheap)
    e.wait_for_all()


def reuse(e, cheap):
    def fn(rctx, on_complete):
        on_complete()
    oprs = [e.new_operator(fn, (), (e.new_var(),), cheap=cheap) for _ in range(NVARS)]
    push = e.push
    for i in range(N):
        push(oprs[i % NVARS], CTX)
    e.wait_for_all()
    for o in oprs:
        e.delete_operator(o)


def pool_chain(pool):
    futs = [pool.submit(noop, None) for _ in range(N)]   # one worker: FIFO is a chain
    cf.wait(futs)


def pool_independent(pool):
    cf.wait([pool.submit(noop, None) for _ in range(N)])


def latency(e, cheap, reps=2000):
    v = e.new_var()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        e.push_sync(noop, CTX, (), (v,), cheap=cheap)
        e.wait_for_var(v)
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


def pool_latency(pool, reps=2000):
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        pool.submit(noop, None).result()
        out.append(time.perf_counter() - t0)
    return statistics.median(out) * 1e6


def matmul_speedup(e, reps=3):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((2048, 2048), dtype=np.float32) for _ in range(2))
    outs = [np.empty_like(a), np.empty_like(a)]
    va, vb = e.new_var(), e.new_var()

    def mm(k):
        return lambda rctx: np.matmul(a, b, out=outs[k])

    def serial():
        e.push_sync(mm(0), CTX, (), (va,))
        e.wait_for_all()
        e.push_sync(mm(1), CTX, (), (vb,))
        e.wait_for_all()

    def together():
        e.push_sync(mm(0), CTX, (), (va,))
        e.push_sync(mm(1), CTX, (), (vb,))
        e.wait_for_all()
    serial()  # warm up
    t_serial = min(timed(serial) for _ in range(reps))
    t_together = min(timed(together) for _ in range(reps))
    return t_serial, t_together


def thread_matmul_speedup(reps=3):
    """The same two matmuls on two plain threads: what this machine allows right now."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((2048, 2048), dtype=np.float32) for _ in range(2))
    outs = [np.empty_like(a), np.empty_like(a)]

    def together():
        ts = [threading.Thread(target=np.matmul, args=(a, b), kwargs={"out": o}) for o in outs]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    def serial():
        for o in outs:
            np.matmul(a, b, out=o)
    serial()
    return min(timed(serial) for _ in range(reps)), min(timed(together) for _ in range(reps))


def main():
    rows = []
    for name, cls in MAKERS.items():
        for cheap in (False, True):
            e = cls()
            try:
                chain(e, cheap)  # warm up pools
                rows.append((name, cheap,
                             timed(lambda: chain(e, cheap)) / N * 1e6,
                             timed(lambda: independent(e, cheap)) / N * 1e6,
                             timed(lambda: reuse(e, cheap)) / N * 1e6,
                             latency(e, cheap)))
            finally:
                e.shutdown()
    with cf.ThreadPoolExecutor(1) as one, cf.ThreadPoolExecutor(2) as two:
        pool_chain(one)
        rows.append(("ThreadPoolExecutor", None, timed(lambda: pool_chain(one)) / N * 1e6,
                     timed(lambda: pool_independent(two)) / N * 1e6, float("nan"),
                     pool_latency(two)))

    head = ("engine", "cheap", "chain µs/op", "indep µs/op", "reuse µs/op", "latency µs")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, N={N}")
    print(f"{head[0]:<32}{head[1]:>6}{head[2]:>13}{head[3]:>13}{head[4]:>13}{head[5]:>12}")
    for name, cheap, *vals in rows:
        c = "-" if cheap is None else ("yes" if cheap else "no")
        print(f"{name:<32}{c:>6}" + "".join(f"{x:>13.2f}" for x in vals[:3])
              + f"{vals[3]:>12.2f}")

    with threadpool_limits(limits=1, user_api="blas"):
        blas = [(i.get("internal_api"), i.get("architecture"), i.get("num_threads"))
                for i in threadpool_info() if i.get("user_api") == "blas"]
        print(f"\ntwo 2048x2048 float32 matmuls, BLAS {blas}")
        print(f"{'engine':<32}{'serial s':>10}{'together s':>12}{'speedup':>9}")
        for name, cls in MAKERS.items():
            e = cls()
            try:
                ts, tt = matmul_speedup(e)
            finally:
                e.shutdown()
            print(f"{name:<32}{ts:>10.3f}{tt:>12.3f}{ts / tt:>9.2f}")
        ts, tt = thread_matmul_speedup()
        print(f"{'threading.Thread':<32}{ts:>10.3f}{tt:>12.3f}{ts / tt:>9.2f}")


if __name__ == "__main__":
    main()
