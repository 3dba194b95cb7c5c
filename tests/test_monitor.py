"""mx.mon.Monitor on a Module: every node's outputs, forward and backward, and the arguments,
under MXNet's names, with the statistics MXNet 1.9.1 printed for this network."""

from functools import reduce

import numpy as np
import pytest

import mxnext as mx

# MXNet 1.9.1's toc() for this batch (mean absolute value), gradients nothing keeps aside
MXNET = {"act_0_backward_output": 0.009362806, "act_0_output": 0.59507716,
         "act_1_backward_output": 0.088298395, "act_1_output": 0.7621468, "data": 0.075,
         "fc_0_backward_output1": 0.00070221035, "fc_0_backward_output2": 0.009362806,
         "fc_0_bias": 0.35, "fc_0_output": 0.385, "fc_0_weight": 0.22500001,
         "fc_1_backward_output0": 0.038860314, "fc_1_backward_output1": 0.05254436,
         "fc_1_backward_output2": 0.088298395, "fc_1_bias": 0.6, "fc_1_output": 1.1654137,
         "fc_1_weight": 0.475, "softmax_backward_output0": 0.4792183, "softmax_label": 0.5,
         "softmax_output": 0.7621468}


def _module(mon):
    x = mx.sym.Variable("data")
    for k in range(2):
        x = mx.sym.FullyConnected(x, name=f"fc_{k}", num_hidden=2)
        x = mx.sym.Activation(x, name=f"act_{k}", act_type="sigmoid")
    x = mx.sym.LinearRegressionOutput(x, name="softmax", grad_scale=2)
    it = mx.io.NDArrayIter(mx.nd.array([[0.05, .10]]), mx.nd.array([[.01, 0.99]]), batch_size=1)
    mod = mx.mod.Module(x, context=[mx.cpu()])
    mod.bind(it.provide_data, label_shapes=it.provide_label, for_training=True)
    mod.install_monitor(mon)
    mod.init_params(arg_params={
        "fc_0_weight": mx.nd.array([[.15, .20], [.25, .30]]), "fc_0_bias": mx.nd.array([.35, .35]),
        "fc_1_weight": mx.nd.array([[.40, .45], [.50, .55]]), "fc_1_bias": mx.nd.array([.60, .60])})
    return mod, next(iter(it))


def _mean_abs(x):
    return mx.nd.sum(mx.nd.abs(x)) / reduce(lambda a, b: a * b, x.shape)


def test_monitor_sees_forward_backward_and_arguments_as_mxnet():
    mon = mx.mon.Monitor(1, stat_func=_mean_abs, pattern=".*", sort=True)
    mod, batch = _module(mon)
    mon.tic()
    mod.forward_backward(batch)
    res = mon.toc()
    assert len(res) == 21 and [r[1] for r in res] == sorted(r[1] for r in res)
    got = {name: text for _, name, text in res}
    assert set(got) == set(MXNET) | {"fc_0_backward_output0", "softmax_backward_output1"}
    for name, want in MXNET.items():
        assert got[name].endswith("\t")
        assert float(got[name]) == pytest.approx(want, rel=1e-5), name
    assert float(got["softmax_backward_output1"]) == 0.0


def test_monitor_interval_pattern_and_default_statistic():
    mon = mx.monitor.Monitor(2, pattern="fc_1_(weight|output)")
    mod, batch = _module(mon)
    steps = []
    for _ in range(3):
        mon.tic()
        mod.forward_backward(batch)
        steps.append(mon.toc())
    assert [len(s) for s in steps] == [2, 0, 2]
    names = [name for _, name, _ in steps[0]]
    assert names == ["fc_1_output", "fc_1_weight"]          # computed, then the arguments
    w = np.array([[.40, .45], [.50, .55]])
    assert float(steps[0][1][2]) == pytest.approx(np.linalg.norm(w) / 2, rel=1e-6)


def test_a_reshaped_executor_keeps_its_monitor_callback():
    data = mx.sym.var("data")
    sym = mx.sym.Convolution(data, kernel=(1, 1), num_filter=1, name="conv")
    ex = sym.simple_bind(mx.cpu(), data=(1, 3, 10, 10), grad_req="null")
    seen = []
    ex.set_monitor_callback(lambda name, arr: seen.append((name, arr.shape)), monitor_all=True)
    ex.reshape(allow_up_sizing=True, data=(1, 3, 10, 14)).forward()
    mx.nd.waitall()
    assert ("conv_output", (1, 1, 10, 14)) in seen and ("data", (1, 3, 10, 14)) in seen
