"""GluonCV 0.10's detectors train on mxnext, run unmodified through ``python -m mxnext run``:
SSD and YOLOv3 (``pretrained_base=False``) take five SGD steps on one synthetic batch made
by their own train transforms (SSDTargetGenerator, YOLOV3PrefetchTargetGenerator), losses
and batchify functions, hybridized as their training scripts do, and the loss falls.
(Faster R-CNN runs the same way, ``gluoncv_detection_prog.py faster_rcnn``, but takes
minutes on two cores: see docs/ecosystem.md.)"""

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytestmark = pytest.mark.skipif(importlib.util.find_spec("gluoncv") is None,
                                reason="GluonCV is not installed (make setup's ecosystem extra)")

PROG = pathlib.Path(__file__).parent / "gluoncv_detection_prog.py"


def test_ssd_and_yolo3_losses_fall_over_a_few_steps():
    out = subprocess.run([sys.executable, "-m", "mxnext", "run", str(PROG), "ssd", "yolo3"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    lines = [line.split() for line in out.stdout.splitlines()]
    assert [line[0] for line in lines] == ["ssd", "yolo3"]
    for name, first, last in lines:
        assert 0 < float(last) < 0.8 * float(first), (name, first, last)
