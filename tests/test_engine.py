"""The dependency engine: push-order rule, parallelism, errors, exit, selection."""

from __future__ import annotations

import functools
import gc
import os
import random
import subprocess
import sys
import textwrap
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import mxnext as mx
from mxnext import engine
from mxnext.base import EngineError, MXNetError, ShapeError
from mxnext.engine import FnProperty, NaiveEngine, ThreadedEngine, ThreadedEnginePerDevice

THREADED = {"ThreadedEngine": ThreadedEngine,
            "ThreadedEnginePerDevice": ThreadedEnginePerDevice,
            "ThreadedEngine-plain": functools.partial(ThreadedEngine, fast_paths=False),
            "ThreadedEnginePerDevice-plain": functools.partial(ThreadedEnginePerDevice,
                                                               fast_paths=False)}
FAST = {k: v for k, v in THREADED.items() if not k.endswith("-plain")}
ENGINES = {"NaiveEngine": NaiveEngine, **THREADED}
CTXS = [mx.cpu(0), mx.cpu(1), mx.cpu_pinned(0)]   # three device pools
PROPS = list(FnProperty)
WAIT = 20  # seconds a barrier/event may wait before the test fails instead of hanging


def _engines(table):
    return pytest.mark.parametrize("make", list(table.values()), ids=list(table))


@pytest.fixture
def new_engine():
    """Makes engines (``new_engine(make)``) and shuts them down after the test."""
    made = []

    def new(make):
        made.append(make())
        return made[-1]
    yield new
    for e in made:
        e.shutdown()


@pytest.fixture(params=list(ENGINES.values()), ids=list(ENGINES))
def eng(request, new_engine):
    return new_engine(request.param)


@pytest.fixture(params=list(THREADED.values()), ids=list(THREADED))
def threaded(request, new_engine):
    return new_engine(request.param)


@pytest.fixture(params=list(FAST.values()), ids=list(FAST))
def fast(request, new_engine):
    """A threaded engine with its fast paths (engine/_fastpath.py) on."""
    return new_engine(request.param)


# ---------------------------------------------------------------------------
# Random programs checked against a sequential oracle
# ---------------------------------------------------------------------------

class Checker:
    """Watches every var while functions run and records each breach of the push-order
    rule: a read sees the last write pushed before it, a write sees the last write
    pushed before it and overlaps no other access to its var."""

    def __init__(self, nvars):
        self.lock = threading.Lock()
        self.state = [None] * nvars       # id of the last completed write per var
        self.readers = [0] * nvars
        self.writer = [None] * nvars
        self.runs = {}
        self.ended = set()
        self.breaches = []

    def begin(self, i, reads, writes, expect):
        with self.lock:
            self.runs[i] = self.runs.get(i, 0) + 1
            for v in reads:
                if self.writer[v] is not None:
                    self.breaches.append(f"op {i} read var {v} while op {self.writer[v]} wrote it")
                if self.state[v] != expect[v]:
                    self.breaches.append(f"op {i} read var {v}: saw write {self.state[v]}, "
                                         f"push order says {expect[v]}")
                self.readers[v] += 1
            for v in writes:
                if self.writer[v] is not None or self.readers[v]:
                    self.breaches.append(f"op {i} wrote var {v} during another access")
                if self.state[v] != expect[v]:
                    self.breaches.append(f"op {i} wrote var {v}: saw write {self.state[v]}, "
                                         f"push order says {expect[v]}")
                self.writer[v] = i

    def end(self, i, reads, writes):
        with self.lock:
            self.ended.add(i)
            for v in reads:
                self.readers[v] -= 1
            for v in writes:
                self.writer[v] = None
                self.state[v] = i


def oracle(nvars, ops):
    """Run the program sequentially: for each op, the last write before it on each var."""
    last = [None] * nvars
    expects = []
    for i, (reads, writes) in enumerate(ops):
        expects.append({v: last[v] for v in (*reads, *writes)})
        for v in writes:
            last[v] = i
    return expects, last


op_st = st.fixed_dictionaries({
    "reads": st.frozensets(st.integers(0, 5), max_size=3),
    "writes": st.frozensets(st.integers(0, 5), max_size=2),
    "kind": st.sampled_from(["sync", "sync", "cheap", "async", "opr"]),
    "work": st.sampled_from([0, 0, 0, 0.0002, 0.001]),
    "priority": st.integers(-3, 3),
    "ctx": st.sampled_from(CTXS),
    "prop": st.sampled_from(PROPS),
    "then_wait": st.sampled_from([None, None, None, None, "read", "write"]),
})
program_st = st.tuples(st.integers(1, 6), st.lists(op_st, min_size=1, max_size=25),
                       st.lists(st.integers(0, 5), max_size=3))


