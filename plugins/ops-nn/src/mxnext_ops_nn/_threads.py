"""Kernel threads: a kernel splits a large BLAS product into parts that run at once.

A chain of dependent products (an MLP's forward, a layer's two gradient products) runs on
one engine worker; ``parallel`` runs its parts on as many kernel threads as the cores it
takes with ``opsdk.cpu_share`` allow (the cores no other kernel holds now, at most the
policy's ``kernel`` threads of ``blas`` BLAS threads each; ``MXNEXT_KERNEL_THREADS=1`` runs
the parts one after another). numpy releases the GIL in BLAS, so the parts really overlap. A part never writes what another reads, and how a product is cut depends on its
shape and the machine's core count alone (``row_parts``), so results do not depend on the
thread settings.
"""

from __future__ import annotations

import os
import threading
from concurrent.futures import ThreadPoolExecutor

from opsdk import cpu_share, thread_policy

__all__ = ["parallel", "row_parts", "worth_threads"]

# multiply-adds below which a product runs whole: a hand-off costs ~50 µs of GIL traffic
_MIN_PART = 1 << 22
_MAX_PARTS = 4

_pool = None
_pool_lock = threading.Lock()
_pool_pid = None


def _executor(n):
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():     # a forked child makes its own
            _pool = ThreadPoolExecutor(n - 1, thread_name_prefix="mxnext-kernel")
            _pool_pid = os.getpid()
        return _pool


def parallel(*parts) -> None:
    """Call every function of ``parts``, each thread taking the next one not yet taken (this
    one included, so a busy core slows no part down); return when all are done (the first
    error is raised)."""
    policy = thread_policy()
    if policy.kernel == 1 or len(parts) == 1:
        for fn in parts:
            fn()
        return
    with cpu_share(min(policy.kernel, len(parts)) * policy.blas) as cores:
        _run(parts, max(1, cores // policy.blas), policy.kernel)


def _run(parts, n, size):
    """``parts`` on ``n`` threads: this one and ``n - 1`` of the pool (``size`` threads)."""
    if n == 1:
        for fn in parts:
            fn()
        return
    todo = iter(parts)
    lock = threading.Lock()

    def drain():
        while True:
            with lock:
                fn = next(todo, None)
            if fn is None:
                return
            fn()
    pool = _executor(size)
    futures = []
    for _ in range(n - 1):
        try:
            futures.append(pool.submit(drain))
        except RuntimeError:    # the pool shut down (interpreter exit): the parts run here
            break
    try:
        drain()
    finally:
        for f in futures:
            if not f.cancel():         # one not started has nothing left to take
                f.result()


def row_parts(m, k, n) -> int:
    """Into how many row blocks an (m, k) @ (k, n) product is cut (its shape and the machine's
    cores decide, never a thread setting): blocks of at least ``_MIN_PART`` multiply-adds and
    16 rows, at most ``_MAX_PARTS`` and the cores. Each block packs the whole of ``b`` again,
    so blocks beyond the cores that could run them cost time (an MLP step on 2 cores ran
    ~10% faster in 2 blocks than in 4)."""
    return max(1, min(_MAX_PARTS, thread_policy().cores, m // 16, (m * k * n) // _MIN_PART))


def worth_threads(m, k, n) -> bool:
    """Whether an (m, k) @ (k, n) product is large enough that a kernel's independent parts
    (a gradient's products) pay for the hand-off to kernel threads."""
    return m * k * n >= _MIN_PART

