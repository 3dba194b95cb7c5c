"""mx.contrib.svrg_optimization: SVRGModule's full-gradient pass, update rule and fit."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.contrib.svrg_optimization import SVRGModule
from mxnext.contrib.svrg_optimization.svrg_optimizer import _SVRGOptimizer


def _linreg(n=10, batch_size=5, seed=0, **kw):
    rng = np.random.default_rng(seed)
    x = rng.integers(1, 5, (n, 2)).astype(np.float32)
    it = mx.io.NDArrayIter(x, x @ np.array([1.0, 2.0], np.float32), batch_size=batch_size,
                           label_name="lin_reg_label")
    fc = mx.sym.FullyConnected(mx.sym.Variable("data"), name="fc1", num_hidden=1)
    sym = mx.sym.LinearRegressionOutput(fc, mx.sym.Variable("lin_reg_label"), name="lro")
    mod = SVRGModule(sym, data_names=["data"], label_names=["lin_reg_label"], **kw)
    mod.bind(data_shapes=it.provide_data, label_shapes=it.provide_label)
    mod.init_params(initializer=mx.init.One())
    return it, mod


def test_full_gradient_is_the_mean_over_batches():
    it, mod = _linreg(update_freq=2)
    mod.init_optimizer(kvstore="local", optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.01),))
    mod._mod_aux.set_params(*mod.get_params())
    expect = np.zeros((1, 2), np.float32)
    for batch in it:
        mod.forward(batch, is_train=True)
        mod.backward()
        expect += mod._exec_group.grad_arrays[0][0].asnumpy()
    mod.update_full_grads(it)
    np.testing.assert_allclose(mod._param_dict[0]["fc1_weight"].asnumpy(), expect / 2,
                               rtol=1e-6)


def test_update_uses_the_svrg_gradient():
    it, mod = _linreg(update_freq=1)
    mod.init_optimizer(kvstore=None, optimizer="sgd",
                       optimizer_params=(("learning_rate", 0.1), ("rescale_grad", 1.0)))
    mod.update_full_grads(it)
    full = mod._param_dict[0]["fc1_weight"].asnumpy()
    it.reset()
    batch = next(iter(it))
    mod.forward_backward(batch)          # weights equal the snapshot: the two terms cancel
    w0 = mod.get_params()[0]["fc1_weight"].asnumpy()
    mod.update()
    np.testing.assert_allclose(mod.get_params()[0]["fc1_weight"].asnumpy(), w0 - 0.1 * full,
                               rtol=1e-5)


def test_fit_ends_where_mxnet_does():
    it, mod = _linreg(n=200, batch_size=20, update_freq=2)
    metric = mx.metric.create("mse")
    mod.fit(it, eval_metric=metric, optimizer="sgd", num_epoch=30,
            optimizer_params=(("learning_rate", 0.025),))
    # MXNet 1.9.1's SVRGModule, same data, init One, no shuffle: mse 0.000629222
    np.testing.assert_allclose(metric.get()[1], 0.000629222, rtol=1e-4)
    np.testing.assert_allclose(mod.get_params()[0]["fc1_weight"].asnumpy(),
                               [[0.98510665, 1.985294]], rtol=1e-5)
    np.testing.assert_allclose(mod.get_params()[0]["fc1_bias"].asnumpy(), [0.08429482],
                               rtol=1e-4)


def test_optimizer_routes_full_keys_to_assignment():
    opt = _SVRGOptimizer(default_optimizer="sgd", learning_rate=1.0,
                         param_idx2name={0: "w", 1: "w_full"})
    kv = mx.kv.create("local")
    kv.set_optimizer(opt)
    for key, init, push, expect in ((0, 0, 1, -1), (1, 1, 2, 2)):
        out = mx.nd.full((3,), init)
        kv.init(key, out)
        kv.push(key, mx.nd.full((3,), push))
        kv.pull(key, out)
        np.testing.assert_array_equal(out.asnumpy(), [expect] * 3)


def test_update_freq_must_be_a_positive_int():
    sym = mx.sym.FullyConnected(mx.sym.Variable("data"), num_hidden=1)
    with pytest.raises(TypeError, match="update_freq must be an integer"):
        SVRGModule(sym, label_names=None)
    with pytest.raises(ValueError, match="positive integer, got 0"):
        SVRGModule(sym, label_names=None, update_freq=0)


def test_fixed_parameters_keep_their_values():
    it, mod = _linreg(update_freq=1, fixed_param_names=["fc1_bias"])
    mod.set_params({"fc1_weight": mx.nd.ones((1, 2)), "fc1_bias": mx.nd.array([0.5])}, {})
    mod.fit(it, optimizer="sgd", num_epoch=2, eval_metric="mse",
            optimizer_params=(("learning_rate", 0.01),))
    params = mod.get_params()[0]
    np.testing.assert_array_equal(params["fc1_bias"].asnumpy(), [0.5])
    assert not np.allclose(params["fc1_weight"].asnumpy(), 1.0)