def check_wait(e, chk, vars_, pushed, v, write):
    """wait_for_var(v) returns once every write to v pushed so far is done (with
    ``write``, every read too)."""
    e.wait_for_var(vars_[v], write=write)
    writers = [i for i, (r, w) in enumerate(pushed) if v in w]
    readers = [i for i, (r, w) in enumerate(pushed) if v in r]
    with chk.lock:
        assert set(writers) <= chk.ended
        assert chk.state[v] == (writers[-1] if writers else None)
        if write:
            assert set(readers) <= chk.ended


def run_program(e, nvars, spec, deletes):
    """Push ``spec`` (and push_delete on ``deletes``) to engine ``e``; check every access."""
    ops = []
    for o in spec:
        writes = sorted({v % nvars for v in o["writes"]})
        reads = sorted({v % nvars for v in o["reads"]} - set(writes))
        ops.append((reads, writes))
    n = len(ops)
    dels = sorted({v % nvars for v in deletes})
    expects, last = oracle(nvars, ops + [((), (v,)) for v in dels])
    chk = Checker(nvars)
    vars_ = [e.new_var(f"v{k}") for k in range(nvars)]
    oprs = {}  # (reads, writes) -> (OprHandle, ids of the ops its pending pushes stand for)

    def work(i):
        reads, writes = ops[i]
        chk.begin(i, reads, writes, expects[i])
        if spec[i]["work"]:
            time.sleep(spec[i]["work"])
        chk.end(i, reads, writes)

    for i, o in enumerate(spec):
        reads, writes = ops[i]
        cv = [vars_[v % nvars] for v in o["reads"]]  # may repeat, or name a written var:
        mv = [vars_[v % nvars] for v in o["writes"]]  # the engine must treat it as written
        kind = o["kind"]
        kw = dict(prop=o["prop"], priority=o["priority"], name=f"op{i}")
        if kind in ("sync", "cheap"):
            e.push_sync(lambda rctx, i=i: work(i), o["ctx"], cv, mv, cheap=kind == "cheap", **kw)
        elif kind == "async":
            def fn(rctx, on_complete, i=i):
                threading.Thread(target=lambda: (work(i), on_complete())).start()
            e.push_async(fn, o["ctx"], cv, mv, **kw)
        elif not mv:  # reusable operators need a write so their pushes run in order
            e.push_sync(lambda rctx, i=i: work(i), o["ctx"], cv, mv, **kw)
        else:
            key = (tuple(reads), tuple(writes))
            if key not in oprs:
                queue = []

                def ofn(rctx, on_complete, queue=queue):
                    i = queue.pop(0)  # writes order this operator's pushes
                    work(i)
                    on_complete()
                oprs[key] = (e.new_operator(ofn, cv, mv, o["prop"], f"opr{i}"), queue)
            opr, queue = oprs[key]
            queue.append(i)
            e.push(opr, o["ctx"], o["priority"])
        if o["then_wait"] and (reads or writes):
            check_wait(e, chk, vars_, ops[:i + 1], (reads or writes)[0], o["then_wait"] == "write")
    for k, v in enumerate(dels):
        i = n + k
        e.push_delete(lambda rctx, i=i, v=v: (chk.begin(i, (), (v,), expects[i]),
                                              chk.end(i, (), (v,))), mx.cpu(), vars_[v])
    if random.random() < 0.5:
        for v in vars_:
            e.wait_for_var(v, write=True)
    e.wait_for_all()
    assert chk.breaches == []
    assert chk.runs == {i: 1 for i in range(n + len(dels))}
    assert chk.state == last
    for opr, _ in oprs.values():
        e.delete_operator(opr)


@pytest.mark.timeout(120)  # a scheduling bug often shows as a hang
@_engines(ENGINES)
def test_random_programs_follow_push_order(make):
    e = make()
    try:
        @settings(max_examples=1000 if make in FAST.values() else 400, deadline=None,
                  database=None, suppress_health_check=list(HealthCheck))
        @given(program_st)
        def check(program):
            run_program(e, *program)
        check()
    finally:
        e.shutdown()


@pytest.mark.timeout(240)
@_engines(THREADED)
def test_random_programs_from_several_threads_at_once(make):
    """Three threads push their own random programs to one engine at the same time (work
    kept per thread, handed back, waits that block): each follows its push order, and
    nothing hangs."""
    e = make()
    try:
        @settings(max_examples=150 if make in FAST.values() else 80, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.lists(program_st, min_size=3, max_size=3))
        def check(programs):
            errors = []

            def run(program):
                try:
                    run_program(e, *program)
                except BaseException as exc:  # reported by the main thread
                    errors.append(exc)
            threads = [threading.Thread(target=run, args=(p,)) for p in programs]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
        check()
    finally:
        e.shutdown()


