"""examples/train_lenet_digits.py, the main job (``make demo``): a short run learns the
digits, prints per-epoch validation accuracy, and writes a checkpoint that loads back."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx

pytest.importorskip("sklearn", reason="the examples extra (make setup installs it)")
SCRIPT = Path(__file__).resolve().parents[1] / "examples" / "train_lenet_digits.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_lenet_digits", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_run_learns_and_its_checkpoint_loads(tmp_path):
    prefix = tmp_path / "ck" / "lenet"
    out = subprocess.run([sys.executable, str(SCRIPT), "--epochs", "3", "--prefix", str(prefix)],
                         capture_output=True, text=True, timeout=240)
    assert out.returncode == 0, out.stderr
    epochs = [line for line in out.stdout.splitlines() if ": validation accuracy " in line]
    assert [line.split(":")[0] for line in epochs] == ["epoch 1/3", "epoch 2/3", "epoch 3/3"]
    assert float(epochs[-1].split()[-1]) > 0.85
    assert "reloaded with mx.model.load_checkpoint, predicts as trained" in out.stdout
    assert "Speed: " in out.stderr and "Epoch[2] Validation-accuracy=" in out.stderr  # no tty
    sym, args, _ = mx.model.load_checkpoint(str(prefix), 3)
    assert sym.list_outputs() == ["softmax_output"] and args["conv1_weight"].shape == (20, 1, 3, 3)


def test_each_worker_reads_its_own_part(monkeypatch):
    example = _example()
    (x0, y0), (vx, _) = example.digits(num_parts=2, part_index=0)
    (x1, y1), (vx1, _) = example.digits(num_parts=2, part_index=1)
    (xa, ya), _ = example.digits()
    assert len(y0) == len(y1) == len(ya) // 2 and x0.shape[1:] == (1, 8, 8)
    np.testing.assert_array_equal(np.concatenate([x0, x1]), xa[:2 * len(y0)])
    np.testing.assert_array_equal(vx, vx1)                    # everyone validates on the same
