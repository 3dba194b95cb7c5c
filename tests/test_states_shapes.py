"""Optimizer states are checked against the parameters at load: states saved for other
shapes raise an error naming the file, the parameter and both shapes, and are not loaded."""

from __future__ import annotations

import re

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import nn
from mxnext.optimizer._states_file import StatesFormatError


def _module(hidden, kvstore):
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=hidden,
                                                     name="fc"), name="softmax")
    mod = mx.mod.Module(net, context=mx.cpu())
    kvstore = kvstore and mx.kv.create("local")         # a store object: updates run there
    mod.bind([("data", (2, 3))], [("softmax_label", (2,))])
    mod.init_params()
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params={"momentum": 0.9})
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    mod.update()
    return mod


@pytest.mark.parametrize("kvstore", [None, "kvstore"])
def test_module_states_of_other_shapes_are_refused_naming_file_parameter_and_shapes(
        tmp_path, kvstore):
    fname = str(tmp_path / "small-0001.states")
    _module(4, kvstore).save_optimizer_states(fname)
    mod = _module(5, kvstore)
    with pytest.raises(StatesFormatError) as info:
        mod.load_optimizer_states(fname)
    message = str(info.value)
    assert message.startswith(f"Module.load_optimizer_states: {fname!r}: ")
    assert re.search(r"parameter 'fc_(weight|bias)' holds \((4, 3|4,)\) float32, but SGD "
                     r"needs \((5, 3|5,)\) float32", message), message
    mod.forward_backward(mx.io.DataBatch([mx.nd.ones((2, 3))], [mx.nd.zeros((2,))]))
    mod.update()                        # its own states are still there, and fit
    assert mod.get_params()[0]["fc_weight"].shape == (5, 3)


def _trainer(units, kvstore):
    net = nn.Dense(units, in_units=3, prefix="dense_")
    net.initialize()
    kvstore = kvstore and mx.kv.create("local")
    trainer = mx.gluon.Trainer(net.collect_params(), "sgd", {"momentum": 0.9},
                               kvstore=kvstore, update_on_kvstore=True if kvstore else None)
    with mx.autograd.record():
        loss = net(mx.nd.ones((2, 3))).sum()
    loss.backward()
    trainer.step(2)
    return trainer, net


@pytest.mark.parametrize("kvstore", [None, "kvstore"])
def test_trainer_states_of_other_shapes_are_refused(tmp_path, kvstore):
    fname = str(tmp_path / "trainer.states")
    _trainer(4, kvstore)[0].save_states(fname)
    trainer, net = _trainer(6, kvstore)
    with pytest.raises(StatesFormatError) as info:
        trainer.load_states(fname)
    message = str(info.value)
    assert message.startswith(f"Trainer.load_states: {fname!r}: ")
    assert re.search(r"parameter 'dense_(weight|bias)' holds \((4, 3|4,)\) float32, but SGD "
                     r"needs \((6, 3|6,)\) float32", message), message
    fitting = str(tmp_path / "fitting.states")
    trainer.save_states(fitting)
    trainer.load_states(fitting)


def test_states_of_another_dtype_are_refused(tmp_path):
    fname = str(tmp_path / "f32.states")
    mod = _module(4, None)
    mod.save_optimizer_states(fname)
    for state in mod._updater.states.values():
        assert state.dtype == np.float32
    updater = mod._updater
    updater.states = {k: v.astype("float64") for k, v in updater.states.items()}
    mod.save_optimizer_states(str(tmp_path / "f64.states"))
    with pytest.raises(StatesFormatError, match=r"holds \(4.*\) float64, but SGD needs "
                                                r"\(4.*\) float32"):
        mod.load_optimizer_states(str(tmp_path / "f64.states"))
    mod.load_optimizer_states(fname)
