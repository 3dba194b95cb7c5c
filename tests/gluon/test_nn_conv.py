"""gluon.nn convolution, pooling, padding and activation layers: values and gradients
against MXNet 1.9.1's (fixtures/nn_conv_ref.npz, written by make_nn_conv_ref.py), weight
shapes, names, reprs and argument errors as MXNet's."""

import os

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon import nn

REF = np.load(os.path.join(os.path.dirname(__file__), 'fixtures', 'nn_conv_ref.npz'))
CASES = [str(c) for c in REF['cases']]


def _run(layer, i, hybridize):
    layer.initialize()
    params = {p.name[len(layer.prefix):]: p for p in layer.collect_params().values()}
    for name, p in params.items():
        p.set_data(mx.nd.array(REF[f'{i}/p:{name}']))
    if hybridize:
        layer.hybridize()
    x = mx.nd.array(REF[f'{i}/x'])
    x.attach_grad()
    with mx.autograd.record():
        out = layer(x)
    out.backward(mx.nd.array(REF[f'{i}/head']))
    return out, x.grad, params


# where MXNet 1.9.1's input gradient is not the derivative of its own output: SELU's
# backward computes lambda * (y + alpha) below 0 instead of y + lambda * alpha, and the MKLDNN
# average pooling backward mis-weights the windows that 'full' (ceil) mode adds. These
# cases check the gradient against central differences of the (MXNet-equal) output.
MXNET_WRONG_DX = {'nn.SELU()', 'nn.AvgPool2D(3, 2, 1, ceil_mode=True)'}


def _numeric_dx(layer, i):
    x, head = REF[f'{i}/x'].astype(np.float64), REF[f'{i}/head'].astype(np.float64)
    flat, dx, eps = x.reshape(-1), np.zeros(x.size), 1e-4
    for k in range(x.size):
        loss = []
        for step in (eps, -2 * eps):
            flat[k] += step
            loss.append((layer(mx.nd.array(x, dtype='float64')).asnumpy() * head).sum())
        flat[k] += eps
        dx[k] = (loss[0] - loss[1]) / (2 * eps)
    return dx.reshape(x.shape)


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('i', range(len(CASES)), ids=CASES)
def test_layer_matches_mxnet(i, hybridize):
    layer = eval(CASES[i], {'nn': nn, 'mx': mx})
    out, dx, params = _run(layer, i, hybridize)
    np.testing.assert_allclose(out.asnumpy(), REF[f'{i}/out'], rtol=1e-5, atol=1e-5)
    if CASES[i] in MXNET_WRONG_DX:
        want = _numeric_dx(eval(CASES[i], {'nn': nn, 'mx': mx}), i)
        assert not np.allclose(want, REF[f'{i}/dx'], rtol=1e-4, atol=1e-5)
    else:
        want = REF[f'{i}/dx']
    np.testing.assert_allclose(dx.asnumpy(), want, rtol=1e-4, atol=1e-5)
    assert sorted(params) == sorted(k[len(f'{i}/d:'):] for k in REF.files
                                    if k.startswith(f'{i}/d:'))
    for name, p in params.items():
        np.testing.assert_allclose(p.grad().asnumpy(), REF[f'{i}/d:{name}'],
                                   rtol=1e-4, atol=1e-5, err_msg=name)


@pytest.mark.parametrize('layer, shapes', [
    (lambda: nn.Conv1D(8, 3, in_channels=4, groups=2), [(8, 2, 3), (8,)]),
    (lambda: nn.Conv2D(8, (3, 2), use_bias=False), [(8, 0, 3, 2)]),
    (lambda: nn.Conv2D(8, 3, layout='NHWC', in_channels=4, groups=2), [(8, 3, 3, 2), (8,)]),
    (lambda: nn.Conv3D(8, (1, 2, 3), layout='NDHWC', in_channels=4),
     [(8, 1, 2, 3, 4), (8,)]),
    (lambda: nn.Conv2DTranspose(8, (2, 3), in_channels=4, groups=2), [(4, 4, 2, 3), (8,)]),
    (lambda: nn.Conv2DTranspose(8, (2, 3), layout='NHWC', in_channels=4, groups=2),
     [(4, 2, 3, 4), (8,)]),
    (lambda: nn.Conv3DTranspose(5, 2), [(0, 5, 2, 2, 2), (5,)]),
    (lambda: nn.PReLU(in_channels=3), [(3,)]),
])
def test_parameter_shapes_as_mxnet(layer, shapes):
    # as MXNet 1.9.1 infers them at construction (0: deferred to the first forward)
    assert [p.shape for p in layer().collect_params().values()] == shapes


def test_deferred_in_channels_completed_at_first_forward():
    conv = nn.Conv2D(6, 3, groups=2)
    deconv = nn.Conv2DTranspose(6, 3)
    for layer, want in ((conv, (6, 2, 3, 3)), (deconv, (4, 6, 3, 3))):
        layer.initialize()
        out = layer(mx.nd.ones((1, 4, 5, 5)))
        assert layer.weight.shape == want
        assert out.shape == ((1, 6, 3, 3) if layer is conv else (1, 6, 7, 7))


def test_pool_output_shapes_ceil_mode_and_layouts():
    x = mx.nd.zeros((2, 2, 10, 10))
    assert nn.MaxPool2D(3)(x).shape == (2, 2, 3, 3)
    assert nn.MaxPool2D(3, ceil_mode=True)(x).shape == (2, 2, 4, 4)
    assert nn.AvgPool2D(3, ceil_mode=True, layout='NHWC')(
        mx.nd.zeros((2, 10, 10, 2))).shape == (2, 4, 4, 2)
    assert nn.GlobalMaxPool3D(layout='NDHWC')(mx.nd.zeros((1, 3, 4, 5, 2))).shape == \
        (1, 1, 1, 1, 2)


