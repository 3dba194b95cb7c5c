"""A program written for MXNet 1.9 that trains with the Gluon Estimator (validation data,
checkpoints, early stopping) runs unmodified through ``python -m mxnext run`` and does what
it did on MXNet 1.9.1: the same files written, the same epochs run, the same log."""

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
VALUE = re.compile(r"\d+\.\d{4}\b")


def test_estimator_fit_matches_mxnet():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run",
                          str(FIXTURES / "estimator_fit.py")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout)
    want = json.loads((FIXTURES / "estimator_fit_mxnet.json").read_text())
    for key in ("files", "val_accuracy", "early_stopping", "checkpoint"):
        assert got[key] == want[key], key
    # the log says the same things; its metric values agree to the printed precision
    assert [VALUE.sub("<v>", line) for line in got["log"]] == \
        [VALUE.sub("<v>", line) for line in want["log"]]
    got_values = [float(v) for line in got["log"] for v in VALUE.findall(line)]
    want_values = [float(v) for line in want["log"] for v in VALUE.findall(line)]
    assert got_values == pytest.approx(want_values, abs=2e-4)
