"""Run by test_gluoncv_params.py through ``python -m mxnext run``: GluonCV builds each
fixture network on mxnext, loads the parameters MXNet 1.9.1 saved and must give MXNet's
inference output, training-mode output and first-weight gradient (see
fixtures/make_gluoncv_fixtures.py). Prints ``ok NAME hybridize`` per passing case."""

import os
import sys

import numpy as np
import mxnet as mx
from mxnet import autograd
from gluoncv.model_zoo import get_model

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
KWARGS = {'mobilenet0.25': {'classes': 10}, 'mobilenetv2_0.25': {'classes': 10}}


def _close(name, what, got, want):
    # atol relative to the largest value: batch statistics over a few values per channel
    # (batch 2, 2x2 maps at the end) carry float32 rounding into every output
    want = want.asnumpy()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=1e-4 * abs(want).max(),
                               err_msg=f'{name}: {what}')


def check(name, hybridize):
    io = mx.nd.load(os.path.join(FIXTURES, name + '-io.nd'))
    net = get_model(name, pretrained=False, **KWARGS.get(name, {}))
    net.load_parameters(os.path.join(FIXTURES, name + '.params'))
    if hybridize:
        net.hybridize()
    _close(name, 'inference output', net(io['x']), io['infer'])
    first = [p for n, p in net.collect_params().items() if n.endswith('weight')][0]
    with autograd.record():
        train = net(io['x'])
        loss = (train * io['w']).sum()
    loss.backward()
    _close(name, 'training-mode output', train, io['train'])
    _close(name, 'gradient of the first weight', first.grad(), io['grad0'])
    print('ok', name, hybridize, flush=True)


for arg in sys.argv[1:]:
    check(arg, hybridize=False)
    check(arg, hybridize=True)
