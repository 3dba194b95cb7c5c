"""gluon.contrib's convolutional RNN cells and deformable convolution layers: values and
gradients against MXNet 1.9.1's (fixtures/contrib_ref.npz, written by make_contrib_ref.py),
imperative and hybridized; parameter names, shapes and argument checks; dynamic_unroll
against unroll."""

import os

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon.contrib import cnn as ccnn
from mxnext.gluon.contrib import rnn as crnn

REF = np.load(os.path.join(os.path.dirname(__file__), 'fixtures', 'contrib_ref.npz'))
CASES = [str(c) for c in REF['cases']]


def _run(layer, x):
    if isinstance(layer, crnn.conv_rnn_cell._ConvCellBase):
        return layer.unroll(3, x, layout='NTC', merge_outputs=True)
    return layer(x), []


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('i', range(len(CASES)), ids=CASES)
def test_layer_matches_mxnet(i, hybridize):
    layer = eval(CASES[i], {'crnn': crnn, 'ccnn': ccnn})
    layer.initialize()
    x = mx.nd.array(REF[f'{i}/x'])
    _run(layer, x)                                   # completes deferred shapes
    params = {p.name[len(layer.prefix):]: p for p in layer.collect_params().values()}
    assert sorted(params) == sorted(k[len(f'{i}/p:'):] for k in REF if k.startswith(f'{i}/p:'))
    for name, p in params.items():
        p.set_data(mx.nd.array(REF[f'{i}/p:{name}']))
    if hybridize:
        layer.hybridize()
    x.attach_grad()
    with mx.autograd.record():
        out, states = _run(layer, x)
    np.testing.assert_allclose(out.asnumpy(), REF[f'{i}/out'], rtol=1e-4, atol=1e-5)
    for k, s in enumerate(states):
        np.testing.assert_allclose(s.asnumpy(), REF[f'{i}/s{k}'], rtol=1e-4, atol=1e-5)
    if f'{i}/dx' not in REF:
        return
    out.backward(mx.nd.array(REF[f'{i}/head']))
    np.testing.assert_allclose(x.grad.asnumpy(), REF[f'{i}/dx'], rtol=1e-4, atol=1e-4)
    for name, p in params.items():
        np.testing.assert_allclose(p.grad().asnumpy(), REF[f'{i}/d:{name}'], rtol=1e-4,
                                   atol=1e-4, err_msg=name)


def test_modulated_layer_trains():
    """MXNet 1.9 has no cpu backward here: the gradients reach every parameter."""
    layer = ccnn.ModulatedDeformableConvolution(3, kernel_size=3, padding=1,
                                               offset_weight_initializer='uniform')
    layer.initialize()
    x = mx.nd.array(np.random.default_rng(0).uniform(-1, 1, (2, 2, 5, 6)))
    with mx.autograd.record():
        out = layer(x)
    out.backward()
    for p in layer.collect_params().values():
        assert np.abs(p.grad().asnumpy()).sum() > 0, p.name


def test_cell_shapes_names_and_checks():
    cell = crnn.Conv2DLSTMCell((0, 8, 9), 5, 3, 3, i2h_pad=1, prefix='c_')
    assert cell.i2h_weight.shape == (20, 0, 3, 3)
    assert cell.h2h_weight.shape == (20, 5, 3, 3)
    assert cell.state_info(4) == [{'shape': (4, 5, 8, 9), '__layout__': 'NCHW'}] * 2
    assert repr(cell) == 'Conv2DLSTMCell(None -> 20, tanh, NCHW)'
    nhwc = crnn.Conv2DGRUCell((8, 9, 3), 5, 3, (3, 5), conv_layout='NHWC')
    assert nhwc.i2h_weight.shape == (15, 3, 3, 3)
    assert nhwc.state_info(2)[0]['shape'] == (2, 6, 7, 5)
    with pytest.raises(mx.MXNetError, match='odd'):
        crnn.Conv1DRNNCell((3, 7), 4, 3, 2)
    with pytest.raises(mx.MXNetError, match='i2h_pad must be an int or a tuple of 2'):
        crnn.Conv2DRNNCell((3, 7, 7), 4, 3, 3, i2h_pad=(1, 1, 1))


def test_deformable_layer_parameters_and_repr():
    layer = ccnn.DeformableConvolution(8, kernel_size=(3, 2), num_deformable_group=2,
                                      in_channels=4, use_bias=False, activation='relu')
    assert layer.offset_weight.shape == (24, 4, 3, 2)
    assert layer.offset_bias.shape == (24,)
    assert layer.deformable_conv_weight.shape == (8, 0, 3, 2)
    assert layer.deformable_conv_bias is None
    assert repr(layer) == ('DeformableConvolution(None -> 8, kernel_size=(3, 2), '
                           'stride=(1, 1), bias=False, Activation(relu))')
    mod = ccnn.ModulatedDeformableConvolution(8, kernel_size=3, num_deformable_group=2)
    assert mod.offset_weight.shape == (54, 0, 3, 3)
    assert list(mod.collect_params()) == [mod.prefix + n for n in (
        'deformable_conv_weight', 'deformable_conv_bias', 'offset_weight', 'offset_bias')]
    with pytest.raises(AssertionError, match='layout'):
        ccnn.DeformableConvolution(8, layout='NCW')


@pytest.mark.parametrize('layout', ['TNC', 'NTC'])
@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
def test_dynamic_unroll_matches_unroll(layout, hybridize):
    rng = np.random.default_rng(1)
    shape = (4, 3, 5) if layout == 'TNC' else (3, 4, 5)
    x = mx.nd.array(rng.standard_normal(shape))
    states = [mx.nd.array(rng.standard_normal((3, 6))) for _ in range(2)]
    valid = mx.nd.array([2, 4, 1])
    cell = mx.gluon.rnn.LSTMCell(6, input_size=5)
    cell.initialize()
    want, want_states = cell.unroll(4, x, states, layout=layout, merge_outputs=True,
                                    valid_length=valid)

    class Net(mx.gluon.HybridBlock):
        def __init__(self):
            super().__init__()
            self.cell = cell

        def hybrid_forward(self, F, x, s0, s1, valid):
            out, states = crnn.rnn_cell.dynamic_unroll(self.cell, x, [s0, s1], layout=layout,
                                                       valid_length=valid)
            return [out] + list(states)

    net = Net()
    if hybridize:
        net.hybridize()
    got = net(x, states[0], states[1], valid)
    np.testing.assert_allclose(got[0].asnumpy(), want.asnumpy(), rtol=1e-5, atol=1e-6)
    for g, w in zip(got[1:], want_states):
        np.testing.assert_allclose(g.asnumpy(), w.asnumpy(), rtol=1e-5, atol=1e-6)
