"""gluon.contrib.nn: Concurrent and HybridConcurrent concatenate their children's outputs."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import nn
from mxnext.gluon.contrib.nn import Concurrent, HybridConcurrent, Identity


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
