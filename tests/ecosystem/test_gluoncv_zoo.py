"""GluonCV 0.10's classification model zoo runs unmodified on mxnext through ``python -m
mxnext run``: a spread of networks builds (``pretrained=False``), hybridizes, runs forward
and backward, and the gradients that come out non-zero are exactly those that do under
MXNet 1.9.1 (the expected lines below are gluoncv_zoo_prog.py's output there)."""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                reason="GluonCV is not installed (make setup's ecosystem extra)")

PROG = pathlib.Path(__file__).parent / "gluoncv_zoo_prog.py"

# NAME:INPUT-SIZE -> MXNet 1.9.1's line (output shape, non-zero gradients / gradients)
MXNET = {
    "resnet18_v1:64": "(1, 1000) 62/62",
    "resnet18_v2:64": "(1, 1000) 58/58",
    "resnet50_v1d:64": "(1, 1000) 167/167",
    "se_resnet18_v2:64": "(1, 1000) 74/74",
    "resnext50_32x4d:64": "(1, 1000) 49/161",
    "cifar_resnet20_v1:32": "(1, 10) 65/65",
    "cifar_wideresnet16_10:32": "(1, 10) 46/46",
    "mobilenet0.25:64": "(1, 1000) 83/83",
    "mobilenetv2_0.25:64": "(1, 1000) 157/157",
    "mobilenetv3_small:64": "(1, 1000) 141/141",
    "vgg11_bn:32": "(1, 1000) 38/38",
    "squeezenet1.1:224": "(1, 1000) 52/52",
    "densenet121:224": "(1, 1000) 364/364",
    "darknet53:64": "(1, 1000) 158/158",
    "resnest14:64": "(1, 1000) 63/83",
}


def test_classification_networks_train_a_step_like_mxnet():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(PROG), *MXNET],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.splitlines() == [f"{k.split(':')[0]} {v}" for k, v in MXNET.items()]
