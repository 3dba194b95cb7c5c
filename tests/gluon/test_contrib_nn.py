"""gluon.contrib.nn: Concurrent and HybridConcurrent concatenate their children's outputs;
SparseEmbedding looks up and updates rows of a row_sparse weight."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import nn
from mxnext.gluon.contrib.nn import Concurrent, HybridConcurrent, Identity, SparseEmbedding


@pytest.mark.parametrize('cls, hybridize', [(Concurrent, False), (HybridConcurrent, False),
                                            (HybridConcurrent, True)])
def test_outputs_concatenated_along_axis(cls, hybridize):
    net = cls(axis=1)
    with net.name_scope():
        net.add(nn.Dense(2, in_units=3), Identity(), nn.Dense(1, in_units=3))
    net.initialize(mx.init.Uniform())
    if hybridize:
        net.hybridize()
    x = mx.nd.array(np.arange(6).reshape(2, 3))
    d0, d1 = net[0], net[2]
    want = np.concatenate([d0(x).asnumpy(), x.asnumpy(), d1(x).asnumpy()], axis=1)
    np.testing.assert_allclose(net(x).asnumpy(), want, rtol=1e-6)
    assert [k[len(net.prefix):] for k in net.collect_params()] == \
        ['dense0_weight', 'dense0_bias', 'dense1_weight', 'dense1_bias']


@pytest.mark.parametrize('train', [False, True])
def test_sync_batch_norm_on_one_device_is_batch_norm_over_axis_1(train):
    from mxnext.gluon.contrib.nn import SyncBatchNorm
    x = mx.nd.array(np.random.default_rng(0).normal(size=(4, 3, 2, 2)))
    sync, plain = SyncBatchNorm(3, momentum=0.8), nn.BatchNorm(momentum=0.8, in_channels=3)
    for net in (sync, plain):
        net.initialize(mx.init.Uniform())
    for name in ('gamma', 'beta'):
        getattr(plain, name).set_data(getattr(sync, name).data())
    assert [k[len(sync.prefix):] for k in sync.collect_params()] == \
        ['gamma', 'beta', 'running_mean', 'running_var']
    with mx.autograd.record(train_mode=train):
        got, want = sync(x), plain(x)
    np.testing.assert_allclose(got.asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(sync.running_mean.data().asnumpy(),
                               plain.running_mean.data().asnumpy(), rtol=1e-6)
    with pytest.raises(Exception, match='ndev'):
        bad = SyncBatchNorm(num_devices=2)
        bad.initialize()
        bad(x)


def test_sparse_embedding_pulls_and_updates_only_the_rows_it_looks_up():
    layer = SparseEmbedding(10, 4)
    layer.initialize(mx.init.One())
    trainer = mx.gluon.Trainer(layer.collect_params(), "sgd", {"learning_rate": 1.0})
    x = mx.nd.array([3, 4, 3])
    with mx.autograd.record():
        y = layer(x)
    y.backward()
    assert y.shape == (3, 4)
    grad = layer.weight.grad()
    assert grad.stype == "row_sparse"
    assert sorted(grad.indices.asnumpy().tolist()) == [3, 4]
    expected = np.zeros((10, 4), np.float32)
    expected[3], expected[4] = 2, 1
    np.testing.assert_array_equal(grad.asnumpy(), expected)
    trainer.step(1)
    weight = layer.weight.row_sparse_data(mx.nd.arange(10)).asnumpy()
    np.testing.assert_array_equal(weight, 1 - expected)
    assert repr(layer) == "SparseEmbedding(10 -> 4, float32)"
