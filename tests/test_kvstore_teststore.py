"""The builtin ``teststore`` KVStore (MXNet's TestStore): sums and broadcasts, refuses an
optimizer."""

import numpy as np
import pytest

import mxnext as mx


def test_teststore_sums_broadcasts_and_cannot_run_an_optimizer():
    kv = mx.kv.create("teststore")
    assert (kv.type, kv.rank, kv.num_workers) == ("teststore", 0, 1)
    assert kv.is_capable("optimizer") is False
    with pytest.raises(ValueError, match="unknown capability 'sparse'"):
        kv.is_capable("sparse")
    a = [mx.nd.ones((2, 2), mx.cpu(0)), mx.nd.full((2, 2), 2, mx.cpu(1))]
    kv.pushpull(0, a)
    assert all((x.asnumpy() == 3).all() for x in a)
    out = [mx.nd.zeros((2, 2)), mx.nd.zeros((2, 2), mx.cpu(1))]
    kv.broadcast(0, mx.nd.full((2, 2), 5), out=out)
    assert all((o.asnumpy() == 5).all() for o in out)
    kv.pushpull(0, a[0], out=out[1])
    np.testing.assert_array_equal(out[1].asnumpy(), a[0].asnumpy())
    with pytest.raises(NotImplementedError, match="'teststore' cannot run an optimizer"):
        kv.set_optimizer(mx.optimizer.SGD())
    for method in (kv.save_optimizer_states, kv.load_optimizer_states):
        with pytest.raises(NotImplementedError, match=method.__name__):
            method("states")
    # a static method in MXNet: asked of the store types themselves
    assert type(kv).is_capable("optimizer") is False
    assert type(mx.kv.create("local")).is_capable("optimizer") is True