def test_names_as_mxnet():
    net = nn.HybridSequential()
    with net.name_scope():
        conv = nn.Conv2D(4, 3, activation='relu')
        deconv = nn.Conv1DTranspose(4, 3)
        pool = nn.MaxPool2D()
        gpool = nn.GlobalAvgPool2D()
        act = nn.Activation('tanh')
        prelu = nn.PReLU()
        lrelu = nn.LeakyReLU(0.1)
    p = net.prefix
    assert conv.prefix == p + 'conv0_' and deconv.prefix == p + 'conv1_'
    assert conv.act.prefix == p + 'conv0_relu_'
    assert [k[len(p):] for k in conv.collect_params()] == ['conv0_weight', 'conv0_bias']
    assert (pool.name, gpool.name) == (p + 'pool0', p + 'pool1')
    assert act.name == p + 'tanh0'
    assert list(prelu.collect_params()) == [p + 'prelu0_alpha']
    assert lrelu.name == p + 'leakyrelu0'


def test_repr_as_mxnet():
    assert repr(nn.Conv2D(8, 3, in_channels=4, groups=2, padding=1)) == \
        'Conv2D(2 -> 8, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1), groups=2)'
    assert repr(nn.Conv2D(8, 3, activation='relu', use_bias=False)) == \
        'Conv2D(None -> 8, kernel_size=(3, 3), stride=(1, 1), bias=False, Activation(relu))'
    # MXNet 1.9.1 prints neither the output padding nor the input channels of a deferred
    # transposed convolution's weight (its shape[1] is the output channels)
    assert repr(nn.Conv2DTranspose(3, 2, strides=2, output_padding=1, dilation=2)) == \
        'Conv2DTranspose(3 -> 0, kernel_size=(2, 2), stride=(2, 2), dilation=(2, 2))'
    assert repr(nn.MaxPool2D(layout='NHWC')) == (
        'MaxPool2D(size=(2, 2), stride=(2, 2), padding=(0, 0), ceil_mode=False, '
        'global_pool=False, pool_type=max, layout=NHWC)')
    assert repr(nn.GlobalAvgPool2D()) == (
        'GlobalAvgPool2D(size=(1, 1), stride=(1, 1), padding=(0, 0), ceil_mode=True, '
        'global_pool=True, pool_type=avg, layout=NCHW)')
    assert repr(nn.Activation('relu')) == 'Activation(relu)'
    assert repr(nn.LeakyReLU(0.1)) == 'LeakyReLU(0.1)'


@pytest.mark.parametrize('make, words', [
    (lambda: nn.Conv2D(8, 3, layout='NCW'), ['Conv2D', 'layout', 'NCHW, NHWC', "'NCW'"]),
    (lambda: nn.Conv1D(8, 3, layout='NWC'), ['Conv1D', 'layout', 'NCW', "'NWC'"]),
    (lambda: nn.Conv2D(8, (3, 3, 3)), ['Conv2D', 'kernel_size', '2 ints', '(3, 3, 3)']),
    (lambda: nn.Conv3DTranspose(8, 3, output_padding=(1, 1)),
     ['Conv3DTranspose', 'output_padding', '3 ints']),
    (lambda: nn.Conv2D(8, 3, strides=(1, 1, 1)), ['Conv2D', 'strides', '2 ints']),
    (lambda: nn.Conv2D(8, 3, in_channels=3, groups=2),
     ['Conv2D', 'in_channels=3', 'groups=2']),
    (lambda: nn.Conv1DTranspose(3, 3, groups=2), ['Conv1DTranspose', 'channels=3']),
    (lambda: nn.MaxPool3D(layout='NCHW'), ['MaxPool3D', 'layout', 'NCDHW, NDHWC']),
    (lambda: nn.AvgPool1D((2, 2)), ['AvgPool1D', 'pool_size', '1 ints']),
    (lambda: nn.GlobalAvgPool1D(layout='NCHW'), ['GlobalAvgPool1D', 'layout']),
    (lambda: nn.ReflectionPad2D((1, 2)), ['ReflectionPad2D', 'padding', '8 ints']),
    (lambda: nn.LeakyReLU(-0.5), ['LeakyReLU', 'alpha', '>= 0', '-0.5']),
])
def test_argument_errors_name_layer_argument_and_value(make, words):
    # MXNet raises AssertionError for these; the message says what came and was expected
    with pytest.raises(AssertionError) as e:
        make()
    for w in words:
        assert w in str(e.value)


def test_activations_named_by_mxnet_formulas():
    x = mx.nd.array([-0.1, 0.1] * 3)
    xn = x.asnumpy()
    np.testing.assert_allclose(nn.Swish()(x).asnumpy(), xn / (1 + np.exp(-xn)), rtol=1e-6)
    np.testing.assert_allclose(nn.ELU()(x).asnumpy(), np.where(xn > 0, xn, np.expm1(xn)),
                               rtol=1e-6)
    scale, alpha = 1.0507009873554805, 1.6732632423543772
    np.testing.assert_allclose(nn.SELU()(x).asnumpy(),
                               scale * np.where(xn > 0, xn, alpha * np.expm1(xn)), rtol=1e-6)
    prelu = nn.PReLU(alpha_initializer=mx.init.Constant(mx.nd.array([0.1, 0.25, 0.5])),
                     in_channels=3)
    prelu.initialize()
    np.testing.assert_allclose(prelu(x.reshape((1, 3, 2))).asnumpy(),
                               [[[-0.01, 0.1], [-0.025, 0.1], [-0.05, 0.1]]], rtol=1e-6)
