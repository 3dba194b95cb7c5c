import threading

import numpy as np

import mxnext as mx
from mxnext import device
from opsdk.testing import device_consistency_tests, device_conformance_tests

test_testdev = device_conformance_tests("testdev")
test_testdev_layers = device_consistency_tests("testdev")     # check_consistency vs cpu
test_cpu = device_conformance_tests("cpu")

TD0, TD1 = mx.Context("testdev", 0), mx.Context("testdev", 1)


def test_copies_cross_the_host_through_the_device():
    dev = device.get("testdev")
    up, down = dev.from_host_calls, dev.to_host_calls
    a = mx.nd.array(np.arange(6.0), ctx=mx.cpu())
    b = a.copyto(TD1)
    c = b.copyto(mx.cpu())
    np.testing.assert_array_equal(c.asnumpy(), np.arange(6.0))
    assert dev.from_host_calls > up and dev.to_host_calls > down


def test_device_functions_run_through_the_stream_runner():
    from mxnext_device_testdev.device import _stream
    a = mx.nd.ones((4,), ctx=TD0)
    streams = []
    mx.engine.get().push_sync(lambda rctx: streams.append(rctx.stream), TD0,
                              mutate_vars=(a._chunk.var,))
    a.wait_to_read()
    (s,) = streams
    assert s.device_id == 0 and s.runs >= 1 and s is not _stream(1)


def _on_thread(fn):
    """Run ``fn`` on a new thread (its own lane) and return what it returned."""
    out = []
    t = threading.Thread(target=lambda: out.append(fn()))
    t.start()
    t.join()
    return out[0]


def test_work_enqueues_on_the_pushing_threads_lane_and_host_waits_use_events():
    from mxnext_device_testdev.device import _lane
    lane = _lane(0)
    seq, host = lane.seq, len(lane.host_waits)
    a = mx.nd.ones((4,), ctx=TD0)
    b = a * 3
    assert lane.seq >= seq + 1, "the op did not run on the pushing thread's lane"
    assert b._chunk.var.dev.w[0] is lane
    np.testing.assert_array_equal(b.asnumpy(), 3)
    assert len(lane.host_waits) == host + 1, "reading the result waited on no event"
    b.wait_to_read()                           # known done: no second event wait
    assert len(lane.host_waits) == host + 1


def test_a_reader_on_another_lane_waits_for_the_writers_mark_on_the_device():
    from mxnext_device_testdev.device import _lane
    a = _on_thread(lambda: mx.nd.ones((8,), ctx=TD0) * 2)      # written on that thread's lane
    writer = a._chunk.var.dev.w
    assert writer[0] is not _lane(0)
    waits = len(_lane(0).device_waits)
    c = a + 1                                                  # read here
    new = _lane(0).device_waits[waits:]
    assert {e.lane for e in new} == {writer[0]} and max(e.seq for e in new) >= writer[1]
    np.testing.assert_array_equal(c.asnumpy(), 3)
    # and a writer waits for the other lane's readers (write after read)
    r = _on_thread(lambda: (a * 1, a._chunk.var.dev.uses)[1])
    waits = len(_lane(0).device_waits)
    a[:] = 5
    lanes = {e.lane for e in _lane(0).device_waits[waits:]}
    assert {m[0] for m in r if m[0] is not _lane(0)} <= lanes, "the writer did not wait for readers"


def test_a_freed_block_keeps_its_marks_for_the_next_array_on_it():
    from mxnext_device_testdev.device import _lane
    n = 4099                                                   # a size class of its own

    def make():
        x = mx.nd.zeros((n,), ctx=TD0)
        x += 1
        mark = x._chunk.var.dev.w
        del x                                                  # the block goes back fenced
        return mark
    mark = _on_thread(make)
    y = mx.nd.empty((n,), ctx=TD0)
    assert y._chunk.var.dev is not None and mark in y._chunk.var.dev.uses
    waits = len(_lane(0).device_waits)
    y[:] = 2                                                   # the first writer waits
    assert any(e.lane is mark[0] for e in _lane(0).device_waits[waits:])
    np.testing.assert_array_equal(y.asnumpy(), 2)


def test_large_copies_run_on_the_copy_lane_and_compute_waits_for_them():
    """Copies into and out of the device over 64 KB go to the engine's copy workers (their
    own lanes, overlapping the pushing thread's); what reads the copy waits for its mark."""
    from mxnext_device_testdev.device import _lane
    host = mx.nd.array(np.arange(40000, dtype=np.float32))
    dev = mx.nd.zeros((40000,), ctx=TD0)
    host.copyto(dev)
    y = dev * 2                                            # compute: waits on the device
    y.wait_to_read()
    copier, computer = dev._chunk.var.dev.w[0], y._chunk.var.dev.w[0]
    assert "copy" in copier.stream.thread, f"the large copy ran on {copier.stream.thread}"
    if computer is not copier:      # (the copy worker may run the ready multiply itself)
        assert any(e.lane is copier for e in computer.device_waits)
    back = y.copyto(mx.cpu())                              # and out again, on the copy lane
    np.testing.assert_array_equal(back.asnumpy(), np.arange(40000) * 2)
    small = mx.nd.zeros((4,), ctx=TD0)
    mx.nd.array(np.ones(4, np.float32)).copyto(small)      # a small one: inline
    assert small._chunk.var.dev.w[0] is _lane(0)


