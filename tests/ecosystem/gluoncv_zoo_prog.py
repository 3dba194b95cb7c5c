"""Run by test_gluoncv_zoo.py through ``python -m mxnext run``: each ``NAME:SIZE``
argument is a GluonCV model zoo network built with ``pretrained=False``, hybridized, run
forward on a (1, 3, SIZE, SIZE) input while recording and backward; prints
``NAME output-shape weights-with-a-nonzero-gradient/weights-with-a-gradient``
(the same lines under MXNet 1.9.1: a zero-initialised gamma, or BatchNorm over one
value, leaves some gradients exactly zero there too)."""

import sys

import numpy as np
import mxnet as mx
from mxnet import autograd
from gluoncv.model_zoo import get_model

for arg in sys.argv[1:]:
    name, size = arg.rsplit(':', 1)
    net = get_model(name, pretrained=False)
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(1, 3, int(size), int(size)))
    with autograd.record():
        y = net(x)
        y = y[0] if isinstance(y, (list, tuple)) else y   # NASNet adds an auxiliary head
    y.backward()
    grads = [p.grad().asnumpy() for p in net.collect_params().values() if p.grad_req != 'null']
    assert all(np.isfinite(g).all() for g in grads), name
    moved = sum(bool(np.any(g)) for g in grads)
    print(name, tuple(y.shape), f'{moved}/{len(grads)}', flush=True)
