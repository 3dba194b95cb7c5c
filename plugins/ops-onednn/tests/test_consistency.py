"""``mx.test_utils.check_consistency`` between the two providers on LeNet- and ResNet-style
networks and one of every other op the plugin covers: in float64 ops-nn's kernels run (oneDNN
covers float32 only), in float32 ops-onednn's, and outputs and gradients agree."""

from __future__ import annotations

import mxnext as mx
import numpy as np
import pytest

from mxnext_ops_onednn._dispatch import calls


def lenet():
    data = mx.sym.Variable("data")
    x = mx.sym.Convolution(data, kernel=(5, 5), num_filter=6, name="conv1")
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), kernel=(2, 2), stride=(2, 2),
                       pool_type="max")
    x = mx.sym.Convolution(x, kernel=(5, 5), num_filter=16, name="conv2")
    x = mx.sym.Pooling(mx.sym.Activation(x, act_type="tanh"), kernel=(2, 2), stride=(2, 2),
                       pool_type="avg")
    x = mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=10, name="fc")
    return x, (4, 1, 28, 28)


def resnet_block():
    data = mx.sym.Variable("data")
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True,
                           name="stem")
    x = mx.sym.Pooling(x, kernel=(3, 3), stride=(2, 2), pad=(1, 1), pool_type="max")
    y = mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True, name="c1")
    y = mx.sym.Activation(mx.sym.BatchNorm(y, fix_gamma=False, name="bn1"), act_type="relu")
    y = mx.sym.Convolution(y, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=16,
                           no_bias=True, name="c2")
    short = mx.sym.Convolution(x, kernel=(1, 1), stride=(2, 2), num_filter=16, no_bias=True,
                               name="down")
    x = mx.sym.Activation(y + short, act_type="relu")
    x = mx.sym.Pooling(x, global_pool=True, pool_type="avg", kernel=(1, 1))
    return mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=5, name="fc"), (2, 3, 16, 16)


@pytest.mark.parametrize("net, ops", [
    (lenet, ("Convolution", "_backward_Convolution")),           # its small pools: ops-nn
    (resnet_block, ("Convolution", "_backward_Convolution", "Pooling", "_backward_Pooling"))])
def test_the_providers_agree(net, ops):
    sym, shape = net()
    before = dict(calls)
    settings = [{"ctx": mx.cpu(), "data": shape, "type_dict": {"data": t}}
                for t in (np.float64, np.float32)]
    mx.test_utils.check_consistency(sym, settings)
    ran = {k: v - before.get(k, 0) for k, v in calls.items()}
    for op in ops:
        assert ran.get((op, "onednn"), 0) > 0 and ran.get((op, "fallback"), 0) > 0, (op, ran)


def every_other_op():
    data = mx.sym.Variable("data")
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=8, name="conv")
    x = mx.sym.Activation(mx.sym.BatchNorm(x, fix_gamma=False, name="bn1"), act_type="relu")
    x = mx.sym.LRN(x, nsize=3, alpha=0.5, name="lrn")
    x = mx.sym.Deconvolution(x, kernel=(4, 4), stride=(2, 2), pad=(1, 1), num_filter=4,
                             no_bias=False, name="deconv")
    for act in ("sigmoid", "tanh", "softrelu", "softsign"):
        x = mx.sym.Activation(x, act_type=act)
    x = mx.sym.BatchNorm(x, name="bn2")
    return mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=3, name="fc"), (2, 4, 6, 6)


@pytest.mark.usefixtures("no_rules")
def test_the_providers_agree_on_every_other_op():
    sym, shape = every_other_op()
    before = dict(calls)
    settings = [{"ctx": mx.cpu(), "data": shape, "type_dict": {"data": t}}
                for t in (np.float64, np.float32)]
    mx.test_utils.check_consistency(sym, settings)
    ran = {k: v - before.get(k, 0) for k, v in calls.items()}
    for op in ("BatchNorm", "Activation", "LRN", "Deconvolution"):
        for kind in (op, f"_backward_{op}"):
            assert ran.get((kind, "onednn"), 0) > 0, (kind, ran)
