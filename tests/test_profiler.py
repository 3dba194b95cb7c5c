"""mx.profiler: the Chrome trace file, aggregate statistics, the profiling objects, and the
engine hooks (nothing recorded while stopped)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

import mxnext as mx
from mxnext import profiler
from mxnext.base import MXNetError, ParamError
from mxnext._runtime.engine import _base as engine_base
from mxnext.profiler._record import profiler as the_profiler


@pytest.fixture(autouse=True)
def fresh_profiler(tmp_path):
    """Each test starts stopped, with nothing recorded, and leaves it so."""
    def reset():
        profiler.set_state("stop")
        profiler.set_config(filename=str(tmp_path / "reset.json"), continuous_dump=False,
                            aggregate_stats=False)
        the_profiler.output = False
        the_profiler.take()
    reset()
    yield
    mx.nd.waitall()
    reset()


def start(tmp_path, name="trace.json", **kwargs):
    path = tmp_path / name
    cfg = dict(profile_all=True, filename=str(path), continuous_dump=False)
    cfg.update(kwargs)
    profiler.set_config(**cfg)
    profiler.set_state("run")
    return path


def events(path):
    return json.loads(path.read_text())["traceEvents"]


def spans(evs, phase="B"):
    return [(e["name"], e["cat"]) for e in evs if e["ph"] == phase]


# -- the trace file -------------------------------------------------------------------
def test_imperative_ops_are_begin_end_pairs_on_their_device(tmp_path):
    path = start(tmp_path)
    a = mx.nd.ones((4, 4))
    b = mx.nd.sqrt(a) + 1
    b.wait_to_read()
    profiler.set_state("stop")
    profiler.dump()
    evs = events(path)
    begins = [e for e in evs if e["ph"] == "B" and e["cat"] == "operator"]
    ends = [e for e in evs if e["ph"] == "E" and e["cat"] == "operator"]
    assert [e["name"] for e in begins] == ["_ones", "sqrt", "_plus_scalar"]
    for b_, e_ in zip(begins, ends):
        assert b_["name"] == e_["name"] and b_["tid"] == e_["tid"]
        assert b_["pid"] == e_["pid"] == 0
        assert isinstance(b_["tid"], int) and b_["ts"] <= e_["ts"]
        assert abs(b_["ts"] - time.time() * 1e6) < 60e6          # microseconds since epoch
    meta = {e["pid"]: e["args"]["name"] for e in evs if e["ph"] == "M"}
    assert meta[0] == "cpu/0" and meta[1] == "cpu/1"
    assert json.loads(path.read_text())["displayTimeUnit"] == "ms"


def test_ops_on_another_cpu_use_its_pid(tmp_path):
    path = start(tmp_path)
    mx.nd.ones((2,), ctx=mx.cpu(1)).wait_to_read()
    profiler.dump()
    (ev,) = [e for e in events(path) if e["ph"] == "B"]
    assert ev["name"] == "_ones" and ev["pid"] == 1


def _bound_dot():
    a, b = mx.sym.Variable("a"), mx.sym.Variable("b")
    exe = mx.sym.dot(a, b).simple_bind(mx.cpu(), grad_req="null", a=(8, 8), b=(8, 8))
    exe.arg_dict["a"][:] = 1
    exe.arg_dict["b"][:] = 2
    mx.nd.waitall()
    return exe


def test_symbolic_runs_are_named_by_op(tmp_path):
    exe = _bound_dot()                       # bound before the profiler starts, as MXNet's
    path = start(tmp_path)
    exe.forward()
    np.testing.assert_allclose(exe.outputs[0].asnumpy(), np.full((8, 8), 16.0))
    profiler.dump()
    assert ("dot", "operator") in spans(events(path))


def test_bulked_segment_is_one_event_naming_its_ops(tmp_path):
    x = mx.sym.Variable("x")
    exe = (mx.sym.sqrt(x) + 1).simple_bind(mx.cpu(), grad_req="null", x=(3,))
    path = start(tmp_path)
    exe.forward(x=mx.nd.array([1, 4, 9]))
    assert exe.outputs[0].asnumpy().tolist() == [2, 3, 4]
    profiler.dump()
    assert ("[sqrt,_plus_scalar]", "operator") in spans(events(path))


@pytest.mark.parametrize("imperative", [True, False])
def test_symbolic_and_imperative_switches(tmp_path, imperative):
    exe = _bound_dot()
    path = start(tmp_path, profile_all=False, profile_imperative=imperative,
                 profile_symbolic=not imperative)
    exe.forward()
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    mx.nd.waitall()
    profiler.dump()
    names = {n for n, _ in spans(events(path))}
    assert ("sqrt" in names) == imperative
    assert ("dot" in names) == (not imperative)


def _register_plus_one(name):
    class PlusOne(mx.operator.CustomOp):
        def forward(self, is_train, req, in_data, out_data, aux):
            self.assign(out_data[0], req[0], in_data[0] + 1)

        def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
            self.assign(in_grad[0], req[0], out_grad[0] * 2)

    @mx.operator.register(name)
    class PlusOneProp(mx.operator.CustomOpProp):
        def __init__(self):
            super().__init__(need_top_grad=True)

        def list_arguments(self):
            return ["data"]

        def list_outputs(self):
            return ["output"]

        def infer_shape(self, in_shape):
            return [in_shape[0]], [in_shape[0]], []

        def create_operator(self, ctx, shapes, dtypes):
            return PlusOne()


def test_custom_op_code_and_what_it_runs_are_named_after_it(tmp_path):
    _register_plus_one("ProfPlusOne")
    path = start(tmp_path)
    x = mx.nd.array([1.0, 2.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="ProfPlusOne")
    y.backward()
    assert x.grad.asnumpy().tolist() == [2.0, 2.0]
    mx.nd.waitall()
    profiler.dump()
    got = set(spans(events(path)))
    for name in ("ProfPlusOne::pure_python", "ProfPlusOne::_plus_scalar",
                 "_backward_ProfPlusOne::pure_python"):
        assert (name, "Custom Operator") in got
    names = {n for n, _ in got}
    assert not names & {"Custom", "_backward_Custom", "CustomOperatorWait"}


# -- aggregate statistics -------------------------------------------------------------
def test_aggregate_json_counts_and_units(tmp_path):
    start(tmp_path, aggregate_stats=True)
    a = mx.nd.zeros((5, 5))
    mx.nd.sqrt(a)
    a = a + 1
    a = a + 1
    mx.nd.waitall()
    stats = json.loads(profiler.dumps(format="json"))
    assert stats["Unit"] == {"Time": "ms", "Memory": "kB"}
    ops = stats["Time"]["operator"]
    assert ops["sqrt"]["Count"] == 1 and ops["_plus_scalar"]["Count"] == 2
    row = ops["_plus_scalar"]
    assert set(row) == {"Count", "Total", "Min", "Max", "Avg"}
    assert row["Min"] <= row["Avg"] <= row["Max"] <= row["Total"]
    memory = stats["Memory"]["Device Storage"]["Memory: cpu/0"]
    assert set(memory) == {"Count", "Min", "Max", "Avg"} and memory["Max"] >= 0.1


def test_aggregate_table_layout(tmp_path):
    start(tmp_path, aggregate_stats=True)
    mx.nd.sqrt(mx.nd.ones((3,))).wait_to_read()
    text = profiler.dumps()
    lines = text.split("\n")
    assert lines[:3] == ["", "Profile Statistics:",
                         "\tNote the difference in units for different entries."]
    i = lines.index("operator")
    assert lines[i + 1] == "================="
    assert lines[i + 2].split() == ["Name", "Total", "Count", "Time", "(ms)", "Min", "Time",
                                    "(ms)", "Max", "Time", "(ms)", "Avg", "Time", "(ms)"]
    row = next(r for r in lines[i + 4:] if r.startswith("sqrt "))
    assert len(row) == 25 + 16 + 4 * 17 and row.split()[1] == "1"
    j = lines.index("Device Storage")
    assert "Min Use  (kB)" in lines[j + 2] and "Time" not in lines[j + 2]


def test_sorting_and_reset(tmp_path):
    start(tmp_path, aggregate_stats=True)
    a = mx.nd.ones((4,))
    for _ in range(3):
        a = a + 1
    mx.nd.sqrt(a).wait_to_read()
    for key, field in (("count", "Count"), ("total", "Total"), ("max", "Max")):
        for asc in (False, True):
            ops = json.loads(profiler.dumps(format="json", sort_by=key,
                                            ascending=asc))["Time"]["operator"]
            values = [row[field] for row in ops.values()]     # dicts keep the printed order
            assert len(values) == 3 and values == sorted(values, reverse=not asc)
    assert json.loads(profiler.dumps(format="json", reset=True))["Time"]["operator"]
    assert "operator" not in json.loads(profiler.dumps(format="json"))["Time"]


def test_dumps_checks_its_arguments_and_is_empty_without_stats(tmp_path):
    start(tmp_path)
    assert profiler.dumps() == ""
    with pytest.raises(ParamError, match="sort_by"):
        profiler.dumps(sort_by="median")
    with pytest.raises(ParamError, match="format"):
        profiler.dumps(format="xml")


# -- state ----------------------------------------------------------------------------
def test_nothing_is_recorded_while_stopped(tmp_path):
    assert engine_base._profiling is False
    profiler.Counter(profiler.Domain("D"), "c").increment()
    e = profiler.Event("e")
    e.start()
    mx.nd.sqrt(mx.nd.ones((3,))).wait_to_read()
    e.stop()
    assert the_profiler.records == []
    with pytest.raises(MXNetError, match="hasn't been run"):
        profiler.dump()


def test_stop_uninstalls_the_engine_hook(tmp_path):
    start(tmp_path)
    assert engine_base._profiling is True
    profiler.set_state("stop")
    assert engine_base._profiling is False
    mx.nd.ones((2,)).wait_to_read()
    assert the_profiler.records == []


def test_pause_and_resume(tmp_path):
    path = start(tmp_path)
    profiler.pause()
    assert engine_base._profiling is False
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    profiler.Event("while_paused").start()
    profiler.resume()
    ev = profiler.Event("after_resume")
    ev.start()
    mx.nd.exp(mx.nd.ones((2,))).wait_to_read()
    ev.stop()
    profiler.dump()
    names = {n for n, _ in spans(events(path))}
    assert {"exp", "after_resume"} <= names and not names & {"sqrt", "while_paused"}


def test_continuous_dump_appends_then_closes(tmp_path):
    path = start(tmp_path, continuous_dump=True, dump_period=3600)
    mx.nd.ones((2,)).wait_to_read()
    profiler.dump(False)
    size = path.stat().st_size
    with pytest.raises(json.JSONDecodeError):      # still open
        json.loads(path.read_text())
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    profiler.dump(False)
    assert path.stat().st_size > size
    profiler.dump(True)
    assert [n for n, _ in spans(events(path))] == ["_ones", "_ones", "sqrt"]
    with pytest.raises(MXNetError):                # finished: output ended
        profiler.dump()


def test_periodic_dump_writes_without_being_asked(tmp_path):
    path = start(tmp_path, continuous_dump=True, dump_period=0.05)
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    deadline = time.monotonic() + 20
    while b"sqrt" not in (path.read_bytes() if path.exists() else b""):
        assert time.monotonic() < deadline, "no periodic dump"
        time.sleep(0.05)


def test_new_config_closes_the_continuous_file(tmp_path):
    first = start(tmp_path, "first.json", continuous_dump=True, dump_period=3600)
    mx.nd.ones((2,)).wait_to_read()
    profiler.dump(False)
    second = start(tmp_path, "second.json")
    mx.nd.sqrt(mx.nd.ones((2,))).wait_to_read()
    profiler.dump()
    assert [n for n, _ in spans(events(first))] == ["_ones"]
    assert "sqrt" in [n for n, _ in spans(events(second))]


def test_set_config_checks_keys():
    with pytest.raises(ParamError, match="profile_symbolc.*did you mean 'profile_symbolic'"):
        profiler.set_config(profile_symbolc=True)
    with pytest.raises(ParamError):
        profiler.set_state("go")
    with pytest.raises(MXNetError, match="server"):
        profiler.set_state("run", profile_process="server")


# -- profiling objects ----------------------------------------------------------------
def test_task_frame_event_phases_and_categories(tmp_path):
    path = start(tmp_path, aggregate_stats=True)
    dom = profiler.Domain("Work")
    for obj in (dom.new_task("t"), dom.new_frame("f"), profiler.Event("e")):
        obj.start()
        obj.stop()
    profiler.dump()
    got = {e["name"]: (e["cat"], e["ph"]) for e in events(path) if e["ph"] in "b(B"}
    assert got == {"t": ("Work", "b"), "f": ("Work,frame", "("), "e": ("event", "B")}
    meta = {e["args"]["name"] for e in events(path) if e["ph"] == "M"}
    assert {"Work", "Work,frame", "event"} <= meta
    stats = json.loads(profiler.dumps(format="json"))["Time"]
    assert stats["Work"]["t"]["Count"] == stats["event"]["e"]["Count"] == 1
    with pytest.raises(MXNetError, match="before start"):
        profiler.Task(dom, "never").stop()


def test_counter_reports_each_value(tmp_path):
    path = start(tmp_path, aggregate_stats=True)
    c = profiler.Domain("Cnt").new_counter("n", 5)
    c += 3
    c -= 2
    c.increment()
    c.decrement(4)
    c.set_value(10)
    profiler.dump()
    values = [e["args"]["n"] for e in events(path) if e["ph"] == "C" and e["name"] == "n"]
    assert values == [5, 8, 6, 7, 3, 10]
    row = json.loads(profiler.dumps(format="json"))["Time"]["Cnt"]["n"]
    assert row["Count"] == 6 and row["Min"] == 0.003 and row["Max"] == 0.01


def test_marker_scopes(tmp_path):
    path = start(tmp_path)
    dom = profiler.Domain("M")
    for scope in ("thread", "global", "process"):
        dom.new_marker(scope).mark(scope)
    profiler.dump()
    marks = {e["name"]: e["s"] for e in events(path) if e["ph"] == "n"}
    assert marks == {"thread": "t", "global": "g", "process": "p"}
    with pytest.raises(ParamError, match="scope"):
        profiler.Marker(dom, "x").mark("galaxy")


def test_scope_nests():
    assert profiler.current_scope() == "<unk>:"
    with profiler.scope("net") as outer:
        with profiler.scope("layer1") as inner:
            assert inner == "net:layer1:" == profiler.current_scope()
        with profiler.scope("alone:", append_mode=False) as alone:
            assert alone == "alone:"
        assert outer == profiler.current_scope() == "net:"
    assert profiler.current_scope() == "<unk>:"


# -- process level --------------------------------------------------------------------
def _run(code, cwd, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=cwd,
                          env={**os.environ, **env}, capture_output=True, text=True,
                          timeout=120)


def test_autostart_records_from_the_start_and_dumps_at_exit(tmp_path):
    res = _run("""
        import mxnext as mx
        mx.nd.sqrt(mx.nd.ones((3,))).wait_to_read()
    """, tmp_path, MXNET_PROFILER_AUTOSTART="1", MXNET_PROFILER_MODE="15")
    assert res.returncode == 0, res.stderr
    assert ("sqrt", "operator") in spans(events(tmp_path / "profile.json"))


def test_import_does_not_load_the_profiler(tmp_path):
    res = _run("""
        import sys, mxnext as mx
        assert "mxnext.profiler" not in sys.modules
        assert mx.profiler.Domain
    """, tmp_path)
    assert res.returncode == 0, res.stderr


def test_memory_only_mode_follows_the_pool_without_op_events(tmp_path):
    path = start(tmp_path, profile_all=False, profile_memory=True, profile_imperative=False,
                 profile_symbolic=False)
    keep = mx.nd.ones((64, 64))                  # 16 kB more in use
    keep.wait_to_read()
    profiler.dump()
    evs = events(path)
    assert spans(evs) == []
    used = [e["args"]["Memory: cpu/0"] for e in evs if e["ph"] == "C"]
    assert used and used[-1] >= keep.size * 4
