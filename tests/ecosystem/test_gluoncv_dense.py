"""GluonCV 0.10's segmentation (FCN with its auxiliary head), pose (simple pose ResNet) and
CenterNet networks train on mxnext, run unmodified through ``python -m mxnext run``: four
steps on one synthetic batch with the losses their training scripts use, and the loss
falls (gluoncv_dense_prog.py)."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                reason="GluonCV is not installed (make setup's ecosystem extra)")

PROG = pathlib.Path(__file__).parent / "gluoncv_dense_prog.py"
NETWORKS = ["fcn", "simple_pose", "center_net"]


def test_segmentation_pose_and_centernet_losses_fall():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(PROG), *NETWORKS],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line.split() for line in out.stdout.splitlines()]
    assert [line[0] for line in lines] == NETWORKS
    for name, first, last in lines:
        assert 0 < float(last) < 0.5 * float(first), (name, first, last)
