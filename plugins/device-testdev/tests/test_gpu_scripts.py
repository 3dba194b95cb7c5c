"""The GPU machine's scripts (tools/gpu_lenet.py, bench/gpu.py) on testdev, whose arrays keep
cupy's host boundary: what fails here would fail on the GPU."""

import runpy
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[3]


def test_lenet_trains_on_testdev_like_on_cpu():
    lenet = runpy.run_path(str(ROOT / "tools" / "gpu_lenet.py"))
    acc_cpu, _ = lenet["fit"](lenet["mx"].cpu(), 256, 1)
    acc_dev, _ = lenet["fit"](lenet["mx"].Context("testdev", 0), 256, 1)
    assert abs(acc_dev - acc_cpu) <= 0.02, (acc_cpu, acc_dev)


def test_bench_mlp_and_tiny_op_run_on_testdev():
    bench = runpy.run_path(str(ROOT / "bench" / "gpu.py"))
    assert bench["mlp_mxnext"](16, 2, "testdev") > 0
    assert bench["tiny_mxnext"](5, "testdev") > 0
    assert bench["resnet_mxnext"](2, 1, "testdev") > 0


def test_training_steps_read_no_device_value_on_the_host():
    """The bench's MLP (executor) and hybridized ResNet-18 (Gluon, Trainer) steps never turn a
    device value into a host one: on a GPU that would stall the pushing thread every step."""
    import mxnext as mx
    from mxnext_device_testdev.arrays import host_reads
    bench = runpy.run_path(str(ROOT / "bench" / "gpu.py"))
    ctx = mx.Context("testdev", 0)
    for step in (bench["mlp_step"](16, ctx), bench["resnet_step"](2, ctx)):
        step()                          # first steps: shapes inferred, graphs built
        step()
        mx.nd.waitall()
        before = host_reads.count
        step()
        step()
        mx.nd.waitall()
        assert host_reads.count == before, f"{host_reads.count - before} host reads in 2 steps"


def test_testdev_arrays_refuse_what_cupy_refuses():
    import pytest
    import mxnext as mx
    from mxnext_device_testdev.arrays import XP
    a = mx.nd.ones((3,), ctx=mx.Context("testdev", 0))
    d = a._data()
    with pytest.raises(AttributeError):
        d.ctypes
    with pytest.raises(TypeError, match="Unsupported type numpy.ndarray"):
        d + np.ones(3)
    with pytest.raises(TypeError, match="numpy.copyto"):
        np.copyto(d, np.ones(3))
    with pytest.raises(ValueError):
        d[...] = np.ones(3)
    with pytest.raises(ValueError):
        d.fill(np.ones(3))
    assert type(XP.zeros(2) + d[:2]) is type(d)          # the device's own namespace works
    a[:] = np.arange(3.0)                                # host values are copied over
    np.testing.assert_array_equal(a.asnumpy(), np.arange(3.0))


def test_every_op_runs_on_testdev_like_on_cpu():
    sweep = runpy.run_path(str(ROOT / "tools" / "gpu_op_sweep.py"))
    import mxnext as mx
    results, left = sweep["sweep"](mx.Context("testdev", 0), 600)
    failed = {op: detail for op, (status, detail) in results.items() if status == "FAIL"}
    assert not failed and not left
    assert sum(status == "PASS" for status, _ in results.values()) > 250
