"""Fork safety (mxnext._runtime.fork): a child forked while the parent computes, loads plugins or
runs custom ops starts with a quiet runtime and computes at once, as with MXNet.

Every scenario runs in a fresh interpreter (the engine type, and a plugin load that has
not happened yet, are per process). There a helper forks, and a child that has not exited
by a deadline counts as hung and is killed; the deadlines only guard against hangs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = [pytest.mark.skipif(not hasattr(os, "register_at_fork"),
                                 reason="os.fork is POSIX-only"),
              pytest.mark.timeout(600)]

HANG = 120          # seconds before a child (or a whole script) counts as hung

FORKED = f'''
import json, os, signal, sys, time, traceback
HANG = {HANG}

def forked(child):
    """Exit code of a forked child that runs ``child()`` (0: it returned), or "hung"."""
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            child()
            code = 0
        except BaseException:
            traceback.print_exc()
        finally:
            os._exit(code)
    return reap(pid)

def reap(pid):
    end = time.monotonic() + HANG
    while time.monotonic() < end:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return "hung"
'''


def run(script, *argv, site=None, **env):
    """The JSON the script prints last, run fresh with ``forked``/``reap`` defined and
    arguments ``argv``, the MXNEXT_* settings of this process dropped and ``env`` added."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("MXNEXT_")}
    full.update(env)
    if site is not None:
        full["PYTHONPATH"] = os.pathsep.join([str(site), full.get("PYTHONPATH", "")])
    proc = subprocess.Popen([sys.executable, "-c", FORKED + textwrap.dedent(script), *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=4 * HANG)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)        # the script and any child it forked
        out, err = proc.communicate()
        pytest.fail(f"the script hung (in a fork?):\n{err}")
    assert proc.returncode == 0, err
    return json.loads(out.strip().splitlines()[-1]), err


# -- work in flight ---------------------------------------------------------------------
IN_FLIGHT = '''
import mxnext as mx

n = 256
w = mx.nd.ones((n, n)) / n                # x @ w == x for a constant x
bases = [mx.nd.ones((n, n)) * (i + 1) for i in range(6)]
codes, busy = [], 0
for rep in range(20):
    outs = [mx.nd.dot(b, w) * (rep + 1) for b in bases]      # independent: on the workers
    outs += [mx.nd.dot(b, w) for b in bases]
    busy += getattr(mx.engine.get(), "_pending", 0) > 0

    def child(outs=outs, rep=rep):
        # what the parent pushed before the fork is done in the child (MXNet's engine waits
        # for it at the fork too)
        for i, o in enumerate(outs[:6]):
            assert (o.asnumpy() == (i + 1) * (rep + 1)).all(), (i, o.asnumpy()[0, :3])
        fresh = [mx.nd.dot(mx.nd.ones((n, n)) * k, w) for k in range(3)]   # new workers
        small = mx.nd.ones((3, 3)) + 1
        mx.nd.waitall()
        assert [float(f.asnumpy()[1, 2]) for f in fresh] == [0.0, 1.0, 2.0]
        assert (small.asnumpy() == 2).all()
        if rep == 0:                        # and the child may fork in turn
            assert forked(lambda: mx.nd.full((2,), 5).asnumpy().tolist() == [5, 5]
                          or sys.exit(1)) == 0
    codes.append(forked(child))
mx.nd.waitall()
assert float(outs[0].asnumpy()[0, 0]) == 20.0      # the parent goes on as before
print(json.dumps({"codes": codes, "busy": busy}))
'''


@pytest.mark.parametrize("env", [{"MXNEXT_ENGINE_TYPE": "NaiveEngine"},
                                 {"MXNEXT_ENGINE_TYPE": "ThreadedEngine"},
                                 {"MXNEXT_ENGINE_TYPE": "ThreadedEnginePerDevice"},
                                 {"MXNEXT_ENGINE_TYPE": "ThreadedEnginePerDevice",
                                  "MXNEXT_ENGINE_FAST_PATHS": "0"}],
                         ids=["naive", "threaded", "perdevice", "perdevice-plain"])
def test_children_forked_with_work_in_flight_compute_at_once(env):
    res, err = run(IN_FLIGHT, **env)
    assert res["codes"] == [0] * 20, err
    if env["MXNEXT_ENGINE_TYPE"] != "NaiveEngine":
        assert res["busy"] > 0        # the forks did find work in flight


