"""A hybridized block's calls leave nothing for the garbage collector: each call's
arrays go when the caller drops them (MXNet frees them by reference count too)."""

import gc
import weakref

import mxnext as mx
from mxnext import autograd, gluon


def test_hybridized_outputs_are_freed_without_the_garbage_collector():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(4))
    net.initialize()
    net.hybridize()
    x = mx.nd.ones((3, 5))
    x.attach_grad()
    gc.disable()
    try:
        refs = []
        for _ in range(3):
            with autograd.record():
                y = net(x)
            y.backward()
            refs.append(weakref.ref(y))
            del y
        mx.nd.waitall()
        assert all(r() is None for r in refs)
    finally:
        gc.enable()