# ---------------------------------------------------------------------------
# Operators, priorities, deletes
# ---------------------------------------------------------------------------

def test_new_operator_pushed_many_times_runs_each_push(eng):
    v = eng.new_var()
    seen = []

    def fn(rctx, on_complete):
        seen.append(rctx.ctx)
        on_complete()
    opr = eng.new_operator(fn, (), (v,), name="count")
    for k in range(50):
        eng.push(opr, mx.cpu(k % 3))
    eng.wait_for_var(v)
    assert seen == [mx.cpu(k % 3) for k in range(50)]
    eng.delete_operator(opr)
    with pytest.raises(MXNetError, match="count"):
        eng.push(opr, mx.cpu())


def test_priority_orders_ready_work_without_breaking_dependencies(monkeypatch):
    monkeypatch.setenv("MXNEXT_CPU_WORKER_NTHREADS", "1")
    e = ThreadedEngine()
    try:
        gate = threading.Event()
        order = []
        v = e.new_var()
        e.push_sync(lambda r: gate.wait(WAIT), mx.cpu())  # occupies the only worker
        e.push_sync(lambda r: order.append("low"), mx.cpu(), priority=0)
        e.push_sync(lambda r: order.append("first-write"), mx.cpu(), (), (v,), priority=1)
        e.push_sync(lambda r: order.append("high-read"), mx.cpu(), (v,), priority=9)
        e.push_sync(lambda r: order.append("high"), mx.cpu(), priority=5)
        gate.set()
        e.wait_for_all()
        assert order.index("high") < order.index("low")
        assert order.index("first-write") < order.index("high-read")
    finally:
        e.shutdown()


@pytest.mark.timeout(60)
@_engines(FAST)
def test_waiting_thread_runs_the_awaited_function_when_workers_are_busy(make, monkeypatch):
    monkeypatch.setenv("MXNEXT_CPU_WORKER_NTHREADS", "1")
    e = make()
    try:
        gate = threading.Event()
        e.push_sync(lambda r: gate.wait(WAIT), mx.cpu())   # the only worker is busy
        v = e.new_var()
        ran_on = []
        e.push_sync(lambda r: ran_on.append(threading.current_thread()), mx.cpu(), (), (v,))
        e.wait_for_var(v)
        assert ran_on == [threading.current_thread()]
        gate.set()
        e.wait_for_all()
    finally:
        e.shutdown()


def test_a_chain_runs_on_the_thread_that_pushes_it(fast):
    """Dependent heavy functions are run by the pushing thread: no hand-off to a worker."""
    threaded = fast
    v, w = threaded.new_var(), threaded.new_var()
    ran_on = []

    def fn(r):
        ran_on.append(threading.current_thread())
    threaded.push_sync(fn, mx.cpu(), (), (v,))
    threaded.push_sync(fn, mx.cpu(), (v,), (w,))
    threaded.push_sync(fn, mx.cpu(), (w,), (v,))
    threaded.wait_for_var(v)
    assert ran_on == [threading.current_thread()] * 3


@pytest.mark.timeout(60)
@_engines(FAST)
def test_pusher_runs_queued_work_its_new_function_waits_for(make, monkeypatch):
    """A function handed to a busy pool is run by the pushing thread when that thread next
    pushes something waiting for it, instead of stalling behind the pool."""
    monkeypatch.setenv("MXNEXT_CPU_WORKER_NTHREADS", "1")
    e = make()
    try:
        gate = threading.Event()
        e.push_sync(lambda r: gate.wait(WAIT), mx.cpu(), (), (e.new_var(),))
        e.push_sync(lambda r: None, mx.cpu(), (), (e.new_var(),))   # kept; the next one
        v, ran_on = e.new_var(), {}                                # sends it to the pool
        e.push_sync(lambda r: ran_on.setdefault("a", threading.current_thread()), mx.cpu(),
                    (), (v,))
        e.push_sync(lambda r: ran_on.setdefault("b", threading.current_thread()), mx.cpu(),
                    (), (e.new_var(),))
        e.push_sync(lambda r: ran_on.setdefault("c", threading.current_thread()), mx.cpu(),
                    (v,), (e.new_var(),))
        assert ran_on.get("a") is threading.current_thread()       # before the gate opens
        gate.set()
        e.wait_for_all()
        assert set(ran_on) == {"a", "b", "c"}
    finally:
        gate.set()
        e.shutdown()


