"""gluon.Block and HybridBlock run imperatively: MXNet 1.9's names and prefixes, child
registration, parameter collection, hooks, and save/load of parameters."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon import nn


def _mlp():
    net = nn.HybridSequential()
    with net.name_scope():
        net.add(nn.Dense(4, in_units=3), nn.Dense(2))
    return net


def test_names_and_prefixes_follow_mxnet():
    with mx.name.NameManager():
        d = nn.Dense(3)
        net = _mlp()
        again = _mlp()
    assert d.prefix == "dense0_" and d.name == "dense0" and d.weight.name == "dense0_weight"
    assert net.prefix == "hybridsequential0_"
    assert list(net.collect_params()) == [
        "hybridsequential0_dense0_weight", "hybridsequential0_dense0_bias",
        "hybridsequential0_dense1_weight", "hybridsequential0_dense1_bias"]
    assert again[1].weight.name == "hybridsequential1_dense1_weight"
    assert list(net.collect_params(".*bias")) == ["hybridsequential0_dense0_bias",
                                                  "hybridsequential0_dense1_bias"]
    assert nn.Dense(2, prefix="fc_").bias.name == "fc_bias"


def test_shared_params_and_attribute_registration():
    class Net(gluon.Block):
        def __init__(self, **kwargs):
            super().__init__(**kwargs)
            with self.name_scope():
                self.a = nn.Dense(2, in_units=2)
                self.b = nn.Dense(2, in_units=2, params=self.a.params)
                self.scale = self.params.get("scale", shape=(1,))

        def forward(self, x):
            return self.b(self.a(x)) * self.scale.data()

    net = Net(prefix="net_")
    assert list(net._children) == ["a", "b"] and net.b.weight is net.a.weight
    assert sorted(net._collect_params_with_prefix()) == [
        "a.bias", "a.weight", "b.bias", "b.weight", "scale"]
    with pytest.raises(TypeError, match="Changing attribute type for a"):
        net.a = 3
    net.initialize()
    assert net(mx.nd.ones((1, 2))).shape == (1, 2)


def test_hybrid_block_cannot_hold_a_plain_block():
    net = nn.HybridSequential()
    with pytest.raises(ValueError, match="Children of HybridBlock must also be HybridBlock"):
        net.add(nn.Sequential())


def test_deferred_shapes_come_from_the_first_forward_and_gradients_flow():
    net = _mlp()
    net.initialize(mx.init.One())
    assert net[1].weight.shape == (2, 0)
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    with autograd.record():
        y = net(x)
    y.backward()
    assert net[1].weight.shape == (2, 4)
    h = x.asnumpy().sum(1, keepdims=True)     # every hidden unit: ones weights, zero bias
    np.testing.assert_allclose(y.asnumpy(), np.repeat(4 * h, 2, axis=1))
    np.testing.assert_allclose(net[1].weight.grad().asnumpy(),
                               np.full((2, 4), h.sum()))


def test_hooks_apply_and_cast():
    net = _mlp()
    net.initialize()
    seen = []
    pre = net.register_forward_pre_hook(lambda b, i: seen.append(("pre", i[0].shape)))
    with net[0].register_forward_hook(lambda b, i, o: seen.append(("post", o.shape))):
        net(mx.nd.ones((5, 3)))
    pre.detach()
    net(mx.nd.ones((5, 3)))
    assert seen == [("pre", (5, 3)), ("post", (5, 4))]
    names = []
    net.apply(lambda b: names.append(b.name))
    assert names[-1] == net.name and len(names) == 3
    net.cast("float64")
    assert net(mx.nd.ones((1, 3), dtype="float64")).dtype == np.float64


def test_save_and_load_parameters_by_structure(tmp_path):
    net = _mlp()
    net.initialize()
    net(mx.nd.ones((1, 3)))
    f = str(tmp_path / "net.params")
    net.save_parameters(f)
    assert list(mx.nd.load(f)) == ["0.weight", "0.bias", "1.weight", "1.bias"]
    other = _mlp()                       # another prefix: the names are structural
    other.load_parameters(f)
    for a, b in zip(net.collect_params().values(), other.collect_params().values()):
        np.testing.assert_array_equal(a.data().asnumpy(), b.data().asnumpy())
    small = nn.HybridSequential()
    small.add(nn.Dense(4, in_units=3))
    with pytest.raises(ValueError, match="Parameter '1.weight' loaded from file .* is not "
                                         "present"):
        small.load_parameters(f)
    small.load_parameters(f, ignore_extra=True)
    big = _mlp()
    big.add(nn.Dense(1))
    with pytest.raises(AssertionError, match="Parameter '2.weight' is missing in file"):
        big.load_parameters(f)
    big.load_parameters(f, allow_missing=True)
    with pytest.raises(AssertionError, match="dtype incompatible"):
        big.cast("float16")
        big.load_parameters(f, allow_missing=True)
    big.load_parameters(f, allow_missing=True, cast_dtype=True)
    assert big[0].weight.data().dtype == np.float16


def test_legacy_save_params_uses_prefixed_names(tmp_path):
    net = _mlp()
    net.initialize()
    net(mx.nd.ones((1, 3)))
    f = str(tmp_path / "legacy.params")
    with pytest.warns(UserWarning, match="save_params is deprecated"):
        net.save_params(f)
    assert sorted(mx.nd.load(f)) == ["dense0_bias", "dense0_weight", "dense1_bias",
                                     "dense1_weight"]
    other = _mlp()
    other.load_parameters(f)
    np.testing.assert_array_equal(other[1].bias.data().asnumpy(),
                                  net[1].bias.data().asnumpy())


def test_sequential_of_blocks_and_slicing():
    net = nn.Sequential()
    with net.name_scope():
        net.add(nn.Dense(3, in_units=2), nn.Dense(1, in_units=3))
    net.initialize(mx.init.One())
    assert net(mx.nd.ones((1, 2))).asnumpy().tolist() == [[6.0]]
    assert len(net) == 2 and isinstance(net[:1], nn.Sequential) and len(net[:1]) == 1
    assert repr(net) == ("Sequential(\n  (0): Dense(2 -> 3, linear)\n"
                         "  (1): Dense(3 -> 1, linear)\n)")


def test_save_and_load_structure_restore_names_and_graphs(tmp_path):
    def make():
        outer = gluon.Block()
        inner = nn.HybridSequential()
        inner.add(nn.Dense(3))
        outer.register_child(inner, "body")
        outer.register_child(nn.Dense(2), "head")
        outer.forward = lambda x: outer._children["head"](outer._children["body"](x))
        return outer

    net = make()
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((1, 4))
    y = net(x).asnumpy()
    net.save(str(tmp_path / "m"))
    assert sorted(mx.nd.load(str(tmp_path / "m-model.params"))) == [
        "body.0.bias", "body.0.weight", "head.bias", "head.weight"]
    other = make()
    other.load(str(tmp_path / "m"))
    assert other._children["body"].name == net._children["body"].name
    assert other._children["body"]._active and other._children["body"]._cached_graph
    np.testing.assert_allclose(other(x).asnumpy(), y, rtol=1e-6)
