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
from opsdk.testing import device_consistency_tests, device_conformance_tests, device_unusable

from mxnext_device_cupy.device import GpuDevice

NO_GPU = device_unusable("gpu")
needs_gpu = pytest.mark.skipif(NO_GPU is not None, reason=str(NO_GPU))

test_gpu_conformance = device_conformance_tests("gpu")
test_gpu_layers = device_consistency_tests("gpu")     # check_consistency vs cpu


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
    from mxnext.ops import op
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


@needs_gpu
@pytest.mark.parametrize("geo", [
    {"kernel": (3, 3), "num_filter": 8, "pad": (1, 1)},
    {"kernel": (3, 3), "num_filter": 8, "stride": (2, 2), "pad": (1, 1), "no_bias": True},
    {"kernel": (1, 1), "num_filter": 4},
    {"kernel": (3, 3), "num_filter": 6, "dilate": (2, 2), "pad": (2, 2), "num_group": 2},
    {"kernel": (7, 7), "num_filter": 8, "stride": (2, 2), "pad": (3, 3)},
])
def test_convolution_kernel_gives_the_generic_bodys_results_and_gradients(geo):
    """The gpu's Convolution (cuDNN where installed) against the cpu's im2col: output and the
    three gradients, written and added (grad_req='add')."""
    from mxnext_device_cupy import cudnn_conv
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 6, 12, 12)).astype(np.float32)
    k = geo["kernel"]
    w = rng.standard_normal((geo["num_filter"], 6 // geo.get("num_group", 1)) + k)
    w = w.astype(np.float32)
    b = rng.standard_normal(geo["num_filter"]).astype(np.float32)
    res = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        args = [mx.nd.array(a, ctx=ctx) for a in ([x, w] if geo.get("no_bias") else [x, w, b])]
        for a in args:
            a.attach_grad(grad_req="add")
        for _ in range(2):                  # the second backward adds to the first
            with mx.autograd.record():
                y = mx.nd.Convolution(*args, **geo)
            y.backward(mx.nd.array(np.linspace(-1, 1, y.size).reshape(y.shape), ctx=ctx))
        res.append([y.asnumpy()] + [a.grad.asnumpy() for a in args])
    for c, g in zip(*res):
        np.testing.assert_allclose(g, c, rtol=2e-4, atol=2e-4)
    print(cudnn_conv.describe())


@needs_gpu
def test_ops_enqueue_without_waiting_and_reads_wait_for_their_work():
    """Kernels go onto the pushing thread's stream and the push returns before the device is
    done; a read waits for exactly that work, through the engine, in order."""
    a = mx.nd.ones((4096, 4096), ctx=mx.gpu(0))
    a.wait_to_read()
    y = a
    for _ in range(30):                     # 4 TFLOP of GEMMs: far longer than pushing them
        y = mx.nd.dot(y, a) * (1.0 / 4096)
    lane, seq = y._chunk.var.dev.w
    assert not lane.is_done(seq), "the pushing thread waited for the device"
    np.testing.assert_allclose(y.asnumpy()[:2, :2], 1.0, rtol=1e-4)
    assert lane.done >= seq


@needs_gpu
def test_work_crossing_threads_waits_on_the_device_for_the_other_stream():
    import threading
    a = mx.nd.ones((1024, 1024), ctx=mx.gpu(0))
    out = []

    def produce():
        y = a
        for _ in range(10):
            y = mx.nd.dot(y, a) * (1.0 / 1024)
        out.append(y + 1)                   # enqueued on this thread's stream, not waited
    t = threading.Thread(target=produce)
    t.start()
    t.join()
    (z,) = out
    w = z * 2                               # this thread's stream waits for the other's mark
    assert w._chunk.var.dev.w[0] is not z._chunk.var.dev.w[0]
    np.testing.assert_allclose(w.asnumpy()[:3, :3], 4.0, rtol=1e-4)


@needs_gpu
@pytest.mark.parametrize("op, states, params", [
    ("sgd_update", 0, {"lr": 0.1, "wd": 0.01}),
    ("sgd_update", 0, {"lr": 0.1, "rescale_grad": 2.0, "clip_gradient": 0.5}),
    ("sgd_mom_update", 1, {"lr": 0.1, "wd": 0.01, "momentum": 0.9}),
    ("adam_update", 2, {"lr": 0.01, "wd": 0.001, "clip_gradient": 1.0}),
    ("multi_sgd_update", 0, {"lrs": (0.1, 0.2), "wds": (0.0, 0.01), "num_weights": 2}),
    ("multi_sgd_mom_update", 1, {"lrs": (0.1, 0.2), "wds": (0.0, 0.01), "momentum": 0.9,
                                 "num_weights": 2}),
])
def test_fused_optimizer_updates_match_the_cpu(op, states, params):
    """In place (out=weight) twice, then into a fresh array: weights and states as on cpu."""
    rng = np.random.default_rng(4)
    n = params.get("num_weights", 1)
    groups = [[rng.standard_normal(50).astype(np.float32) for _ in range(2 + states)]
              for _ in range(n)]
    if op == "adam_update":
        groups[0][3] = np.abs(groups[0][3])
    res = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        arrs = [[mx.nd.array(a, ctx=ctx) for a in grp] for grp in groups]
        flat = [a for grp in arrs for a in grp]
        weights = [grp[0] for grp in arrs]
        for _ in range(2):
            getattr(mx.nd, op)(*flat, out=weights if n > 1 else weights[0], **params)
        fresh = [mx.nd.zeros((50,), ctx=ctx) for _ in range(n)]
        getattr(mx.nd, op)(*flat, out=fresh if n > 1 else fresh[0], **params)
        res.append([a.asnumpy() for a in flat + fresh])
    for c, g in zip(*res):
        np.testing.assert_allclose(g, c, rtol=1e-5, atol=1e-6)


@needs_gpu
@pytest.mark.parametrize("op, kw", [
    ("BatchNorm", {"fix_gamma": False}),
    ("BatchNorm", {"fix_gamma": True, "axis": -1, "momentum": 0.8}),
    ("BatchNorm", {"fix_gamma": False, "use_global_stats": True}),
])
def test_batch_norm_kernels_match_the_cpu(op, kw):
    """Training output, the three gradients (grad_req='add', two backwards), the moving
    statistics' update, then inference, against the cpu's."""
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 3, 5, 6)).astype(np.float32) * 2 + 1
    c = x.shape[kw.get("axis", 1)]
    params = [rng.standard_normal(c).astype(np.float32) for _ in range(3)]
    mv = (rng.random(c) + 0.5).astype(np.float32)
    head = rng.standard_normal(x.shape).astype(np.float32)
    res = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        xs, gamma, beta, mm = (mx.nd.array(a, ctx=ctx) for a in [x] + params)
        var = mx.nd.array(mv, ctx=ctx)
        for a in (xs, gamma, beta):
            a.attach_grad(grad_req="add")
        for _ in range(2):
            with mx.autograd.record():
                y = getattr(mx.nd, op)(xs, gamma, beta, mm, var, **kw)
            y.backward(mx.nd.array(head, ctx=ctx))
        infer = getattr(mx.nd, op)(xs, gamma, beta, mm, var, **kw)
        res.append([a.asnumpy() for a in (y, xs.grad, gamma.grad, beta.grad, mm, var, infer)])
    for c_, g in zip(*res):
        np.testing.assert_allclose(g, c_, rtol=1e-4, atol=1e-4)


