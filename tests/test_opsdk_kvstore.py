"""opsdk.kvstore (the face for KVStore backend authors: engine_call, the stores to extend,
2-bit compression) and the conformance kit of opsdk.testing.kvstore, run on the builtin
``local`` and ``device`` stores and on a backend written against opsdk alone."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import mxnext as mx
from mxnext import engine
from mxnext.base import MXNetError
from opsdk import kvstore as sdk
from opsdk.testing.kvstore import (KVSTORE_CHECKS, kvstore_conformance_tests,
                                   run_kvstore_checks)

test_conformance_local = kvstore_conformance_tests("local")
test_conformance_device = kvstore_conformance_tests("device")


def test_opsdk_kvstore_is_the_stores_of_mx_kv():
    assert sdk.KVStoreBase is mx.kvstore.KVStoreBase
    assert sdk.LocalKVStore is mx.kvstore.KVStore and sdk.DeviceKVStore is mx.kvstore.DeviceKVStore
    assert all(hasattr(sdk, n) for n in sdk.__all__)


class _Held:
    """An engine function writing ``arr`` that finishes only when ``release()`` is called."""

    def __init__(self, arr, value):
        self.started, self._done = threading.Event(), []
        data = arr._data()

        def write(rctx, on_complete):
            self._done.append(lambda: (data.__setitem__(Ellipsis, value), on_complete()))
            self.started.set()

        engine.get().push_async(write, arr.context, (), (arr._chunk.var,))

    def release(self):
        assert self.started.wait(30)
        self._done.pop()()


def test_engine_call_orders_by_the_arrays_and_overlaps_the_rest():
    with engine.use_engine("ThreadedEnginePerDevice"):
        a, b, out_a, out_b = (mx.nd.zeros((4,)) for _ in range(4))
        held = _Held(a, 5.0)                      # a is written later
        seen = []

        def copy(src, dst):
            seen.append(float(src[0]))
            dst[...] = src * 2

        sdk.engine_call(copy, (a,), (out_a,), name="copy a")
        sdk.engine_call(copy, (b,), (out_b,), name="copy b")
        out_b.wait_to_read()                      # the other key did not wait for a
        assert out_b.asnumpy().tolist() == [0.0] * 4 and seen == [0.0]
        held.release()
        assert out_a.asnumpy().tolist() == [10.0] * 4 and seen == [0.0, 5.0]


def test_engine_call_asynchronous_finishes_when_done_is_called_from_another_thread():
    out = mx.nd.zeros((3,))

    def fill(dst, done):
        threading.Thread(target=lambda: (dst.__setitem__(Ellipsis, 7), done())).start()

    sdk.engine_call(fill, (), (out,), name="fill", asynchronous=True)
    assert out.asnumpy().tolist() == [7.0] * 3

    def fail(dst, done):
        threading.Thread(target=lambda: done(MXNetError("the link went down"))).start()

    sdk.engine_call(fail, (), (out,), name="send", asynchronous=True)
    with pytest.raises(MXNetError, match="operator 'send' failed: MXNetError: the link went "
                                         "down"):
        out.wait_to_read()
    with pytest.raises(MXNetError, match="at least one NDArray"):
        sdk.engine_call(fill, name="nothing")


def test_engine_call_on_error_runs_instead_when_an_input_holds_an_error():
    src, dst, skipped = mx.nd.zeros((2,)), mx.nd.zeros((2,)), mx.nd.zeros((2,))
    engine.get().push_sync(lambda rctx: 1 / 0, src.context, (), (src._chunk.var,), name="boom")
    seen = []

    def on_error(exc, s, d, done):
        seen.append(type(exc).__name__)
        done(exc)

    sdk.engine_call(lambda s, d, done: seen.append("fn"), (src,), (dst,), name="send",
                    asynchronous=True, on_error=on_error)
    sdk.engine_call(lambda s, d, done: seen.append("fn"), (src,), (skipped,), name="plain",
                    asynchronous=True)
    with pytest.raises(MXNetError, match="operator 'send' failed: ZeroDivisionError"):
        dst.wait_to_read()
    with pytest.raises(MXNetError, match="operator 'boom' failed: ZeroDivisionError"):
        skipped.wait_to_read()                   # skipped: inherits the error as it was
    assert seen == ["ZeroDivisionError"]
    engine.get().wait_for_all()                  # each error was raised once


def test_two_bit_quantize_matches_mxnets_layout_and_residuals():
    gc = sdk.GradientCompression({"type": "2bit", "threshold": "0.5"})
    assert gc.threshold == 0.5 and gc.compressed_size(17) == 2
    grad = np.array([0.6, -0.7, 0.1, 0.0] + [0.0] * 12 + [1.0], np.float32)
    residual = np.zeros_like(grad)
    words = np.empty(2, np.float32)
    gc.quantize(grad, residual, words)
    # value 0 -> 11 (0xc0), value 1 -> 10 (0x20), values 2, 3 -> 00; value 16 -> 11 in word 1
    assert words.view(np.uint8).tolist() == [0xE0, 0, 0, 0, 0xC0, 0, 0, 0]
    assert np.allclose(residual, [0.1, -0.2, 0.1, 0.0] + [0.0] * 12 + [0.5])
    out = np.empty_like(grad)
    gc.dequantize(words, out)
    assert out.tolist() == [0.5, -0.5] + [0.0] * 14 + [0.5]


@pytest.mark.parametrize("params, error", [
    ({"threshold": 0.5}, "needs 'type'"), ({"type": "1bit"}, "unknown compression type '1bit'"),
    ({"type": "2bit", "threshold": -1}, "threshold must be greater than 0, got -1.0"),
    ({"type": "2bit", "threshold": "x"}, "threshold must be a number, got 'x'"),
    ("2bit", "must be a dict"),
])
def test_compression_params_are_checked(params, error):
    with pytest.raises(MXNetError, match=error):
        mx.kv.create("device").set_gradient_compression(params)


def test_device_store_quantizes_each_devices_value_with_its_own_residual():
    kv = mx.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(0, mx.nd.zeros((4,)))
    out = mx.nd.zeros((4,))
    sums = []
    for _ in range(2):
        kv.push(0, [mx.nd.ones((4,), ctx=mx.cpu(i)) * 0.3 for i in range(2)])
        kv.pull(0, out=out)
        sums.append(out.asnumpy()[0])
    assert sums == [0.0, 1.0]                    # 0.3 each kept back, then 0.5 sent by each
    with pytest.raises(MXNetError, match="key 1: gradient compression works on float32 values "
                                         "only, got float64"):
        kv.init(1, mx.nd.zeros((2,), dtype="float64"))
        kv.push(1, mx.nd.zeros((2,), dtype="float64"))


def test_device_store_sums_each_key_on_one_of_its_devices():
    kv = mx.kv.create("device")
    homes = {}

    def updater(key, recv, local):
        homes[key] = (recv.context, local.context)
        local += recv

    kv._set_updater(updater)
    devs = [mx.cpu(0), mx.cpu(1)]
    kv.init(["a", "b"], [mx.nd.zeros((8,)), mx.nd.zeros((8,))])
    kv.push(["a", "b"], [[mx.nd.ones((8,), ctx=d) for d in devs]] * 2)
    out = mx.nd.zeros((8,))
    kv.pull("b", out=out)
    assert out.asnumpy().tolist() == [2.0] * 8
    assert {homes["a"][0], homes["b"][0]} == set(devs)      # spread over the devices
    assert all(recv == local for recv, local in homes.values())


def _train(kvstore, contexts):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 6)).astype("float32")
    y = (x[:, 0] > 0).astype("float32")
    net = mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=2, name="fc")
    net = mx.sym.SoftmaxOutput(net, name="softmax")
    mod = mx.mod.Module(net, context=contexts)
    mx.random.seed(3)
    mod.fit(mx.io.NDArrayIter(x, y, batch_size=16), num_epoch=2, kvstore=kvstore,
            optimizer_params={"learning_rate": 0.5}, initializer=mx.init.Uniform(0.1))
    return {k: v.asnumpy() for k, v in mod.get_params()[0].items()}


def test_module_fit_with_the_device_store_on_cpus_trains_as_local():
    devs = [mx.cpu(0), mx.cpu(1)]
    local, device = _train("local", devs), _train("device", devs)
    assert local.keys() == device.keys()
    for k in local:
        np.testing.assert_allclose(device[k], local[k], rtol=1e-6, atol=1e-7)


class _DictBackend(sdk.KVStoreBase):
    """A store written against opsdk alone: values live in numpy, moved by engine_call."""

    def __init__(self, name="dictkv"):
        self._type, self._vals = name, {}

    type = property(lambda self: self._type)
    rank = property(lambda self: 0)
    num_workers = property(lambda self: 1)

    def is_capable(self, capability):
        return False

    def _pairs(self, key, value, known=True):
        pairs = list(zip(key, value)) if isinstance(key, (list, tuple)) else [(key, value)]
        for k, _ in pairs:
            if known and k not in self._vals:
                raise MXNetError(f"dictkv: key {k!r} is not initialized")
        return pairs

    def init(self, key, value):
        for k, v in self._pairs(key, value, known=False):
            self._vals[k] = v.asnumpy().copy()

    def push(self, key, value, priority=0):
        for k, vals in self._pairs(key, value):
            vals = vals if isinstance(vals, (list, tuple)) else [vals]
            if any(v.shape != self._vals[k].shape for v in vals):
                raise MXNetError(f"dictkv: key {k!r}: a value of another shape")
            sdk.engine_call(lambda *d, k=k: self._vals[k].__setitem__(Ellipsis, sum(d)), vals,
                            (), name=f"dictkv.push({k!r})", priority=priority)

    def pull(self, key, out=None, priority=0, ignore_sparse=True):
        for k, outs in self._pairs(key, out):
            outs = outs if isinstance(outs, (list, tuple)) else [outs]
            sdk.engine_call(lambda *d, k=k: [o.__setitem__(Ellipsis, self._vals[k]) for o in d],
                            (), outs, name=f"dictkv.pull({k!r})", priority=priority)


def test_the_kit_runs_on_a_backend_written_against_opsdk_and_names_what_is_wrong():
    mx.kvstore.register("dictkv", _DictBackend)
    try:
        failed = run_kvstore_checks("dictkv")
    finally:
        mx.kvstore.unregister("dictkv")
    for ok in ("describes_itself", "init_takes_rank0_value", "push_sums_devices_and_workers",
               "pushpull", "broadcast"):
        assert ok not in failed, failed[ok]
    # its push of a list stores the last value of a key listed twice: the kit sees it
    assert "key 5 (pushed twice in one call): output 0 holds [3.0" in failed["lists_of_keys"]
    assert "NotImplementedError: KVStore type 'dictkv' (_DictBackend) does not implement " \
           "_set_updater()" in failed["updater_order"]
    assert set(failed) < set(KVSTORE_CHECKS)
    engine.get().wait_for_all()                  # and no engine function failed