@pytest.mark.timeout(60)
@_engines(FAST)
def test_pusher_of_independent_heavy_work_does_not_run_far_ahead(make, monkeypatch):
    """With the workers busy, a thread pushing independent heavy functions runs its own
    queued ones instead of queueing without bound (their outputs would all be alive)."""
    monkeypatch.setenv("MXNEXT_CPU_WORKER_NTHREADS", "1")
    e = make()
    gate, busy = threading.Event(), threading.Event()

    def block(r):
        busy.set()
        gate.wait(WAIT)
    try:
        # another thread's function holds the only worker (this thread never runs it)
        t = threading.Thread(target=lambda: (e.push_sync(block, mx.cpu(), (), (e.new_var(),)),
                                             e.push_sync(lambda r: None, mx.cpu(), (),
                                                         (e.new_var(),))))
        t.start()
        t.join(WAIT)
        assert busy.wait(WAIT)
        started, ahead = [], []
        for i in range(200):
            e.push_sync(lambda r, i=i: started.append(i), mx.cpu(), (), (e.new_var(),))
            ahead.append(i + 1 - len(started))
        assert not gate.is_set() and max(ahead) <= 20, max(ahead)
        assert len(started) >= 180        # run here while the worker was held
        gate.set()
        e.wait_for_all()
        assert sorted(started) == list(range(200))
    finally:
        gate.set()
        e.shutdown()


@pytest.mark.timeout(60)
def test_wait_on_a_function_queued_behind_kept_work_does_not_hang(threaded):
    """Thread B's function holds the awaited var and waits in the queue of a var that a
    function kept by thread A holds, while A is busy elsewhere: the wait must finish."""
    x, v = threaded.new_var(), threaded.new_var()
    log, kept, release = [], threading.Event(), threading.Event()

    def a():
        threaded.push_sync(lambda r: log.append("kept"), mx.cpu(), (), (x,))
        kept.set()
        release.wait(WAIT)                     # busy with anything but the engine
    ta = threading.Thread(target=a)
    ta.start()
    assert kept.wait(WAIT)
    tb = threading.Thread(target=lambda: threaded.push_sync(lambda r: log.append("q"),
                                                            mx.cpu(), (x,), (v,)))
    tb.start()
    tb.join()
    threaded.wait_for_var(v)
    assert log == ["kept", "q"]
    release.set()
    ta.join()


@pytest.mark.timeout(60)
def test_work_a_thread_keeps_does_not_stall_another_threads_wait(threaded):
    """A thread that pushed a ready function and then blocks on something else must not
    hold up a wait in another thread: the waiting thread runs the kept function."""
    v = threaded.new_var()
    pushed, release, ran = threading.Event(), threading.Event(), []

    def other():
        threaded.push_sync(lambda r: ran.append(1), mx.cpu(), (), (v,))
        pushed.set()
        release.wait(WAIT)            # busy with anything but the engine
    t = threading.Thread(target=other)
    t.start()
    assert pushed.wait(WAIT)
    threaded.wait_for_var(v)
    assert ran == [1]
    release.set()
    t.join()


def test_push_delete_runs_after_everything_on_its_var_even_after_an_error(eng):
    v = eng.new_var()
    log = []
    eng.push_sync(lambda r: log.append("read"), mx.cpu(), (v,))

    def bad(r):
        log.append("bad")
        raise ValueError("no")
    eng.push_sync(bad, mx.cpu(), (), (v,), name="bad_write")
    eng.push_sync(lambda r: log.append("skipped"), mx.cpu(), (v,))
    eng.push_delete(lambda r: log.append("delete"), mx.cpu(), v)
    with pytest.raises(EngineError, match="bad_write"):
        eng.wait_for_all()
    assert log == ["read", "bad", "delete"]


# ---------------------------------------------------------------------------
# Parallelism, shown with barriers instead of clocks
# ---------------------------------------------------------------------------

def _both_pass(e, ctxs, const=()):
    barrier = threading.Barrier(2, timeout=WAIT)
    passed = []

    def meet(rctx):
        barrier.wait()
        passed.append(rctx.ctx)
    for c in ctxs:
        e.push_sync(meet, c, const)
    e.wait_for_all()
    return passed


def test_independent_functions_overlap(threaded):
    assert len(_both_pass(threaded, [mx.cpu(0), mx.cpu(0)])) == 2


def test_functions_on_two_devices_overlap(threaded):
    assert len(_both_pass(threaded, [mx.cpu(0), mx.cpu(1)])) == 2


def test_readers_of_one_var_overlap(threaded):
    assert len(_both_pass(threaded, [mx.cpu(), mx.cpu()], (threaded.new_var(),))) == 2


