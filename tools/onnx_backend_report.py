"""ONNX's backend test runner over the test data the onnx package ships, through mxnext's
importer (tests/onnx_backend.py) and through ONNX Runtime: a table of pass counts per kind.

Node tests: those whose every op is one MXNet 1.9's importer maps; the other kinds: all.
Usage: python tools/onnx_backend_report.py [--failures]   (needs mxnext[onnx])
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import os
import pathlib
import re
import sys
import tempfile
import unittest
import warnings

ROOT = pathlib.Path(__file__).resolve().parents[1]
KINDS = {"node": "OnnxBackendNodeModelTest", "real": "OnnxBackendRealModelTest",
         "simple": "OnnxBackendSimpleModelTest",
         "pytorch-converted": "OnnxBackendPyTorchConvertedModelTest",
         "pytorch-operator": "OnnxBackendPyTorchOperatorModelTest"}


def load_backend_module():
    spec = importlib.util.spec_from_file_location("onnx_backend", ROOT / "tests" / "onnx_backend.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class _Outcomes(unittest.TextTestResult):
    """Records 'pass', 'fail' or 'skip' per test id, and the last line of each failure."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.outcomes, self.why = {}, {}

    def addSuccess(self, test):
        self.outcomes[test.id()] = "pass"

    def addFailure(self, test, err):
        self.outcomes[test.id()] = "fail"
        self.why[test.id()] = str(err[1]).strip().splitlines()[-1][:160] if str(err[1]) else ""

    addError = addFailure

    def addSkip(self, test, reason):
        self.outcomes[test.id()] = "skip"


def test_names(node_tests):
    """{kind: test names}: the given node tests, every test of the other kinds."""
    from onnx.backend.test.loader import load_model_tests
    names = {kind: sorted(t.name for t in load_model_tests(kind=kind)) for kind in KINDS
             if kind != "node"}
    return {"node": sorted(node_tests), **names}


def run(backend, names):
    """{kind: {test name: outcome}} and {test name: why it failed} for one backend."""
    import onnx.backend.test
    bt = onnx.backend.test.BackendTest(backend, "report")
    every = sorted({n for kind in names.values() for n in kind})
    bt.include(rf"^(?:{'|'.join(re.escape(n) for n in every)})_cpu$")
    suite = unittest.TestSuite()
    for cls in KINDS.values():
        suite.addTests(unittest.defaultTestLoader.loadTestsFromTestCase(bt.test_cases[cls]))
    result = _Outcomes(io.StringIO(), False, 0)
    suite.run(result)
    table = {kind: {} for kind in KINDS}
    for test_id, outcome in result.outcomes.items():
        cls, name = test_id.split(".")[-2:]
        name = name.removesuffix("_cpu")
        kind = next(k for k, c in KINDS.items() if c == cls)
        if name in names[kind]:
            table[kind][name] = outcome
    return table, {k.split(".")[-1].removesuffix("_cpu"): v for k, v in result.why.items()}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--failures", action="store_true", help="list mxnext's failing tests")
    args = parser.parse_args(argv)
    warnings.simplefilter("ignore")
    os.environ.setdefault("ONNX_HOME", tempfile.mkdtemp(prefix="onnx-home-"))
    import onnx
    import onnxruntime
    import onnxruntime.backend
    onnxruntime.set_default_logger_severity(3)      # errors only: failures are counted below
    ob = load_backend_module()
    names = test_names(ob.mapped_node_tests())
    ours, why = run(ob.MXNextBackend, names)
    theirs, _ = run(onnxruntime.backend, names)
    print(f"onnx {onnx.__version__}, onnxruntime {onnxruntime.__version__}")
    print("| kind | tests | mxnext passes | ONNX Runtime passes | both pass |")
    print("|---|---|---|---|---|")
    for kind in KINDS:
        names = sorted(set(ours[kind]) | set(theirs[kind]))
        mine = sum(ours[kind].get(n) == "pass" for n in names)
        ort = sum(theirs[kind].get(n) == "pass" for n in names)
        both = sum(ours[kind].get(n) == theirs[kind].get(n) == "pass" for n in names)
        print(f"| {kind} | {len(names)} | {mine} | {ort} | {both} |")
    if args.failures:
        for kind in KINDS:
            for name, outcome in sorted(ours[kind].items()):
                if outcome != "pass":
                    ort = theirs[kind].get(name, "-")
                    print(f"{kind} {name}: mxnext {outcome}, onnxruntime {ort}: "
                          f"{why.get(name, '')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
