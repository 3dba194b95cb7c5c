"""gluon.Parameter, Constant and ParameterDict: initialisation (deferred too), values and
gradients per context, save/load by name."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon.parameter import DeferredInitializationError


def test_parameter_values_and_gradients_on_several_contexts():
    p = gluon.Parameter("weight", shape=(10, 10), lr_mult=2.0, wd_mult=0.5)
    p.initialize(init="xavier", ctx=[mx.cpu(0), mx.cpu(1)])
    assert len(p.list_data()) == 2 and len(p.list_grad()) == 2
    assert p.data(mx.cpu(1)).context == mx.cpu(1)
    assert p.list_ctx() == [mx.cpu(0), mx.cpu(1)]
    np.testing.assert_array_equal(p.data(mx.cpu(0)).asnumpy(), p.data(mx.cpu(1)).asnumpy())
    with pytest.raises(RuntimeError, match="was not initialized on context cpu\\(2\\)"):
        p.data(mx.cpu(2))
    p.reset_ctx(ctx=[mx.cpu(1), mx.cpu(2)])
    assert p.list_ctx() == [mx.cpu(1), mx.cpu(2)]
    assert (p.var().attr("__lr_mult__"), p.var().attr("__wd_mult__")) == ("2.0", "0.5")


def test_gradient_lands_in_the_parameter_and_zero_grad_clears_it():
    p = gluon.Parameter("w", shape=(3,))
    p.initialize(init=mx.init.One())
    with autograd.record():
        y = (p.data() * 2).sum()
    y.backward()
    np.testing.assert_array_equal(p.grad().asnumpy(), [2, 2, 2])
    p.zero_grad()
    np.testing.assert_array_equal(p.grad().asnumpy(), [0, 0, 0])


def test_grad_req_null_drops_the_gradient_and_set_data_writes_every_copy():
    p = gluon.Parameter("w", shape=(2,))
    p.initialize(ctx=[mx.cpu(0), mx.cpu(1)])
    p.grad_req = "null"
    with pytest.raises(RuntimeError, match="grad_req='null'"):
        p.grad()
    p.set_data(mx.nd.array([3, 4]))
    for d in p.list_data():
        np.testing.assert_array_equal(d.asnumpy(), [3, 4])
    with pytest.raises(ValueError, match="grad_req must be one of"):
        p.grad_req = "sum"


def test_deferred_initialisation_waits_for_the_shape():
    p = gluon.Parameter("w", shape=(4, 0), allow_deferred_init=True, init=mx.init.One())
    p.initialize()
    with pytest.raises(DeferredInitializationError, match="'w' has not been initialized yet"):
        p.data()
    p.shape = (4, 5)
    p._finish_deferred_init()
    assert p.data().shape == (4, 5) and p.data().asnumpy().sum() == 20
    with pytest.raises(AssertionError, match="incompatible"):
        p.shape = (4, 6)
    with pytest.raises(ValueError, match="invalid shape"):
        gluon.Parameter("v", shape=(0,)).initialize()


def test_cast_converts_value_and_gradient():
    p = gluon.Parameter("w", shape=(2,))
    p.initialize()
    p.cast("float16")
    assert p.data().dtype == np.float16 and p.grad().dtype == np.float16


def test_constant_keeps_its_value_and_takes_no_gradient():
    c = gluon.Constant("c", [[1, 2], [3, 4]])
    c.initialize()
    np.testing.assert_array_equal(c.data().asnumpy(), [[1, 2], [3, 4]])
    assert c.grad_req == "null"
    with pytest.warns(UserWarning, match="does not support grad_req"):
        c.grad_req = "write"
    d = gluon.ParameterDict("net_")
    assert d.get_constant("c", [1, 2]) is d.get_constant("c")
    with pytest.raises(KeyError, match="No constant named 'net_x'"):
        d.get_constant("x")


def test_parameter_dict_get_shares_and_checks_attributes():
    shared = gluon.ParameterDict("net_")
    w = shared.get("weight", shape=(3, 0))
    assert shared.get("weight", shape=(0, 4)) is w and w.shape == (3, 4)
    child = gluon.ParameterDict("net_", shared)
    assert child.get("weight") is w
    with pytest.raises(AssertionError, match="desired attribute does not match"):
        shared.get("weight", lr_mult=3.0)
    other = gluon.ParameterDict("net_")
    other.get("weight")
    with pytest.raises(AssertionError, match="different Parameters with the same name"):
        shared.update(other)


def test_parameter_dict_setattr_zero_grad_select_and_save_load(tmp_path):
    d = gluon.ParameterDict("net_")
    d.get("weight", shape=(2, 2))
    d.get("bias", shape=(2,))
    d.initialize(mx.init.One())
    d.setattr("lr_mult", 0.1)
    assert all(p.lr_mult == 0.1 for p in d.values())
    assert list(d.select(".*bias").keys()) == ["net_bias"]
    f = str(tmp_path / "d.params")
    d.save(f, strip_prefix="net_")
    assert sorted(mx.nd.load(f)) == ["bias", "weight"]
    e = gluon.ParameterDict("net_")
    e.get("weight", shape=(2, 2))
    with pytest.raises(AssertionError, match="'bias' loaded from file: .* is not present"):
        e.load(f, restore_prefix="net_")
    e.load(f, restore_prefix="net_", ignore_extra=True)
    np.testing.assert_array_equal(e["net_weight"].data().asnumpy(), np.ones((2, 2)))
    e.get("gamma", shape=(2,))
    with pytest.raises(AssertionError, match="Parameter 'gamma' is missing"):
        e.load(f, restore_prefix="net_", ignore_extra=True)
    with pytest.raises(ValueError, match="Prefix 'x_' is to be striped"):
        d.save(f, strip_prefix="x_")


def test_a_subclass_copies_the_trainer_attribute_as_in_mxnet():
    """GluonNLP's WeightDropParameter assigns ``_trainer`` from the parameter it wraps; the
    Parameter holds its Trainer weakly either way."""
    class Wrapped(gluon.Parameter):
        def __init__(self, p):
            super().__init__(p.name, shape=p.shape)
            self._trainer = p._trainer

    p = gluon.Parameter("w", shape=(2,))
    p.initialize()
    trainer = gluon.Trainer([p], "sgd")
    p._set_trainer(trainer)
    assert Wrapped(p)._trainer is trainer
    del trainer
    assert p._trainer is None