def test_naive_engine_runs_one_function_at_a_time():
    e = NaiveEngine()
    barrier = threading.Barrier(2, timeout=0.05)
    e.push_sync(lambda r: barrier.wait(), mx.cpu(), name="alone")
    with pytest.raises(EngineError, match="alone") as info:
        e.wait_for_all()
    assert isinstance(info.value.__cause__, threading.BrokenBarrierError)


def test_async_function_completes_from_another_thread(eng):
    v = eng.new_var()
    out = []

    def fn(rctx, on_complete):
        threading.Timer(0.001, lambda: (out.append(threading.current_thread()),
                                        on_complete())).start()
    eng.push_async(fn, mx.cpu(), (), (v,))
    eng.push_sync(lambda r: out.append("after"), mx.cpu(), (v,))
    eng.wait_for_var(v, write=True)
    assert len(out) == 2 and out[1] == "after"
    assert out[0] is not threading.current_thread()


@pytest.mark.timeout(60)
@_engines(FAST)
def test_a_wait_on_an_async_write_ends_with_it_while_the_workers_run_readers(make, monkeypatch):
    """The thread completing an asynchronous function releases a waiter on its var itself: a
    heavy reader that became ready with the waiter (a KVStore's copy of a sum) holds the
    only worker, and no worker is needed."""
    monkeypatch.setenv("MXNEXT_CPU_WORKER_NTHREADS", "1")
    e = make()
    try:
        v, other = e.new_var(), e.new_var()
        gate = threading.Event()
        completes = []
        e.push_async(lambda r, on_complete: completes.append(on_complete), mx.cpu(), (), (v,))
        e.push_sync(lambda r: gate.wait(WAIT), mx.cpu(), (v,), (other,))   # heavy reader
        timer = threading.Timer(0.2, lambda: completes[0]())
        timer.start()
        t0 = time.monotonic()
        e.wait_for_var(v)                 # a read: it needs the write done, not the reader
        assert not gate.is_set() and time.monotonic() - t0 < WAIT / 2
        gate.set()
        e.wait_for_all()
    finally:
        gate.set()
        e.shutdown()


def test_wait_for_var_read_does_not_wait_for_readers(threaded):
    v = threaded.new_var()
    gate = threading.Event()
    done = []
    threaded.push_sync(lambda r: (gate.wait(WAIT), done.append(1)), mx.cpu(), (v,))
    threaded.wait_for_var(v)            # no writer pending: returns while the reader runs
    assert done == []
    gate.set()
    threaded.wait_for_var(v, write=True)
    assert done == [1]


def test_in_worker(eng):
    seen = []
    eng.push_sync(lambda r: seen.append(engine.in_worker()), mx.cpu())
    eng.wait_for_all()
    assert seen == [True] and not engine.in_worker()


def test_push_kernel_keeps_push_order_on_its_split_var_lists(eng):
    """The frontends' entry: var tuples already free of repeats, a var both read and written
    only in ``mutate``; heavy (not cheap) and cheap kernels alike keep the push order."""
    x, y = eng.new_var(), eng.new_var()
    log = []

    def slow_write(r):
        time.sleep(0.01)
        log.append("write x")
    eng.push_kernel(slow_write, mx.cpu(), (), (x,), "write x", False)
    eng.push_kernel(lambda r: log.append("read x, write y"), mx.cpu(), (x,), (y,), "read", True)
    eng.push_kernel(lambda r: log.append("update x"), mx.cpu(), (), (x,), "update", True)
    eng.push_kernel(lambda r: log.append("x into y"), mx.cpu(), (x,), (y,), "into", False,
                    priority=5)
    eng.wait_for_var(y)
    assert log == ["write x", "read x, write y", "update x", "x into y"]


@_engines({"NaiveEngine": NaiveEngine, **FAST})
def test_kernel_pushed_by_the_only_thread_runs_inline_as_on_a_worker(make, new_engine):
    # the imperative hot path: a cheap leaf function from the only thread using the engine
    eng = new_engine(make)
    a, b = eng.new_var(), eng.new_var()
    seen = []

    def kernel(r):
        seen.append(engine.in_worker())

    def boom(r):
        raise ZeroDivisionError("kaboom")
    for _ in range(2):          # the first push makes this thread the engine's only one
        eng.push_kernel(kernel, mx.cpu(), (), (a,), "kernel", True, fresh=True, leaf=True)
    assert seen == [True, True] and not engine.in_worker()  # ran at once, as on a worker
    eng.push_kernel(boom, mx.cpu(), (), (a,), "exploding_op", True, leaf=True)
    eng.push_kernel(kernel, mx.cpu(), (a,), (b,), "dependant", True, leaf=True)
    with pytest.raises(EngineError, match="exploding_op.*kaboom"):
        eng.wait_for_var(b)
    assert seen == [True, True]                              # the dependant inherited it
    assert not engine.in_worker()


