"""tools/gluon-tests, the Gluon yardstick runner: it runs an upstream MXNet test on mxnext
through the alias and scores it against the MXNet 1.9.1 baseline, and a test that crashes
or hangs its process or takes too much memory costs that test only."""

import importlib.util
import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "gluon-tests"


def _runner():
    spec = importlib.util.spec_from_file_location("gluon_tests_run", TOOL / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_one_upstream_test_runs_on_mxnext_and_is_scored(tmp_path):
    out = tmp_path / "result.json"
    proc = subprocess.run([sys.executable, str(TOOL / "run.py"), sys.executable, str(out),
                           "--tests", "test_gluon_save::test_save", "--no-install"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(out.read_text())
    assert res["environment"]["mxnet"].startswith("mxnext ")
    assert res["upstream"]["edited"] == []
    assert res["tests"]["test_gluon_save.py::test_save"]["outcome"] == "passed", res["tests"]
    assert res["score"]["test_gluon_save.py"] == {"reference_passed": 1, "passed_here": 1,
                                                  "percent": 100.0}
    assert proc.stdout.rstrip().splitlines()[-2] == "gluon-tests: 1 passed, 0 failed"


FAULTS = """
    import os, time
    def test_first(): pass
    def test_crash(): os._exit(3)
    def test_hang(): time.sleep(600)
    def test_greedy(): block = bytearray(800 * 2 ** 20); time.sleep(600)
    def test_wrong(): assert 1 == 2, "one is not two"
    def test_last(): pass
"""


def _run_file(tmp_path, source, **env):
    """Outcomes of the tests in ``source`` run as a file by the runner (3 s and 0.5 GB per
    test)."""
    unit, work, logs = (tmp_path / d for d in ("unit", "work", "logs"))
    for d in (unit, work, logs):
        d.mkdir()
    (unit / "test_file.py").write_text(textwrap.dedent(source))
    (tmp_path / "pytest.ini").write_text("[pytest]\npython_files = test_file.py\n")
    env = dict(os.environ, PYTHONPATH=str(TOOL / "shim"), PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
               **env)
    cfg = {"python": sys.executable, "tmp": str(tmp_path), "work": str(work), "logs": str(logs),
           "ini": str(tmp_path / "pytest.ini"), "unit": str(unit), "env": env, "only": {},
           "timeout": 3, "deadline": time.time() + 240, "max_restarts": 5, "memory_gb": 0.5}
    return _runner().FileRun("test_file.py", cfg).run().results


def test_a_crash_a_hang_or_a_memory_hog_costs_one_test_and_the_file_resumes(tmp_path):
    results = _run_file(tmp_path, FAULTS)
    outcomes = {nid.split("::")[1]: r["outcome"] for nid, r in results.items()}
    assert outcomes == {"test_first": "passed", "test_crash": "crashed", "test_hang": "timeout",
                        "test_greedy": "memory", "test_wrong": "failed", "test_last": "passed"}
    assert "exit status 3" in results["test_file.py::test_crash"]["message"]
    assert "one is not two" in results["test_file.py::test_wrong"]["message"]


STUBBED = """
    import mxnet as mx
    import mxnext
    import mxnet.no_such_part as part
    def test_uses_mxnet(): assert mx.nd is mxnext.nd and mx.nd.ones(2).sum().asscalar() == 2
    def test_uses_the_missing_part(): part.make(3)
"""


def test_a_module_mxnext_lacks_fails_only_the_tests_using_it(tmp_path):
    log = tmp_path / "stubs.log"
    results = _run_file(tmp_path, STUBBED, GLUONTESTS_MODULE="mxnext",
                        GLUONTESTS_STUB_LOG=str(log))
    assert results["test_file.py::test_uses_mxnet"]["outcome"] == "passed"
    missing = results["test_file.py::test_uses_the_missing_part"]
    assert missing["outcome"] == "failed"
    assert "stub: mxnext does not provide mxnet.no_such_part.make" in missing["message"]
    assert log.read_text().split() == ["mxnet.no_such_part"]
