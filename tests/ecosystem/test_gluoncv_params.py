"""GluonCV 0.10's model zoo on mxnext, run unmodified through ``python -m mxnext run``:
networks built by GluonCV load parameters saved by MXNet 1.9.1 and reproduce MXNet's
outputs and gradients (fixtures/make_gluoncv_fixtures.py wrote them)."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                reason="GluonCV is not installed (make setup's ecosystem extra)")

HERE = pathlib.Path(__file__).parent
NETWORKS = ["cifar_resnet20_v1", "mobilenet0.25", "mobilenetv2_0.25", "ssd_tiny_mobilenet0.25"]


def test_gluoncv_networks_reproduce_mxnet_s_outputs_from_its_parameters():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run",
                          str(HERE / "gluoncv_params_prog.py"), *NETWORKS],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split("\n")[:-1] == [f"ok {n} {h}" for n in NETWORKS
                                           for h in (False, True)]