@pytest.mark.timeout(60)
def test_second_thread_waits_for_a_solo_kernel_in_flight(fast, monkeypatch):
    """While one thread has the engine to itself its cheap kernels run with no var
    bookkeeping; a second thread arriving meanwhile must wait for the running kernel before
    it writes the kernel's input."""
    from mxnext._runtime.engine import _fastpath
    started, waiting, log = threading.Event(), threading.Event(), []

    class SeenWaiting(threading.Event):
        def wait(self, timeout=None):
            waiting.set()             # the second thread is about to block on the solo run
            return super().wait(timeout)
    monkeypatch.setattr(_fastpath, "Event", SeenWaiting)
    x, y = fast.new_var(), fast.new_var()

    def kernel(r):
        started.set()
        waiting.wait(WAIT)            # a missing hand-off lets "write" come first instead
        log.append("kernel end")

    def other():
        started.wait(WAIT)
        fast.push_sync(lambda r: log.append("write"), mx.cpu(), (), (x,), cheap=True)
    fast.push_kernel(lambda r: None, mx.cpu(), (), (y,), "first", True, leaf=True)
    t = threading.Thread(target=other)
    t.start()
    fast.push_kernel(kernel, mx.cpu(), (x,), (y,), "kernel", True, leaf=True)
    t.join()
    fast.wait_for_all()
    assert log == ["kernel end", "write"]


def test_fast_paths_switch_off_by_environment(monkeypatch):
    monkeypatch.setenv("MXNEXT_ENGINE_FAST_PATHS", "0")
    plain = ThreadedEnginePerDevice()
    monkeypatch.delenv("MXNEXT_ENGINE_FAST_PATHS")
    default = ThreadedEnginePerDevice()
    try:
        assert (plain.fast_paths, default.fast_paths) == (False, True)
        ran_on = []
        for e in (plain, default):
            v = e.new_var()
            for _ in range(3):
                e.push_sync(lambda r: ran_on.append((e, threading.current_thread())), mx.cpu(),
                            (), (v,), cheap=True)
            e.wait_for_all()
        me = threading.current_thread()
        assert [t is me for e, t in ran_on if e is plain] == [False] * 3   # always a worker
        assert [t is me for e, t in ran_on if e is default] == [True] * 3  # inline
    finally:
        plain.shutdown()
        default.shutdown()


# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------

def test_error_is_stored_inherited_raised_once_then_cleared(eng):
    a, b, c = eng.new_var("a"), eng.new_var("b"), eng.new_var("c")
    ran = []

    def explode(r):
        raise ZeroDivisionError("kaboom")
    eng.push_sync(explode, mx.cpu(), (), (a,), name="exploding_op")
    eng.push_sync(lambda r: ran.append("b"), mx.cpu(), (a,), (b,), name="dependant")
    eng.push_sync(lambda r: ran.append("c"), mx.cpu(), (b,), (c,), name="grandchild")
    eng.push_sync(lambda r: ran.append("free"), mx.cpu(), (), (eng.new_var(),))
    with pytest.raises(EngineError) as info:
        eng.wait_for_var(c)
    assert "exploding_op" in str(info.value) and "kaboom" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)
    assert isinstance(info.value, MXNetError)
    assert "b" not in ran and "c" not in ran
    eng.wait_for_var(c)                 # raised once: cleared everywhere
    eng.wait_for_var(a)
    eng.wait_for_all()
    eng.push_sync(lambda r: ran.append("again"), mx.cpu(), (a,), (c,))
    eng.wait_for_var(c)
    assert ran[-1] == "again"


def test_wait_for_all_raises_first_error_once(eng):
    v = eng.new_var()

    def shape_fail(r):
        raise ShapeError("shapes (2,) and (3,) differ")
    eng.push_sync(shape_fail, mx.cpu(), (), (v,), name="elemwise_add")
    with pytest.raises(ShapeError, match="elemwise_add") as info:
        eng.wait_for_all()
    assert isinstance(info.value.__cause__, ShapeError)
    eng.wait_for_all()
    eng.wait_for_var(v)


def test_async_failure_reported_through_on_complete(eng):
    v = eng.new_var()

    def fn(rctx, on_complete):
        threading.Thread(target=lambda: on_complete(OSError("device lost"))).start()
    eng.push_async(fn, mx.cpu(), (), (v,), name="remote_copy")
    with pytest.raises(EngineError, match="remote_copy.*device lost"):
        eng.wait_for_var(v)


