"""gluon.model_zoo: every architecture has MXNet 1.9.1's parameters — structural ``.params``
keys, prefixed names and shapes — and repr (fixtures/model_zoo_params.json.gz, written by
make_model_zoo_params.py with MXNet) — so MXNet's pretrained files load; forward and
backward run, hybridized equal to imperative; with the same weights the outputs are
MXNet's (fixtures/model_zoo_outputs.npz); pretrained weights load from a local file and a
missing one is named in the error."""

import gzip
import hashlib
import importlib.util
import json
import os
import re

import numpy as np
import pytest

import mxnext as mx
from mxnext.gluon.model_zoo import model_store, vision
from mxnext.gluon.model_zoo.vision import get_model

FIXTURES = os.path.join(os.path.dirname(__file__), 'fixtures')
with gzip.open(os.path.join(FIXTURES, 'model_zoo_params.json.gz'), 'rt') as _f:
    MODELS = json.load(_f)['models']
_spec = importlib.util.spec_from_file_location('zoo_weights',
                                               os.path.join(FIXTURES, 'zoo_weights.py'))
zoo_weights = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(zoo_weights)


def _params(net):
    return [[key, p.name[len(net.prefix):], list(p.shape)]
            for key, p in net._collect_params_with_prefix().items()]


@pytest.mark.parametrize('name', sorted(MODELS))
def test_parameters_as_mxnet(name):
    net = get_model(name)
    alias = re.compile(r'\d+_$')      # the class's alias, its counter aside
    assert alias.sub('', net.prefix) == alias.sub('', MODELS[name]['prefix'])
    want = [p[:3] for p in MODELS[name]['params']]
    assert _params(net) == want
    assert repr(net) == MODELS[name]['repr']


@pytest.mark.parametrize('name', ['resnet18_v1', 'resnet18_v2', 'mobilenet0.25',
                                  'mobilenetv2_0.25'])
def test_shapes_completed_at_first_forward_as_mxnet(name):
    net = get_model(name)
    net.initialize()
    assert net(mx.nd.ones((1, 3, 32, 32))).shape == (1, 1000)
    want = [p[3] for p in MODELS[name]['params']]
    assert [s for _, _, s in _params(net)] == want


OUTPUTS = np.load(os.path.join(FIXTURES, 'model_zoo_outputs.npz'))
SIZES = {'resnet18_v1': 64, 'resnet50_v2': 64, 'mobilenet0.25': 64, 'mobilenetv2_0.25': 64,
         'squeezenet1.1': 224}


@pytest.mark.parametrize('hybridize', [False, True], ids=['imperative', 'hybridized'])
@pytest.mark.parametrize('name', sorted(SIZES))
def test_inference_output_as_mxnet(name, hybridize):
    size = SIZES[name]
    net = get_model(name)
    net.initialize()
    net(mx.nd.zeros((1, 3, size, size)))
    for key, p in net._collect_params_with_prefix().items():
        p.set_data(mx.nd.array(zoo_weights.fill(key, p.shape)))
    if hybridize:
        net.hybridize()
    np.testing.assert_allclose(net(mx.nd.array(zoo_weights.image(size))).asnumpy(), OUTPUTS[name],
                               rtol=1e-4, atol=1e-5 * np.abs(OUTPUTS[name]).max())


def test_resnet18_v1_forward_backward_hybridized_equals_imperative():
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier())
    # two images: with one, training-mode BatchNorm over stage 4's 1x1 maps zeroes the
    # features and every gradient before the classifier
    x = mx.nd.array(np.random.RandomState(0).uniform(-1, 1, (2, 3, 32, 32)))
    results = []
    for hybridize in (False, True):
        if hybridize:
            net.hybridize()
        with mx.autograd.record():
            out = net(x)
        out.backward()
        results.append((out.asnumpy(), {k: p.grad().asnumpy().copy()
                                        for k, p in net.collect_params().items()
                                        if p.grad_req != 'null'}))
    (out0, grads0), (out1, grads1) = results
    assert out0.shape == (2, 10) and np.isfinite(out0).all()
    np.testing.assert_allclose(out1, out0, rtol=1e-4, atol=1e-5)
    assert grads0.keys() == grads1.keys() and len(grads0) == 62
    for k in grads0:
        np.testing.assert_allclose(grads1[k], grads0[k], rtol=1e-3, atol=1e-5, err_msg=k)
    assert np.abs(grads0[net.output.weight.name]).sum() > 0
    assert np.abs(grads0[net.features[0].weight.name]).sum() > 0


def test_get_model_names_the_options():
    assert isinstance(get_model('ReSNet18_V2'), vision.ResNetV2)
    with pytest.raises(ValueError, match=r'(?s)resnet19_v1 is not supported.*resnet18_v1'):
        get_model('resnet19_v1')
    with pytest.raises(AssertionError, match='version 3'):
        vision.get_resnet(3, 18)


def test_pretrained_missing_file_names_it(tmp_path):
    with pytest.raises(FileNotFoundError) as e:
        get_model('squeezenet1.1', pretrained=True, root=str(tmp_path))
    msg = str(e.value)
    assert os.path.join(str(tmp_path), 'squeezenet1.1-33ba0f93.params') in msg
    assert 'gluon/models/squeezenet1.1-33ba0f93.zip' in msg
    with pytest.raises(ValueError, match='not available'):
        model_store.get_model_file('resnet19_v1', root=str(tmp_path))


def test_pretrained_loads_the_local_file(tmp_path, monkeypatch):
    src = vision.mobilenet0_25()
    src.initialize(mx.init.Uniform())
    src(mx.nd.ones((1, 3, 32, 32)))
    saved = tmp_path / 'saved.params'
    src.save_parameters(str(saved))
    # the test's weights stand for MXNet's published file: its checksum and so its name
    sha1 = hashlib.sha1(saved.read_bytes()).hexdigest()
    monkeypatch.setitem(model_store._model_sha1, 'mobilenet0.25', sha1)
    saved.rename(tmp_path / f'mobilenet0.25-{sha1[:8]}.params')
    net = get_model('mobilenet0.25', pretrained=True, root=str(tmp_path))
    for (k, p), q in zip(net._collect_params_with_prefix().items(),
                         src._collect_params_with_prefix().values()):
        np.testing.assert_array_equal(p.data().asnumpy(), q.data().asnumpy(), err_msg=k)


def test_pretrained_file_with_other_content_is_refused(tmp_path):
    path = tmp_path / f"alexnet-{model_store.short_hash('alexnet')}.params"
    path.write_bytes(b'not the weights')
    with pytest.raises(ValueError, match=model_store._model_sha1['alexnet']):
        vision.alexnet(pretrained=True, root=str(tmp_path))
