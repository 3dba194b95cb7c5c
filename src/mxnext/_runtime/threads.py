"""The thread policy: one place decides how many threads each layer of CPU parallelism gets.

Four layers can each start threads: the engine's CPU workers (independent ops at once),
kernel threads (ops-nn cuts a large product into row blocks run at once), BLAS (numpy's
OpenBLAS or MKL, inside each part) and OpenMP (libraries such as oneDNN). Left at their own
defaults they multiply (2 workers x 2 kernel threads x 2 BLAS threads on 2 cores), and
BLAS's spinning threads then fight the kernel threads for the cores. The policy:

- ``cores``: the CPUs this process may run on (its affinity mask);
- ``workers``: 2, so that independent ops always overlap (the engine's promise);
- the cores are **shared** by the kernels running now (``cpu_share``): a kernel that starts
  threads of its own takes the cores no other such kernel holds (at least its own), so a
  chain of dependent products (an MLP's forward) gets every core while two independent
  ones split them. ``kernel`` is the most kernel threads one kernel takes (at most 4:
  ops-nn cuts a product into at most 4 row blocks), ``blas`` the BLAS threads inside each
  (``cores // kernel``: 1 up to 4 cores) and ``openmp`` the most OpenMP threads one kernel
  takes (the cores). Kernel threads rather than BLAS threads get the cores because idle
  Python threads sleep where OpenBLAS's spin: on a busy machine that made the MLP step
  5-10x slower (see docs/engine.md).

So kernels never hold more than ``cores`` between them, but for the one core each running
kernel keeps (a second worker's kernel starting while the first holds every core). Each
user setting wins over the policy and the others adapt to it (kernel threads and BLAS split
the cores whichever of them is set): ``MXNEXT_CPU_WORKER_NTHREADS``
(``MXNET_CPU_WORKER_NTHREADS``), ``MXNEXT_KERNEL_THREADS``, ``OPENBLAS_NUM_THREADS`` /
``MKL_NUM_THREADS`` / ``OMP_NUM_THREADS`` for BLAS, ``OMP_NUM_THREADS`` or MXNet's
``MXNET_OMP_MAX_THREADS`` for OpenMP. ``apply_thread_policy`` sets the BLAS and OpenMP
limits of the libraries loaded so far with threadpoolctl (never one the user set).
"""

from __future__ import annotations

import dataclasses
import os
import threading

# imported with mxnext, not at the engine's creation: a thread importing it then could hold
# its import lock across another thread's fork, and the child would wait on it for ever
from threadpoolctl import threadpool_limits

from .base import ParamError

__all__ = ["ThreadPolicy", "decide", "thread_policy", "apply_thread_policy", "cpu_share"]

WORKERS = ("MXNEXT_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS")
KERNEL = ("MXNEXT_KERNEL_THREADS",)
BLAS = ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS")
OPENMP = ("OMP_NUM_THREADS", "MXNET_OMP_MAX_THREADS")
KERNEL_MAX = 4
_NAMES = tuple(dict.fromkeys(WORKERS + KERNEL + BLAS + OPENMP))


@dataclasses.dataclass(frozen=True)
class ThreadPolicy:
    """Thread counts per layer, and for each the variable that set it (None: the policy)."""

    cores: int
    workers: int
    kernel: int
    blas: int
    openmp: int
    set_by: dict

    def describe(self) -> str:
        """One line: the cores, the counts, and the user variables that set any of them."""
        users = sorted({v for v in self.set_by.values() if v})
        return (f"{self.cores} cores shared by the kernels of {self.workers} engine workers: "
                f"each up to {self.kernel} kernel threads x {self.blas} BLAS or {self.openmp} "
                f"OpenMP threads "
                + (f"(set by {', '.join(users)})" if users else "(policy defaults)"))


def _user(env, names):
    """(count, name) from the first of ``names`` set in ``env``, or (None, None)."""
    for name in names:
        raw = env.get(name, "").strip()
        if raw:
            try:
                value = int(raw)
            except ValueError:
                value = 0
            if value < 1:
                raise ParamError(f"thread policy: {name} must be a whole number of threads "
                                 f"(1 or more), got {raw!r}")
            return value, name
    return None, None


def decide(cores: int, env) -> ThreadPolicy:
    """The policy for ``cores`` CPUs under the variables of ``env`` (a mapping)."""
    cores = max(1, cores)
    workers, w_by = _user(env, WORKERS)
    kernel, k_by = _user(env, KERNEL)
    blas, b_by = _user(env, BLAS)
    kernel = kernel or min(KERNEL_MAX, max(1, cores // (blas or 1)))
    blas = blas or max(1, cores // kernel)
    openmp, o_by = _user(env, OPENMP)
    return ThreadPolicy(cores, workers or 2, kernel, blas, openmp or cores,
                        {"workers": w_by, "kernel": k_by, "blas": b_by, "openmp": o_by})


def cores() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):    # pragma: no cover - a platform without affinity
        return os.cpu_count() or 1


_cache: dict = {}
# On POSIX ``os.environ`` keeps its variables in ``_data`` (encoded name -> encoded value),
# changed along with it: reading the policy's variables there costs a tuple of dict lookups,
# where ``os.environ.get`` encodes and decodes each (kernels read the policy on every call).
_RAW = getattr(os.environ, "_data", None)
_RAW_NAMES = tuple(os.environ.encodekey(n) for n in _NAMES) if _RAW is not None else None


def _env_key() -> tuple:
    if _RAW is not None:
        return tuple(map(_RAW.get, _RAW_NAMES))
    return tuple(os.environ.get(n) for n in _NAMES)     # pragma: no cover - not POSIX


def thread_policy() -> ThreadPolicy:
    """The policy for this process now (read again whenever one of its variables changes)."""
    key = _env_key()
    got = _cache.get(key)
    if got is None:
        _cache.clear()
        got = _cache[key] = decide(cores(), os.environ)
    return got


def apply_thread_policy() -> ThreadPolicy:
    """Limit the BLAS and OpenMP libraries loaded so far to the policy's counts (those the
    user left alone); a plugin that loads such a library later calls this again."""
    policy = thread_policy()
    limits = {api: getattr(policy, api) for api in ("blas", "openmp")
              if policy.set_by[api] is None}
    if limits:
        threadpool_limits(limits=limits)
    return policy


_held = 0                       # cores the kernels inside ``cpu_share`` hold now
_held_lock = threading.Lock()


class cpu_share:
    """``with cpu_share(limit) as n:`` a kernel about to run threads of its own (kernel
    threads, an OpenMP library) takes ``n`` cores: those no other kernel in a ``cpu_share``
    holds, at most ``limit``, at least 1 (the thread it runs on); they are free again at the
    end of the block. The count decides only how many threads, never what is computed."""

    __slots__ = ("limit", "n")

    def __init__(self, limit: int):
        self.limit = limit

    def __enter__(self) -> int:
        global _held
        with _held_lock:
            self.n = n = max(1, min(self.limit, thread_policy().cores - _held))
            _held += n
        return n

    def __exit__(self, *exc) -> None:
        global _held
        with _held_lock:
            _held -= self.n


def _reset_share() -> None:
    """A forked child runs none of its parent's kernels (and may not inherit the lock free),
    and may run on other cores (its policy is decided again)."""
    global _held, _held_lock
    _held, _held_lock = 0, threading.Lock()
    _cache.clear()


os.register_at_fork(after_in_child=_reset_share)
