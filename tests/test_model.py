"""mx.model.FeedForward, MXNet's older training API: fit, predict, score, save/load,
create, several contexts with a kvstore, pickling."""

import logging
import pickle

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

pytestmark = pytest.mark.filterwarnings("ignore:mxnext.model.FeedForward is deprecated")


def _net():
    h = mx.sym.Activation(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=16, name="fc1"),
                          act_type="relu")
    return mx.sym.SoftmaxOutput(mx.sym.FullyConnected(h, num_hidden=3, name="fc2"),
                                name="softmax")


def _blobs(n=150, seed=0):
    rng = np.random.default_rng(seed)
    y = np.arange(n) % 3
    centers = np.array([[2, 0], [-2, 2], [0, -2]], dtype=np.float32)
    return (centers[y] + rng.normal(scale=0.5, size=(n, 2))).astype(np.float32), \
        y.astype(np.float32)


def _model(**kwargs):
    mx.random.seed(0)
    np.random.seed(0)
    return mx.model.FeedForward(_net(), num_epoch=10, numpy_batch_size=15,
                                learning_rate=0.1, momentum=0.9,
                                initializer=mx.init.Xavier(), **kwargs)


def test_fit_on_arrays_then_predict_and_score():
    x, y = _blobs()
    with pytest.warns(DeprecationWarning, match="use mxnext.mod.Module"):
        model = _model()
    model.fit(x, y, eval_data=(x, y))
    prob = model.predict(x)
    assert prob.shape == (150, 3)
    np.testing.assert_allclose(prob.sum(axis=1), 1, rtol=1e-5)
    assert (prob.argmax(axis=1) == y).mean() > 0.95
    assert model.score(mx.io.NDArrayIter(x, y, batch_size=40)) > 0.95
    out, data, label = model.predict(mx.io.NDArrayIter(x, y, batch_size=40),
                                     return_data=True)     # 150 = 3*40 + 30: the pad is cut
    assert out.shape == (150, 3) and data.shape == (150, 2)
    np.testing.assert_array_equal(label, y)
    assert model.predict(x, num_batch=2).shape == (30, 3)


def test_save_load_and_pickle_keep_the_predictions(tmp_path, caplog):
    x, y = _blobs()
    model = _model()
    model.fit(x, y)
    caplog.set_level(logging.INFO)
    model.save(str(tmp_path / "ff"))
    assert f'Saved checkpoint to "{tmp_path / "ff"}-0010.params"' in caplog.messages
    loaded = mx.model.FeedForward.load(str(tmp_path / "ff"), 10)
    assert loaded.begin_epoch == 10
    # float32 tolerance: a kernel provider (ops-onednn) may split a product differently
    np.testing.assert_allclose(loaded.predict(x), model.predict(x), rtol=1e-5)
    clone = pickle.loads(pickle.dumps(model))
    np.testing.assert_allclose(clone.predict(x), model.predict(x), rtol=1e-5)


def test_create_on_two_contexts_with_a_kvstore_trains_like_one():
    x, y = _blobs()
    it = mx.io.NDArrayIter(x, y, batch_size=30)
    mx.random.seed(0)
    one = mx.model.FeedForward.create(_net(), it, num_epoch=5, learning_rate=0.1,
                                      initializer=mx.init.Xavier())
    mx.random.seed(0)
    two = mx.model.FeedForward.create(_net(), it, ctx=[mx.cpu(0), mx.cpu(1)], num_epoch=5,
                                      kvstore=mx.kv.create("local"), learning_rate=0.1,
                                      initializer=mx.init.Xavier())
    for name, arr in one.arg_params.items():
        np.testing.assert_allclose(two.arg_params[name].asnumpy(), arr.asnumpy(), rtol=1e-4,
                                   atol=1e-5)
    assert two.score(it) > 0.95


def test_continues_from_given_params_and_epoch_size_counts_batches(caplog):
    x, y = _blobs()
    model = _model()
    model.fit(x, y)
    before = model.score(mx.io.NDArrayIter(x, y, batch_size=50))
    caplog.set_level(logging.INFO)
    more = mx.model.FeedForward(_net(), arg_params=model.arg_params, begin_epoch=10,
                                num_epoch=12, epoch_size=3, numpy_batch_size=15,
                                learning_rate=0.01)
    batches = []
    more.fit(x, y, batch_end_callback=lambda p: batches.append((p.epoch, p.nbatch)))
    assert batches == [(e, b) for e in (10, 11) for b in range(3)]
    assert more.score(mx.io.NDArrayIter(x, y, batch_size=50)) >= before - 0.02


def test_errors_name_what_is_wrong():
    x, y = _blobs()
    with pytest.raises(ValueError, match="y must be given"):
        _model().fit(x)
    with pytest.raises(ValueError, match="150 examples but y has 10 labels"):
        _model().fit(x, y[:10])
    with pytest.raises(MXNetError, match="num_epoch is not set"):
        mx.model.FeedForward(_net()).fit(x, y)
    with pytest.raises(MXNetError, match="no parameters yet"):
        _model().predict(x)
    with pytest.raises(TypeError, match="must be a Symbol or a callable"):
        mx.model.FeedForward("net")