def test_work_kept_for_another_thread_is_finished_before_the_fork():
    """Heavy work another thread pushed is kept for it (the fast paths) until it next pushes
    or waits; a fork while it does neither still gets that work done, not waited for ever."""
    res, err = run('''
        import threading
        import mxnext as mx

        n = 256
        w = mx.nd.ones((n, n)) / n
        outs, pushed, resume = [], threading.Event(), threading.Event()

        def compute():
            outs.extend(mx.nd.dot(mx.nd.ones((n, n)) * (i + 1), w) for i in range(4))
            pushed.set()
            resume.wait()           # neither pushes nor waits until after the fork
            mx.nd.waitall()

        t = threading.Thread(target=compute)
        t.start()
        pushed.wait()

        def child():
            assert [float(o.asnumpy()[0, 0]) for o in outs] == [1.0, 2.0, 3.0, 4.0]
            assert (mx.nd.dot(outs[1], w) + 1).asnumpy()[3, 3] == 3.0

        code = forked(child)
        resume.set()
        t.join()
        print(json.dumps({"code": code}))
    ''')
    assert res["code"] == 0, err


def test_fork_while_another_thread_computes():
    """The fork waits for the kernel another thread runs (a BLAS call running at a fork can
    hang OpenBLAS, in the parent), and that thread's next op waits for the fork: otherwise
    a thread that always has work pending would keep the fork waiting for ever."""
    res, err = run('''
        import threading
        import mxnext as mx

        stop, ran = threading.Event(), []

        def compute():
            a = mx.nd.ones((128, 128))
            while not stop.is_set():
                ran.append(mx.nd.dot(a, a))
                del ran[:-2]
            mx.nd.waitall()

        t = threading.Thread(target=compute)
        t.start()
        while not ran:
            time.sleep(0.01)
        codes = [forked(lambda: (mx.nd.dot(mx.nd.ones((8, 4)), mx.nd.ones((4, 8))).asnumpy()
                                 == 4).all() or sys.exit(1)) for _ in range(20)]
        stop.set()
        t.join(HANG)
        print(json.dumps({"codes": codes, "computing": t.is_alive(),
                          "last": float(ran[-1].asnumpy()[0, 0])}))
    ''')
    assert res["codes"] == [0] * 20 and not res["computing"], err
    assert res["last"] == 128.0


FROM_FUNCTION = '''
import mxnext as mx

n = 256
w = mx.nd.ones((n, n)) / n
w.wait_to_read()        # arrays whose writes are pending at such a fork are undefined there
eng = mx.engine.get()
pids, v = [], eng.new_var()
# in flight meanwhile, and not waited for: elementwise (a BLAS call running on another
# thread at a fork can hang OpenBLAS's own fork handler)
others = [mx.nd.exp(mx.nd.ones((n, 4 * n)) * k) for k in range(4)]

def fork_here(rctx):
    pid = os.fork()
    if pid:
        pids.append(pid)
        return
    code = 1        # the child: inside an engine function whose engine is gone
    try:
        y = mx.nd.dot(mx.nd.ones((n, n)) * 2, w)
        mx.nd.waitall()
        code = 0 if float(y.asnumpy()[5, 5]) == 2.0 else 2
    except BaseException:
        traceback.print_exc()
    finally:
        os._exit(code)

eng.push_sync(fork_here, mx.cpu(), mutate_vars=[v])
eng.wait_for_var(v)
mx.nd.waitall()
print(json.dumps({"code": reap(pids[0])}))
'''


@pytest.mark.parametrize("fast", ["1", "0"], ids=["fast", "plain"])
def test_fork_from_inside_an_engine_function(fast):
    """The engine cannot finish its work first (the forking function is part of it): the
    child runs every function at once on its one thread, and may wait."""
    res, err = run(FROM_FUNCTION, MXNEXT_ENGINE_FAST_PATHS=fast)
    assert res["code"] == 0, err


# -- plugin loading on another thread -----------------------------------------------------
GATE_PLUGIN = '''
import fork_gate
fork_gate.started.set()
fork_gate.go.wait()             # the test forks about now, with this load half done

from opsdk import hookimpl, register_op


@hookimpl
def mxnext_register_ops(registry):
    register_op("_gate_op")
'''


@pytest.fixture(scope="module")
def gate_site(tmp_path_factory):
    """Plugin ``a-gate``, loaded first (name order), whose import waits at ``fork_gate``."""
    root = tmp_path_factory.mktemp("gate_site")
    (root / "fork_gate.py").write_text("import threading\n"
                                       "started, go = threading.Event(), threading.Event()\n")
    (root / "a_gate_plugin.py").write_text(GATE_PLUGIN)
    info = root / "mxnext_a_gate-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mxnext-a-gate\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[mxnext]\na-gate = a_gate_plugin\n")
    return root


LOADING = '''
import threading
import fork_gate
import mxnext as mx
from mxnext._runtime import op_table, registry, resource, storage

first_use = {"op": lambda: mx.nd.ones((2,)),
             "storage": lambda: storage.alloc(16, mx.cpu()),
             "resource": lambda: resource.request(mx.cpu(), resource.ResourceRequest.RANDOM)}
t = threading.Thread(target=first_use[sys.argv[1]])
t.start()
fork_gate.started.wait()      # thread t is loading the plugins (under its first use's lock)
fork_gate.go.set()            # and goes on once this thread lets the GIL go: in the fork

def child():
    assert registry.get("_gate_op").provider == "a-gate"
    assert (mx.nd.dot(mx.nd.ones((2, 3)), mx.nd.ones((3, 2))).asnumpy() == 3).all()
    mx.random.seed(7)
    assert mx.nd.random.uniform(shape=(4,)).shape == (4,)

code = forked(child)
t.join()
print(json.dumps({"code": code}))
'''


