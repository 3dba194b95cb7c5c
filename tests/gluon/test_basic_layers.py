"""gluon.nn's basic layers against numpy: normalisations, dropout, embedding, flatten,
lambdas; parameter names and reprs as MXNet 1.9's."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd
from mxnext.gluon import nn

RNG = np.random.RandomState(3)


def _run(layer, x, hybrid):
    layer.initialize()
    if hybrid:
        layer.hybridize()
    return layer(mx.nd.array(x)).asnumpy()


@pytest.mark.parametrize("hybrid", [False, True])
def test_norm_layers_match_numpy(hybrid):
    x = RNG.uniform(-2, 2, (2, 4, 3)).astype(np.float32)
    ln = _run(nn.LayerNorm(), x, hybrid)
    ref = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(ln, ref, rtol=1e-4, atol=1e-5)
    inorm = _run(nn.InstanceNorm(), x, hybrid)
    ref = (x - x.mean(2, keepdims=True)) / np.sqrt(x.var(2, keepdims=True) + 1e-5)
    np.testing.assert_allclose(inorm, ref, rtol=1e-4, atol=1e-4)
    gn = _run(nn.GroupNorm(num_groups=2), x, hybrid)
    g = x.reshape(2, 2, -1)
    ref = ((g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-5))
    np.testing.assert_allclose(gn, ref.reshape(x.shape), rtol=1e-4, atol=1e-4)
    bn = nn.BatchNorm(in_channels=4)
    bn.initialize()
    bn.running_mean.set_data(mx.nd.ones(4))
    if hybrid:
        bn.hybridize()
    np.testing.assert_allclose(bn(mx.nd.array(x)).asnumpy(), (x - 1) / np.sqrt(1 + 1e-5),
                               rtol=1e-5)


def test_batchnorm_training_uses_batch_statistics_unless_global():
    x = mx.nd.array(RNG.uniform(0, 1, (8, 3)))
    for use_global, expect in ((False, 0.1), (True, 0.0)):
        bn = nn.BatchNorm(in_channels=3, momentum=0.9, use_global_stats=use_global)
        bn.initialize()
        with autograd.record():
            y = bn(x)
        y.backward()
        np.testing.assert_allclose(bn.running_mean.data().asnumpy(),
                                   x.asnumpy().mean(0) * expect, rtol=1e-5, atol=1e-7)
    assert [p.grad_req for p in bn.collect_params().values()] == ["write", "write", "null",
                                                                   "null"]
    assert nn.BatchNorm(scale=False).gamma.grad_req == "null"
    bn.cast("float16")
    assert bn.gamma.dtype == "float32"


def test_dropout_embedding_flatten_lambdas():
    x = mx.nd.ones((100, 10))
    with autograd.train_mode():
        y = nn.Dropout(0.5)(x).asnumpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.3 < (y == 0).mean() < 0.7
    assert (nn.Dropout(0.5)(x).asnumpy() == 1).all()          # inference: identity
    with autograd.train_mode():
        shared = nn.Dropout(0.5, axes=(1,))(x).asnumpy()
    assert all(len(set(row)) == 1 for row in shared)          # one mask per row
    emb = nn.Embedding(5, 3, sparse_grad=True)
    emb.initialize()
    idx = mx.nd.array([[0, 4], [4, 4]])
    with autograd.record():
        out = emb(idx)
    out.backward()
    np.testing.assert_array_equal(out.asnumpy(), emb.weight.data().asnumpy()[[[0, 4], [4, 4]]])
    np.testing.assert_array_equal(emb.weight.grad().asnumpy()[:, 0], [1, 0, 0, 0, 3])
    assert nn.Flatten()(mx.nd.ones((2, 3, 4))).shape == (2, 12)
    assert nn.Lambda("tanh")(mx.nd.zeros(2)).asnumpy().tolist() == [0, 0]
    hl = nn.HybridLambda(lambda F, a: F.relu(a) * 2)
    hl.hybridize()
    assert hl(mx.nd.array([-1, 1])).asnumpy().tolist() == [0, 2]
    with pytest.raises(mx.base.MXNetError, match="nothing_like_this is not found"):
        nn.HybridLambda("nothing_like_this")
    assert (nn.Identity()(x) is x)


def test_reprs_and_names():
    with mx.name.NameManager():
        assert repr(nn.Dense(3, in_units=2)) == "Dense(2 -> 3, linear)"
        assert repr(nn.Embedding(5, 3)) == "Embedding(5 -> 3, float32)"
        assert repr(nn.Dropout(0.2)) == "Dropout(p = 0.2, axes=())"
        assert repr(nn.BatchNorm()) == ("BatchNorm(axis=1, eps=1e-05, momentum=0.9, "
                                        "fix_gamma=False, use_global_stats=False, "
                                        "in_channels=None)")
        assert nn.BatchNormReLU().prefix == "batchnormrelu0_"
        assert repr(nn.LayerNorm(in_channels=4)) == ("LayerNorm(eps=1e-05, axis=-1, "
                                                     "center=True, scale=True, in_channels=4)")
        assert repr(nn.Flatten()) == "Flatten" and repr(nn.Lambda("tanh")) == "Lambda(tanh)"
