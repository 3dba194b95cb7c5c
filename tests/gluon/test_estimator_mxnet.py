"""A program written for MXNet 1.9 that trains with the Gluon Estimator (validation data,
checkpoints, early stopping) runs unmodified through ``python -m mxnext run`` and does what
it did on MXNet 1.9.1: the same files written, the same epochs run, the same log."""

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
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


def test_resuming_from_a_checkpoint_mxnet_wrote(tmp_path):
    # make_estimator_ckpt.py: MXNet trained 2 epochs (SGD, momentum 0.9), then resumed to 4
    driver = tmp_path / "resume.py"
    driver.write_text(f"import sys; sys.path.insert(0, {str(FIXTURES)!r})\n"
                      "import make_estimator_ckpt\n"
                      "make_estimator_ckpt.resume(sys.argv[1], sys.argv[2])\n")
    (tmp_path / "ckpt").mkdir()
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(driver),
                          str(tmp_path / "ckpt"), str(tmp_path / "got.npz")],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "Checkpoint resumed from epoch 1 batch 8, continue to train for 2 epochs" \
        in out.stdout
    got = np.load(tmp_path / "got.npz")
    want = np.load(FIXTURES / "estimator_ckpt" / "expected.npz")
    assert list(got["files"]) == list(want["files"])
    # the momentum came back with the states file: without it the weights would differ
    np.testing.assert_allclose(got["weight"], want["weight"], rtol=1e-5)
    np.testing.assert_allclose(got["bias"], want["bias"], rtol=1e-4, atol=1e-6)
