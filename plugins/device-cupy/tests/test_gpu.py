"""The gpu device: registration and configuration run everywhere; the rest needs a CUDA
device and skips with the reason where there is none."""

import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext import device
from mxnext.base import MXNetError
from opsdk.device import check_contract
from opsdk.testing import device_conformance_tests, device_unusable

from mxnext_device_cupy.device import GpuDevice

NO_GPU = device_unusable("gpu")
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=str(NO_GPU))

test_gpu_conformance = device_conformance_tests("gpu")


def test_gpu_is_registered_without_importing_cupy():
    code = ("import sys, mxnext as mx; from mxnext import device; "
            "d = device.get('gpu'); from opsdk.device import check_contract; "
            "assert not check_contract(d), check_contract(d); "
            "print(type(d).__name__, 'cupy' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["GpuDevice", "False"]


def test_contract_is_complete():
    assert check_contract(device.get("gpu")) == []


@pytest.mark.skipif(NO_GPU is None, reason="a CUDA device is present")
def test_without_a_gpu_every_use_gives_the_reason():
    assert mx.context.num_gpus() == 0 and list(mx.test_utils.list_gpus()) == []
    with pytest.raises(MXNetError, match="no CUDA device"):
        mx.nd.zeros((2,), ctx=mx.gpu(0))
    from mxnext_cli.devices import device_rows
    row = next(r for r in device_rows() if r["type"] == "gpu")
    assert not row["available"] and "no CUDA device" in row["error"], row


@pytest.mark.parametrize("env, want", [({}, "Naive"), ({"MXNEXT_GPU_MEM_POOL_TYPE": "Round"},
                                        "Round"),
                                       ({"MXNET_GPU_MEM_POOL_TYPE": "Unpooled"}, "Unpooled")])
def test_pool_type_from_the_environment(monkeypatch, env, want):
    for k in ("MXNEXT_GPU_MEM_POOL_TYPE", "MXNET_GPU_MEM_POOL_TYPE"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    assert GpuDevice().pool_type() == want


def test_bad_pool_settings_are_named(monkeypatch):
    monkeypatch.setenv("MXNEXT_GPU_MEM_POOL_TYPE", "Big")
    with pytest.raises(MXNetError, match="MXNEXT_GPU_MEM_POOL_TYPE.*'Big'"):
        GpuDevice().pool_type()
    monkeypatch.setenv("MXNEXT_GPU_MEM_POOL_RESERVE", "150")
    with pytest.raises(MXNetError, match="MXNEXT_GPU_MEM_POOL_RESERVE.*'150'"):
        GpuDevice().reserve()





# -- with a GPU ------------------------------------------------------------------------------

@needs_gpu
def test_gpu_pool_defaults_to_naive_and_out_of_memory_names_the_pool():
    from mxnext import storage
    assert storage.stats(mx.gpu(0))["pool_type"] == GpuDevice().pool_type()
    with pytest.raises(MXNetError, match=r"out of memory .* on gpu\(0\) \(\w+ pool"):
        storage.alloc(1 << 50, mx.gpu(0))


@needs_gpu
def test_an_op_whose_body_leaves_the_device_names_op_and_device():
    from mxnext.registry import op
    probe = op("_gpu_probe_host_body")

    def body(ctx, inputs, req, outputs, params):
        outputs[0][...] = np.asarray(inputs[0]) + 1      # a host-only body
    probe.set_attr("FCompute<cpu>", body)
    from mxnext.opctx import kernel_of
    fcompute, _, _ = kernel_of(probe, device.get("gpu").kernels, " (on gpu(0))")
    cp = device.get("gpu").xp
    x = cp.zeros(3, cp.float32)
    with pytest.raises(MXNetError, match=r"'_gpu_probe_host_body'.*FCompute<gpu>"):
        fcompute(None, [x], [1], [cp.empty_like(x)], None)


@needs_gpu
@pytest.mark.parametrize("name, args, kwargs", [
    ("dot", [(16, 8), (8, 4)], {}),
    ("FullyConnected", [(4, 10), (6, 10), (6,)], {"num_hidden": 6}),
    ("Activation", [(3, 5)], {"act_type": "relu"}),
    ("softmax", [(3, 5)], {}),
    ("SoftmaxOutput", [(4, 5), (4,)], {}),
    ("Convolution", [(2, 3, 8, 8), (4, 3, 3, 3), (4,)], {"kernel": (3, 3), "num_filter": 4}),
    ("Pooling", [(2, 3, 8, 8)], {"kernel": (2, 2), "stride": (2, 2), "pool_type": "max"}),
    ("BatchNorm", [(2, 3, 4, 4), (3,), (3,), (3,), (3,)], {"fix_gamma": False}),
])
def test_consistency_cpu_vs_gpu(name, args, kwargs):
    rng = np.random.default_rng(0)
    arrays = [rng.random(s).astype(np.float32) for s in args]
    if name == "SoftmaxOutput":
        arrays[1] = rng.integers(0, 5, args[1]).astype(np.float32)
    outs = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        res = getattr(mx.nd, name)(*[mx.nd.array(a, ctx=ctx) for a in arrays], **kwargs)
        res = res if isinstance(res, (list, tuple)) else [res]
        outs.append([r.asnumpy() for r in res])
    for c, g in zip(*outs):
        np.testing.assert_allclose(g, c, rtol=1e-4, atol=1e-5)


@needs_gpu
def test_simple_bind_trains_on_gpu_like_on_cpu():
    data = mx.sym.Variable("data")
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(data, num_hidden=3, name="fc"),
                               name="softmax")
    rng = np.random.default_rng(1)
    x, y = rng.random((8, 5), np.float32), rng.integers(0, 3, 8).astype(np.float32)
    w = rng.random((3, 5), np.float32)
    grads = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        ex = net.simple_bind(ctx, data=(8, 5))
        ex.arg_dict["data"][:] = x
        ex.arg_dict["softmax_label"][:] = y
        ex.arg_dict["fc_weight"][:] = w
        ex.arg_dict["fc_bias"][:] = 0
        ex.forward(is_train=True)
        ex.backward()
        grads.append(ex.grad_dict["fc_weight"].asnumpy())
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-4, atol=1e-6)


@needs_gpu
def test_dlpack_zero_copy_with_cupy_and_torch():
    cp = device.get("gpu").xp
    a = mx.nd.arange(6, ctx=mx.gpu(0))
    c = cp.from_dlpack(a.to_dlpack_for_read())
    np.testing.assert_array_equal(cp.asnumpy(c), np.arange(6))
    back = mx.nd.from_dlpack(cp.arange(4, dtype=cp.float32))
    assert back.context == mx.gpu(0)
    np.testing.assert_array_equal(back.asnumpy(), np.arange(4))
    torch = pytest.importorskip("torch")
    t = torch.from_dlpack(mx.nd.ones((3,), ctx=mx.gpu(0)).to_dlpack_for_read())
    assert t.is_cuda and t.sum().item() == 3


@needs_gpu
def test_mx_gpu_arrays_live_in_cupy_memory():
    a = mx.nd.ones((4, 4), ctx=mx.gpu(0))
    cp = device.get("gpu").xp
    assert isinstance(a._data(), cp.ndarray) and a._data().device.id == 0