@pytest.mark.timeout(60)
def test_blocking_wait_inside_a_function_is_an_error_not_a_deadlock(eng):
    v, w = eng.new_var(), eng.new_var()
    caught = []

    def waits(r):
        for call in (lambda: eng.wait_for_var(v), eng.wait_for_all):
            try:
                call()
            except EngineError as exc:
                caught.append(exc)
    eng.push_sync(lambda r: None, mx.cpu(), (), (v,))
    eng.push_sync(waits, mx.cpu(), (), (w,))
    eng.wait_for_all()
    assert len(caught) == 2 and all("inside an engine function" in str(c) for c in caught)


# ---------------------------------------------------------------------------
# Stress
# ---------------------------------------------------------------------------

@pytest.mark.timeout(240)
@_engines({**FAST, "ThreadedEnginePerDevice-plain": THREADED["ThreadedEnginePerDevice-plain"]})
def test_100k_ops_do_not_deadlock(make):
    e = make()
    try:
        rng = random.Random(7)
        nvars = 64
        vars_ = [e.new_var() for _ in range(nvars)]
        counts = [0] * nvars
        expected = [0] * nvars

        def bump(rctx, k):
            counts[k] += 1              # only writers of var k touch counts[k]

        def bump_async(rctx, on_complete, k):
            counts[k] += 1
            on_complete()
        for n in range(100_000):
            k = rng.randrange(nvars)
            reads = [vars_[rng.randrange(nvars)] for _ in range(rng.randrange(3))]
            expected[k] += 1
            ctx = mx.cpu(n % 2)
            if n % 7 == 0:
                e.push_async(lambda r, c, k=k: bump_async(r, c, k), ctx, reads, (vars_[k],))
            else:
                e.push_sync(lambda r, k=k: bump(r, k), ctx, reads, (vars_[k],),
                            cheap=n % 3 == 0, priority=n % 5)
        e.wait_for_all()
        assert counts == expected
    finally:
        e.shutdown()


@pytest.mark.timeout(60)
def test_push_from_a_finalizer_during_a_push_does_not_deadlock(threaded):
    """The garbage collector may run an array's __del__ (which frees its memory through
    push_delete) at any allocation, also inside the engine's own bookkeeping."""
    e = threaded
    freed = []

    class Chunk:
        def __init__(self):
            self.var = e.new_var()
            self.cycle = self             # only the garbage collector frees it

        def __del__(self):
            e.push_delete(lambda r: freed.append(1), mx.cpu(), self.var)
    v = e.new_var()
    old = gc.get_threshold()
    gc.set_threshold(10)
    try:
        for _ in range(20_000):
            Chunk()
            e.push_sync(lambda r: None, mx.cpu(), (v,))
    finally:
        gc.set_threshold(*old)
    gc.collect()
    e.wait_for_all()
    assert len(freed) == 20_000


# ---------------------------------------------------------------------------
# Process-level behaviour: selection, exit
# ---------------------------------------------------------------------------

def _env(**extra):
    """This environment without engine choices or third-party plugins (whose load
    warnings would mix with what these tests read on stderr)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("MXNEXT_ENGINE_TYPE", "MXNET_ENGINE_TYPE")}
    env["MXNEXT_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    env.update(extra)
    return env


def _run_py(code, env_extra=None):
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)],
                            env=_env(**(env_extra or {})),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


@pytest.mark.timeout(300)
def test_engine_selected_by_environment():
    code = "import mxnext; print(type(mxnext.engine.get()).__name__)"
    cases = [({}, "ThreadedEnginePerDevice"),
             ({"MXNEXT_ENGINE_TYPE": "NaiveEngine"}, "NaiveEngine"),
             ({"MXNET_ENGINE_TYPE": "ThreadedEngine"}, "ThreadedEngine"),
             ({"MXNEXT_ENGINE_TYPE": "NaiveEngine", "MXNET_ENGINE_TYPE": "ThreadedEngine"},
              "NaiveEngine")]
    procs = [(_run_py(code, env), want) for env, want in cases]
    bad = _run_py(code, {"MXNEXT_ENGINE_TYPE": "TurboEngine"})
    for p, want in procs:
        out, err = p.communicate(timeout=240)
        assert (p.returncode, out.strip(), err) == (0, want, "")
    out, err = bad.communicate(timeout=240)
    assert bad.returncode != 0
    assert "TurboEngine" in err and "ThreadedEnginePerDevice" in err


EXIT_SCRIPT = """
import sys, threading, time
import mxnext as mx
e = mx.engine.get()
assert type(e).__name__ == sys.argv[1]
v = e.new_var()
for k in range(200):
    e.push_sync(lambda r, k=k: time.sleep(0.001), mx.cpu(k % 2), (), (v,))