@needs_gpu
@pytest.mark.parametrize("kw", [
    {"kernel": (3, 3), "stride": (2, 2), "pad": (1, 1)},
    {"kernel": (2, 2), "stride": (2, 2)},
    {"kernel": (3, 2), "stride": (2, 1), "pooling_convention": "full"},
    {"kernel": (3, 3), "pool_type": "avg", "pad": (1, 1)},          # the generic body
])
def test_pooling_kernels_match_the_cpu(kw):
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2, 3, 9, 8)).astype(np.float32)
    x[0, 0, :3, :3] = 1.5                  # ties: the gradient goes to the first maximum
    _on_cpu_and_gpu(lambda a: mx.nd.Pooling(a, **kw), x,
                    lambda shape: np.arange(np.prod(shape)).reshape(shape) % 7, rtol=1e-6)


def _on_cpu_and_gpu(call, x, head, rtol, atol=0.0):
    """``call(a)`` on cpu and on gpu, ``a`` holding ``x`` with grad_req 'add', backward twice
    from ``head(shape)``: outputs and gradients compared."""
    res = []
    for ctx in (mx.cpu(), mx.gpu(0)):
        a = mx.nd.array(x, ctx=ctx)
        a.attach_grad(grad_req="add")
        for _ in range(2):
            with mx.autograd.record():
                y = call(a)
            y.backward(mx.nd.array(head(y.shape), ctx=ctx))
        res.append([y.asnumpy(), a.grad.asnumpy()])
    for c, g in zip(*res):
        np.testing.assert_allclose(g, c, rtol=rtol, atol=atol)


@needs_gpu
@pytest.mark.parametrize("op, kw, shape", [
    ("softmax", {}, (4, 10)),
    ("softmax", {"temperature": 2.0}, (3, 2, 300)),    # rows wider than a thread block
    ("log_softmax", {}, (5, 7)),
    ("softmin", {"axis": -1}, (2, 3, 4)),
    ("softmax", {"axis": 0}, (4, 6)),                   # the generic body
])
def test_softmax_kernels_match_the_cpu(op, kw, shape):
    rng = np.random.default_rng(8)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x.reshape(-1, shape[-1])[0, :2] = [50.0, 50.0]
    head = rng.standard_normal(shape).astype(np.float32)
    _on_cpu_and_gpu(lambda a: getattr(mx.nd, op)(a, **kw), x, lambda _: head, rtol=1e-5,
                    atol=1e-6)
