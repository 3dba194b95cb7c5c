"""The thread policy (``mxnext._runtime.threads``): its arithmetic, the variables that
override it, and that the limits it chooses are the ones the process runs with."""

import json
import os
import subprocess
import sys

import pytest

from mxnext._runtime.threads import decide

_VARS = ("MXNEXT_CPU_WORKER_NTHREADS", "MXNET_CPU_WORKER_NTHREADS", "MXNEXT_KERNEL_THREADS",
         "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "OMP_NUM_THREADS", "MXNET_OMP_MAX_THREADS",
         "MXNEXT_ENGINE_TYPE", "MXNET_ENGINE_TYPE")

# what the process reports: its policy, then the BLAS/OpenMP limits it runs with after an op
PROBE = """
import dataclasses, json
import mxnext as mx
from threadpoolctl import threadpool_info
mx.nd.ones((4, 4)).asnumpy()
print(json.dumps({"policy": dataclasses.asdict(mx.runtime.thread_policy()),
                  "limits": {i["user_api"]: i["num_threads"] for i in threadpool_info()}}))
"""


def _run(code, cores=None, **env):
    """Run ``code`` in a fresh interpreter with only ``env`` of the thread variables set, on
    the first ``cores`` CPUs (all of them when None)."""
    full = {k: v for k, v in os.environ.items() if k not in _VARS}
    full.update(env)
    pin = None if cores is None else (lambda: os.sched_setaffinity(0, sorted(
        os.sched_getaffinity(0))[:cores]))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full, preexec_fn=pin, timeout=120)


def _probe(cores=None, **env):
    proc = _run(PROBE, cores, **env)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _counts(policy):
    return tuple(getattr(policy, k) for k in ("workers", "kernel", "blas", "openmp"))


@pytest.mark.parametrize("cores, env, expected", [
    # nothing set: two workers; one kernel may take every core: kernel threads (at most 4)
    # of BLAS threads, or as many OpenMP threads
    (1, {}, (2, 1, 1, 1)),
    (2, {}, (2, 2, 1, 2)),
    (4, {}, (2, 4, 1, 4)),
    (16, {}, (2, 4, 4, 16)),
    # workers set: the kernels still share every core
    (8, {"MXNEXT_CPU_WORKER_NTHREADS": "1"}, (1, 4, 2, 8)),
    (16, {"MXNET_CPU_WORKER_NTHREADS": "4"}, (4, 4, 4, 16)),
    (2, {"MXNEXT_CPU_WORKER_NTHREADS": "3"}, (3, 2, 1, 2)),
    # MXNEXT_ spelling wins over MXNET_
    (8, {"MXNEXT_CPU_WORKER_NTHREADS": "1", "MXNET_CPU_WORKER_NTHREADS": "8"}, (1, 4, 2, 8)),
    # kernel threads set: BLAS gets what they leave
    (4, {"MXNEXT_KERNEL_THREADS": "1"}, (2, 1, 4, 4)),
    (16, {"MXNEXT_KERNEL_THREADS": "2"}, (2, 2, 8, 16)),
    # the user's BLAS and OpenMP variables win; kernel threads take what BLAS leaves
    (2, {"OPENBLAS_NUM_THREADS": "2"}, (2, 1, 2, 2)),
    (8, {"OMP_NUM_THREADS": "3"}, (2, 2, 3, 3)),
    (8, {"MKL_NUM_THREADS": "1", "MXNET_OMP_MAX_THREADS": "2"}, (2, 4, 1, 2)),
])
def test_policy_arithmetic(cores, env, expected):
    policy = decide(cores, env)
    assert _counts(policy) == expected
    if not env:      # one kernel alone never asks for more threads than cores
        assert policy.kernel * policy.blas <= cores
        assert policy.openmp <= cores


def test_kernels_share_the_cores(monkeypatch):
    """A kernel takes the cores no other holds (at least one, at most its limit); they are
    free again when it ends, also when it raised."""
    from mxnext._runtime import threads
    monkeypatch.setattr(threads, "thread_policy", lambda: decide(4, {}))
    with threads.cpu_share(8) as a:
        assert a == 4
        with threads.cpu_share(2) as b:
            assert b == 1
    with threads.cpu_share(3) as a, threads.cpu_share(8) as b:
        assert (a, b) == (3, 1)
    with pytest.raises(ZeroDivisionError), threads.cpu_share(2):
        1 / 0
    with threads.cpu_share(8) as a:
        assert a == 4


def test_policy_names_the_variables_that_set_it():
    policy = decide(4, {"MXNET_CPU_WORKER_NTHREADS": "2", "OMP_NUM_THREADS": "1"})
    assert policy.set_by == {"workers": "MXNET_CPU_WORKER_NTHREADS", "kernel": None,
                             "blas": "OMP_NUM_THREADS", "openmp": "OMP_NUM_THREADS"}
    assert "set by MXNET_CPU_WORKER_NTHREADS, OMP_NUM_THREADS" in policy.describe()
    assert "(policy defaults)" in decide(4, {}).describe()


@pytest.mark.parametrize("value", ["two", "0", "-1", "1.5"])
def test_a_bad_count_names_the_variable_and_the_value(value):
    from mxnext.base import ParamError
    with pytest.raises(ParamError, match=rf"thread policy: MXNEXT_KERNEL_THREADS must be a "
                                         rf"whole number of threads \(1 or more\), got "
                                         rf"'{value}'"):
        decide(2, {"MXNEXT_KERNEL_THREADS": value})


@pytest.mark.parametrize("cores", [1, 2])
def test_a_process_runs_with_the_limits_its_policy_chose(cores):
    if len(os.sched_getaffinity(0)) < cores:
        pytest.skip(f"needs {cores} CPUs")
    got = _probe(cores)
    policy = got["policy"]
    assert policy["cores"] == cores
    assert (policy["workers"], policy["kernel"], policy["blas"]) == (2, cores, 1)
    assert got["limits"]["blas"] == policy["blas"]


def test_variables_set_by_the_user_are_obeyed_and_left_alone():
    got = _probe(2, OPENBLAS_NUM_THREADS="2", MXNEXT_KERNEL_THREADS="1",
                 MXNET_CPU_WORKER_NTHREADS="2")
    policy = got["policy"]
    assert (policy["workers"], policy["kernel"], policy["blas"]) == (2, 1, 2)
    assert got["limits"]["blas"] == 2
    assert policy["set_by"]["blas"] == "OPENBLAS_NUM_THREADS"


def test_the_engine_starts_the_workers_the_policy_chose():
    # without the fast paths every function runs on a worker: three functions that wait for
    # each other finish only if three workers run them at once
    code = """
import threading
import mxnext as mx
e = mx.engine.get()
meet = threading.Barrier(3, timeout=10)
for i in range(3):
    e.push_sync(lambda r: meet.wait(), mx.cpu(), mutate_vars=[e.new_var()])
e.wait_for_all()
print(mx.runtime.thread_policy().workers)
"""
    proc = _run(code, MXNEXT_CPU_WORKER_NTHREADS="3", MXNEXT_ENGINE_FAST_PATHS="0")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[-1] == "3"
