"""hybridize(static_alloc=True): instances are reused across calls, yet results and
gradients never depend on the flag, whatever the order of calls and backwards."""

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.executor._instance import Instance
from mxnext.gluon import nn


def _net(static):
    net = nn.HybridSequential()
    net.add(nn.Dense(6, activation="relu", in_units=5), nn.Dense(3, in_units=6))
    net.initialize()
    rs = np.random.RandomState(0)      # not the global generator: other tests' draws stay
    for p in net.collect_params().values():
        p.set_data(mx.nd.array(rs.uniform(-1, 1, p.shape)))
    if static is not None:
        net.hybridize(static_alloc=static, static_shape=static)
    return net


def _inputs(n):
    rs = np.random.RandomState(1)
    return [mx.nd.array(rs.uniform(-1, 1, (4, 5))) for _ in range(n)]


@pytest.mark.parametrize("static", [None, False, True])
def test_held_results_of_recorded_calls_stay_theirs_until_their_backward(static):
    """More calls than instances kept, each result held, backwards later in reverse."""
    net, xs = _net(static), _inputs(7)
    params = list(net.collect_params().values())
    ref = _net(None)
    with autograd.record():
        ys = [net(x) for x in xs]
    for x, y in reversed(list(zip(xs, ys))):
        with autograd.record():
            y0 = ref(x)
        np.testing.assert_allclose(y.asnumpy(), y0.asnumpy(), rtol=1e-6)
        y.backward()
        y0.backward()
        for p, q in zip(params, ref.collect_params().values()):
            np.testing.assert_allclose(p.grad().asnumpy(), q.grad().asnumpy(), rtol=1e-5,
                                       atol=1e-7)


def test_a_dropped_recorded_result_frees_its_instance_for_the_next_call(monkeypatch):
    """A loss computed under record and never back-propagated (evaluation under record)
    does not make every later call build a new instance."""
    built = []
    init = Instance.__init__

    def counted(self, *args, **kwargs):
        built.append(self)
        init(self, *args, **kwargs)
    monkeypatch.setattr(Instance, "__init__", counted)
    loss = gluon.loss.L2Loss()
    loss.hybridize(static_alloc=True, static_shape=True)
    a, b = (mx.nd.array(np.random.RandomState(k).rand(8, 3)) for k in (2, 3))
    a.attach_grad()
    expect = 0.5 * ((a.asnumpy() - b.asnumpy()) ** 2).mean(axis=1)
    for _ in range(10):
        with autograd.record():
            out = loss(a, b)
        np.testing.assert_allclose(out.asnumpy(), expect, rtol=1e-6)
    assert len(built) <= 2          # the call before's result is still held at each call
    out.backward()
    np.testing.assert_allclose(a.grad.asnumpy(), (a.asnumpy() - b.asnumpy()) / 3,
                               rtol=1e-5)
