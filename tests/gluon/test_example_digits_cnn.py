"""examples/gluon_digits_cnn.py: a hybridized Gluon CNN fed by a DataLoader with worker
processes learns the digits, printing every epoch's validation accuracy."""

import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("sklearn", reason="the examples extra (make setup installs it)")
SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "gluon_digits_cnn.py"


def test_the_gluon_cnn_learns_the_digits():
    out = subprocess.run([sys.executable, str(SCRIPT), "--epochs", "5", "--num-workers", "2"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    epochs = [line for line in out.stdout.splitlines() if ": validation accuracy " in line]
    assert [line.split(":")[0] for line in epochs] == [f"epoch {i}/5" for i in range(1, 6)]
    assert float(epochs[-1].split()[-1]) >= 0.95, out.stdout