def late(rctx, on_complete):
    threading.Timer(0.05, on_complete).start()
e.push_async(late, mx.cpu(), (), (v,))
def last(rctx):
    with open(sys.argv[2], "w") as f:
        f.write("done")
e.push_sync(last, mx.cpu(), (v,))
"""


@pytest.mark.timeout(300)
def test_exit_with_pending_work_finishes_it_quietly(tmp_path):
    procs = []
    for name in ("NaiveEngine", "ThreadedEngine", "ThreadedEnginePerDevice"):
        out = tmp_path / f"{name}.txt"
        procs.append((subprocess.Popen(
            [sys.executable, "-c", EXIT_SCRIPT, name, str(out)],
            env=_env(MXNEXT_ENGINE_TYPE=name),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True), out))
    for p, out in procs:
        stdout, stderr = p.communicate(timeout=240)
        assert (p.returncode, stdout, stderr) == (0, "", "")
        assert out.read_text() == "done"


def test_set_engine_and_use_engine():
    start = engine.get()
    try:
        slow_done = []
        v = start.new_var()
        start.push_sync(lambda r: (time.sleep(0.01), slow_done.append(1)), mx.cpu(), (), (v,))
        prev = engine.set_engine("NaiveEngine")
        assert prev is start and slow_done == [1]       # the old engine was drained
        assert isinstance(engine.get(), NaiveEngine)
        mine = ThreadedEngine()
        with engine.use_engine(mine) as inside:
            assert inside is mine and engine.get() is mine
        assert isinstance(engine.get(), NaiveEngine)
        mine.shutdown()
        with pytest.raises(MXNetError, match="unknown engine type 'Nope'.*NaiveEngine"):
            engine.set_engine("Nope")
    finally:
        engine.set_engine(start)
    assert engine.get() is start


def test_use_engine_restores_the_engine_when_the_block_failed():
    start = engine.get()

    def fail(r):
        raise ValueError("inside")
    with pytest.raises(EngineError, match="failing_in_block"):
        with engine.use_engine("ThreadedEngine") as e:
            e.push_sync(fail, mx.cpu(), (), (e.new_var(),), name="failing_in_block")
    assert engine.get() is start and e is not start


@_engines(THREADED)
def test_push_after_shutdown_runs_at_once_on_the_caller(make):
    eng = make()
    v = eng.new_var()
    seen = []
    eng.push_sync(lambda r: seen.append(1), mx.cpu(), mutate_vars=[v])
    eng.shutdown()
    assert seen == [1]
    caller = threading.current_thread()
    eng.push_sync(lambda r: seen.append(threading.current_thread()), mx.cpu(), const_vars=[v])
    assert seen == [1, caller]
    eng.push_sync(lambda r: 1 / 0, mx.cpu(), mutate_vars=[v])
    with pytest.raises(EngineError, match="ZeroDivisionError"):
        eng.wait_for_var(v)
    assert eng._pools == {}


def test_bulk_scopes_set_a_thread_local_size_and_change_no_result():
    assert engine.set_bulk_size(0) == 0
    seen = []
    with engine.bulk(10):
        x = mx.nd.ones((10,))
        x *= 2
        x += 1
        with engine.bulk(3):
            seen.append(engine.set_bulk_size(3))
            t = threading.Thread(target=lambda: seen.append(engine.set_bulk_size(0)))
            t.start()
            t.join()
        for _ in range(100):
            x += 1
        seen.append(engine.set_bulk_size(10))
    assert seen == [3, 0, 10] and engine.set_bulk_size(0) == 0
    assert (x.asnumpy() == 103).all()
    with pytest.raises(MXNetError, match="size must be an int >= 0, got -1"):
        engine.set_bulk_size(-1)


@pytest.mark.parametrize("kind", [IndexError, ValueError, TypeError, AttributeError, KeyError])
def test_python_error_kinds_keep_their_type_at_the_wait(eng, kind):
    """As MXNet's register_error: an IndexError (ValueError, ...) in a function is raised
    at the wait as that kind, and as an MXNetError too."""
    v = eng.new_var()

    def fail(r):
        raise kind("out of bounds")
    eng.push_sync(fail, mx.cpu(), (), (v,), name="gather")
    with pytest.raises(kind, match="gather.*out of bounds") as info:
        eng.wait_for_var(v)
    assert isinstance(info.value, EngineError) and isinstance(info.value.__cause__, kind)
