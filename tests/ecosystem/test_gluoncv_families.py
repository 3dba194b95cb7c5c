"""GluonCV 0.10's model zoo beyond image classification runs unmodified on mxnext through
``python -m mxnext run``: action recognition on 5-D clips (I3D, R(2+1)D), HRNet, DLA, a
pose network and CenterNet give MXNet 1.9.1's inference outputs for the same parameters
(gluoncv_families_prog.py; the fixture is MXNet's outputs)."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                reason="GluonCV is not installed (make setup's ecosystem extra)")

PROG = pathlib.Path(__file__).parent / "gluoncv_families_prog.py"
NETWORKS = ["i3d_resnet50_v1_kinetics400", "r2plus1d_resnet18_kinetics400",
            "hrnet_w18_small_v1_c", "dla34", "mobile_pose_mobilenetv3_small",
            "center_net_mobilenetv3_small_duc_voc"]


def test_model_zoo_families_give_mxnet_s_outputs():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(PROG), *NETWORKS],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [f"{name} ok" for name in NETWORKS]