@pytest.mark.parametrize("first_use", ["op", "storage", "resource"])
def test_fork_while_another_thread_loads_plugins(gate_site, first_use):
    """The child neither sees a half-filled registry ("ops-tensor is not installed") nor
    waits for ever on a lock the loading thread held at the fork."""
    res, err = run(LOADING, first_use, site=gate_site)
    assert res["code"] == 0, err


def test_lookup_on_another_thread_waits_for_a_load_in_progress(gate_site):
    """Not a fork, the same race in one process: a lookup while another thread loads."""
    res, err = run('''
        import threading
        import fork_gate
        import mxnext as mx
        from mxnext import ops as registry

        loader = threading.Thread(target=lambda: mx.nd.ones((2,)))
        loader.start()
        fork_gate.started.wait()
        got = []

        def look_up():
            try:
                got.append(registry.get("_gate_op").provider)
            except mx.MXNetError as exc:
                got.append(str(exc))

        t = threading.Thread(target=look_up)
        t.start()
        end = time.monotonic() + HANG       # until t waits for the load, or is done
        while t.is_alive() and time.monotonic() < end:
            frame = sys._current_frames().get(t.ident)
            while frame is not None and frame.f_code.co_name != "fill":
                frame = frame.f_back
            if frame is not None:
                break
            time.sleep(0.001)
        fork_gate.go.set()
        loader.join()
        t.join()
        print(json.dumps({"got": got}))
    ''', site=gate_site)
    assert res["got"] == ["a-gate"], err


HELD = '''
import threading
import mxnext as mx
from mxnext._runtime import op_table, registry, resource, storage

mx.nd.ones((2,)).asnumpy()          # plugins loaded, cpu(0)'s pool made
lock = {"storage": storage._manager._lock, "pool": storage.pool(mx.cpu()).lock,
        "resource": resource._lock, "registry": op_table._lock}[sys.argv[1]]
held, done = threading.Event(), threading.Event()

def hold():                         # a thread in the middle of an allocation, say
    with lock:
        held.set()
        done.wait()

t = threading.Thread(target=hold)
t.start()
held.wait()

def child():
    a = mx.nd.ones((4,), ctx=mx.cpu(1)) * 2       # a new pool
    b = mx.nd.ones((4,)) + 1                       # the held pool
    mx.random.seed(3)
    r = mx.nd.random.uniform(shape=(4,), ctx=mx.cpu(2))   # a new resource
    registry.op("_fork_new_op")                    # a new registry entry
    assert a.asnumpy().tolist() == b.asnumpy().tolist() == [2.0] * 4 and r.shape == (4,)

code = forked(child)
done.set()
t.join()
print(json.dumps({"code": code}))
'''


@pytest.mark.parametrize("lock", ["storage", "pool", "resource", "registry"])
def test_locks_held_by_other_threads_at_the_fork_are_free_in_the_child(lock):
    res, err = run(HELD, lock)
    assert res["code"] == 0, err


# -- worker processes ---------------------------------------------------------------------
def test_multiprocessing_fork_workers_compute_and_run_custom_ops():
    """What a data-loading worker pool does: fork workers from a parent that has work in
    flight and has run custom ops (whose threads the workers do not have)."""
    res, err = run('''
        import multiprocessing
        import numpy as np
        import mxnext as mx

        @mx.operator.register("fork_double")
        class DoubleProp(mx.operator.CustomOpProp):
            def create_operator(self, ctx, in_shapes, in_dtypes):
                return Double()

        class Double(mx.operator.CustomOp):
            def forward(self, is_train, req, in_data, out_data, aux):
                self.assign(out_data[0], req[0], in_data[0] * 2)

        n = 256
        data = mx.nd.dot(mx.nd.ones((n, n)), mx.nd.ones((n, n)) / n) * 3   # in flight
        parent = mx.nd.Custom(mx.nd.ones((2,)), op_type="fork_double").asnumpy().tolist()

        def work(i):
            row = mx.nd.Custom(data[i], op_type="fork_double")
            return float((row + i).sum().asscalar())

        with multiprocessing.get_context("fork").Pool(2) as pool:
            got = pool.map_async(work, range(4)).get(HANG)
        print(json.dumps({"parent": parent, "got": got}))
    ''')
    assert res["parent"] == [2.0, 2.0]
    assert res["got"] == [6.0 * 256 + i * 256 for i in range(4)], err
