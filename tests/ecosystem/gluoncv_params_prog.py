"""Run by test_gluoncv_params.py through ``python -m mxnext run``: GluonCV builds each
fixture network on mxnext (``build`` of fixtures/make_gluoncv_fixtures.py), loads the
parameters MXNet 1.9.1 saved and must give MXNet's inference outputs, training-mode
outputs and first-weight gradient. Prints ``ok NAME hybridize`` per passing case."""

import os
import sys

import numpy as np
import mxnet as mx
from mxnet import autograd

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'fixtures')
sys.path.insert(0, FIXTURES)
from make_gluoncv_fixtures import build  # noqa: E402  (MXNet's script, on mxnext here)


def _close(name, what, got, want, scale=1e-4):
    # atol relative to the largest value: batch statistics over a few values per channel
    # (batch 2, 2x2 maps at the end) carry float32 rounding into every output
    want = want.asnumpy()
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4, atol=scale * abs(want).max(),
                               err_msg=f'{name}: {what}')


# The first weight's gradient passes back through every ReLU after a BatchNorm of a few
# values per channel, where float32 rounding decides the sign of inputs close to 0: against
# a float64 run of the same network, one input in four (at random, at 64x64 and 128x128, and
# with either kernel set, ops-nn's or oneDNN's) gave a gradient 1e-3 to 5e-3 of its largest
# value away, the others 1e-5. MXNet's own float32 result sits on one side of such a jump.
GRADIENT_SCALE = 1e-2


def _as_list(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


def _same_detections(name, got, want):
    """A detector's (ids, scores, boxes) per image as the same set of rows. Scores that tie
    in MXNet may differ by one float32 ulp here, which reorders tied rows after NMS and
    can change which tied row makes the top-k cut, so rows at the lowest kept score are
    left out and the others are matched regardless of order."""
    for g, w in zip(*(np.concatenate([o.asnumpy() for o in outs], axis=2)
                      for outs in (got, want))):
        cut = min(g[:, 1].min(), w[:, 1].min()) + 1e-5
        g, w = g[g[:, 1] > cut], w[w[:, 1] > cut]
        assert len(g) == len(w), f'{name}: {len(g)} detections above {cut}, MXNet {len(w)}'
        for row in g:
            match = np.isclose(w, row, rtol=1e-4, atol=1e-3).all(axis=1)
            assert match.any(), f'{name}: detection {row} is not among MXNet\'s'


def _loaded(name, hybridize):
    net = build(name)
    net.load_parameters(os.path.join(FIXTURES, name + '.params'))
    if hybridize:
        net.hybridize()
    return net


def check(name, hybridize):
    io = mx.nd.load(os.path.join(FIXTURES, name + '-io.nd'))
    got = _as_list(_loaded(name, hybridize)(io['x']))
    want = [io[f'infer{i}'] for i in range(len(got))]
    if name.startswith('ssd'):
        _same_detections(name, got, want)
    else:
        _close(name, 'inference output', got[0], want[0])
    # a fresh network: a hybridized graph keeps the mode of its first call, and the SSD's
    # outputs differ between inference and training
    net = _loaded(name, hybridize)
    first = [p for n, p in net.collect_params().items() if n.endswith('weight')][0]
    with autograd.record():
        train = _as_list(net(io['x']))
        loss = sum((out * io[f'w{i}']).sum() for i, out in enumerate(train))
    loss.backward()
    for i, out in enumerate(train):
        _close(name, f'training-mode output {i}', out, io[f'train{i}'])
    _close(name, 'gradient of the first weight', first.grad(), io['grad0'], GRADIENT_SCALE)
    print('ok', name, hybridize, flush=True)


for arg in sys.argv[1:]:
    check(arg, hybridize=False)
    check(arg, hybridize=True)
