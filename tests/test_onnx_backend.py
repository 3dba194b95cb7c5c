"""ONNX's own backend test runner through mx.contrib.onnx (tests/onnx_backend.py): the node
tests of the ops MXNet 1.9's importer maps (their function-expanded variants left to the
report, for time), three of the bundled light real models and the PyTorch-converted tests
the onnx package ships. Known gaps are expected failures (an unexpected pass fails, so the list stays
true); tools/onnx_backend_report.py runs every kind and prints the counts next to ONNX
Runtime's."""

import importlib.util
import pathlib
import warnings

import pytest

pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
import onnx.backend.test  # noqa: E402
from onnx.backend.test.loader import load_model_tests  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "onnx_backend", pathlib.Path(__file__).with_name("onnx_backend.py"))
onnx_backend = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(onnx_backend)

# the quick ones of the bundled light real models (VGG-19, ResNet-50 ... take seconds each:
# the report runs them all)
# (not squeezenet: its light model passes with ops-onednn and fails with ops-nn alone,
# its outcome set by the convolutions' float32 rounding; docs/onnx-import.md)
QUICK_REAL = {"test_inception_v1", "test_shufflenet"}


def _backend_test():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        names = [n for n in onnx_backend.mapped_node_tests() if not n.endswith("_expanded")]
        names += [t.name for t in load_model_tests(kind="pytorch-converted")] + sorted(QUICK_REAL)
        bt = onnx.backend.test.BackendTest(onnx_backend.MXNextBackend, __name__)
    for pattern in onnx_backend.KNOWN_FAILURES:
        bt.xfail(pattern)
    wanted = {f"{name}_cpu" for name in names}
    cases = bt.test_cases
    for case in cases.values():          # keep only the chosen tests (no thousands of skips)
        for attr in [a for a in vars(case) if a.startswith("test_") and a not in wanted]:
            delattr(case, attr)
    return cases


@pytest.fixture(autouse=True)
def _onnx_home(tmp_path_factory, monkeypatch):
    """The real-model tests write their dummy inputs under ONNX_HOME."""
    monkeypatch.setenv("ONNX_HOME", str(tmp_path_factory.getbasetemp() / "onnx_home"))


globals().update(_backend_test())