def test_waitall_waits_on_every_lane():
    from mxnext_device_testdev.device import _lane
    lane = _on_thread(lambda: (mx.nd.ones((3,), ctx=TD0) + 1, _lane(0))[1])
    before = len(lane.host_waits)
    mx.nd.waitall()
    assert lane.done == lane.seq and len(lane.host_waits) == before + 1


def test_generic_body_that_leaves_the_device_names_op_and_device():
    from mxnext.base import MXNetError
    from mxnext.opctx import kernel_of
    from mxnext.ops import op

    fake = op("_testdev_probe")

    def body(ctx, inputs, req, outputs, params):
        raise TypeError("Implicit conversion to a NumPy array is not allowed")
    fake.set_attr("FCompute<cpu>", body)
    fcompute, _, _ = kernel_of(fake, ("testdev", "cpu"), " (on testdev(0))")
    try:
        fcompute(None, [], [], [], None)
    except MXNetError as e:
        assert "'_testdev_probe'" in str(e) and "FCompute<testdev>" in str(e), str(e)
    else:
        raise AssertionError("no error")


def test_host_round_trip_only_when_opted_in(monkeypatch):
    """An op whose cpu body needs host arrays fails on the device naming op and device; with
    MXNEXT_DEVICE_HOST_FALLBACK=1 it runs on the host (once warned) and gives the cpu's
    result, written into the device array."""
    import pytest
    from mxnext.base import MXNetError
    from mxnext.ndarray._imperative import invoke_name
    from opsdk import ElemwiseShape, register_op

    def body(ctx, inputs, req, outputs, params):
        res = inputs[0] * 2 + np.ones(inputs[0].shape, np.float32)     # a host array
        if req[0] == 3:
            outputs[0][...] += res
        else:
            outputs[0][...] = res
    name = "_testdev_host_only"
    (register_op(name).set_num_inputs(1).set_num_outputs(1)
     .set_attr("FInferShape", ElemwiseShape(1, 1)).set_attr("FCompute<cpu>", body))
    x = mx.nd.array(np.arange(4.0, dtype=np.float32), ctx=TD0)
    monkeypatch.delenv("MXNEXT_DEVICE_HOST_FALLBACK", raising=False)
    with pytest.raises(MXNetError, match=rf"'{name}'.*FCompute<testdev>.*MXNEXT_DEVICE_HOST"):
        invoke_name(name, [x], {}).wait_to_read()
    monkeypatch.setenv("MXNEXT_DEVICE_HOST_FALLBACK", "1")
    with pytest.warns(RuntimeWarning, match=f"{name}.*runs on the host"):
        y = invoke_name(name, [x], {})
        y.wait_to_read()
    assert y.context == TD0
    np.testing.assert_array_equal(y.asnumpy(), np.arange(4.0) * 2 + 1)


def test_kvstore_device_reduces_across_devices():
    kv = mx.kv.create("device")
    kv.init(3, mx.nd.zeros((2, 2), ctx=TD0))
    kv.push(3, [mx.nd.ones((2, 2), ctx=TD0), mx.nd.ones((2, 2), ctx=TD1) * 2])
    out = mx.nd.zeros((2, 2), ctx=TD1)
    kv.pull(3, out=out)
    np.testing.assert_array_equal(out.asnumpy(), np.full((2, 2), 3.0))


def test_device_kvstore_sums_each_key_on_a_device_of_its_values():
    kv = mx.kv.create("device")
    seen = {}

    def updater(key, recv, local):
        seen[key] = (recv.context, local.context)
        local += recv

    kv._set_updater(updater)
    kv.init(["a", "b"], [mx.nd.zeros((2, 2)), mx.nd.ones((2, 2))])
    kv.push(["a", "b"], [[mx.nd.ones((2, 2), ctx=TD0), mx.nd.ones((2, 2), ctx=TD1) * 2]] * 2)
    outs = [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2), ctx=TD1)]
    kv.pull(["a", "b"], out=outs)
    np.testing.assert_array_equal(outs[0].asnumpy(), np.full((2, 2), 3.0))
    np.testing.assert_array_equal(outs[1].asnumpy(), np.full((2, 2), 4.0))
    assert {seen["a"][0], seen["b"][0]} == {TD0, TD1}          # one key on each device
    assert all(recv == local for recv, local in seen.values())


def test_module_trains_on_testdev_like_on_cpu():
    def fit(ctx):
        mx.random.seed(3)
        rng = np.random.default_rng(0)
        x = rng.standard_normal((64, 10)).astype(np.float32)
        y = (x[:, 0] > 0).astype(np.float32)
        data = mx.sym.Variable("data")
        net = mx.sym.FullyConnected(data, num_hidden=2, name="fc")
        net = mx.sym.SoftmaxOutput(net, name="softmax")
        mod = mx.mod.Module(net, context=ctx)
        it = mx.io.NDArrayIter(x, y, batch_size=16)
        mod.fit(it, num_epoch=3, optimizer="sgd", optimizer_params={"learning_rate": 0.5},
                initializer=mx.init.Xavier())
        return mod.get_params()[0]["fc_weight"].asnumpy()
    np.testing.assert_allclose(fit(TD0), fit(mx.cpu()), rtol=1e-5, atol=1e-6)
