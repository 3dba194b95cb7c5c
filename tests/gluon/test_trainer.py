"""gluon.Trainer: updates equal to the optimizers' formulas done by hand, gradients summed
over context copies through the KVStores, MXNet's rules for update_on_kvstore, stale
gradients, learning rates and the states file."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon

CTXS = [mx.cpu(0), mx.cpu(1)]


def _param(value, ctx=CTXS, name="w", **kwargs):
    p = gluon.Parameter(name, shape=np.shape(value), **kwargs)
    p.initialize(ctx=ctx, init="zeros")
    p.set_data(mx.nd.array(value))
    return p


def _backward(params, grads_per_ctx):
    """Writes ``grads_per_ctx[k]`` (one array per param) as the gradients on context k:
    ``backward`` of ``sum(w * g)``."""
    with autograd.record():
        outs = [sum((p.list_data()[k] * mx.nd.array(g, ctx=p.list_ctx()[k])).sum()
                    for p, g in zip(params, grads))
                for k, grads in enumerate(grads_per_ctx)]
    autograd.backward(outs)


def _values(p):
    return [d.asnumpy() for d in p.list_data()]


W0 = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]], np.float32)
G = [np.array([[0.1, 0.2, -0.3], [0.4, -0.5, 0.6]], np.float32),
     np.array([[1.0, -2.0, 0.5], [0.0, 0.3, -0.1]], np.float32)]


def _manual_sgd(w, grads, lr, momentum, wd, rescale, steps):
    mom = np.zeros_like(w, np.float64)
    w = w.astype(np.float64)
    for g in grads[:steps]:
        mom = momentum * mom - lr * (rescale * g + wd * w)
        w = w + mom
    return w


@pytest.mark.parametrize("kvstore,update_on_kvstore", [
    ("device", None), ("device", True), ("device", False), ("local", True), ("local", False)])
def test_sgd_steps_on_two_contexts_sum_their_gradients(kvstore, update_on_kvstore):
    p = _param(W0)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.9, "wd": 0.01},
                            kvstore=kvstore, update_on_kvstore=update_on_kvstore)
    summed = G[0] + G[1]
    for _ in range(3):
        _backward([p], [[G[0]], [G[1]]])
        trainer.step(4)
    expected = _manual_sgd(W0, [summed] * 3, 0.1, 0.9, 0.01, 1 / 4, 3)
    assert trainer._kvstore.type == kvstore
    assert trainer._update_on_kvstore is (update_on_kvstore is not False)
    for value in _values(p):
        np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-6)


def test_adam_steps_equal_the_formula_on_one_context_without_a_kvstore():
    p = _param(W0, ctx=[mx.cpu(0)])
    trainer = gluon.Trainer([p], "adam", {"learning_rate": 0.01, "beta1": 0.8, "beta2": 0.9})
    grads = [G[0], G[1], G[0] * 3]
    w, m, v = W0.astype(np.float64), 0.0, 0.0
    for t, g in enumerate(grads, start=1):
        _backward([p], [[g]])
        trainer.step(2)
        g = g / 2
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        w = w - 0.01 * np.sqrt(1 - 0.9 ** t) / (1 - 0.8 ** t) * m / (np.sqrt(v) + 1e-8)
    assert trainer._kvstore is None and trainer._update_on_kvstore is None
    np.testing.assert_allclose(_values(p)[0], w, rtol=1e-5, atol=1e-6)


def test_without_a_kvstore_each_context_updates_from_its_own_gradient():
    p = _param(W0)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, kvstore=None)
    _backward([p], [[G[0]], [G[1]]])
    trainer.step(1)
    for value, g in zip(_values(p), G):
        np.testing.assert_allclose(value, W0 - g, rtol=1e-6)


def test_parameters_start_equal_on_every_context_from_the_first_copy():
    p = _param(W0)
    p.list_data()[1][:] = 7.0      # the copies disagree: the broadcast makes them agree
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    _backward([p], [[G[0]], [G[1]]])
    trainer.step(1)
    for value in _values(p):
        np.testing.assert_allclose(value, W0 - G[0] - G[1], rtol=1e-6)


def test_allreduce_grads_then_update_and_their_refusal_on_the_kvstore():
    p = _param(W0)
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.5}, update_on_kvstore=False)
    _backward([p], [[G[0]], [G[1]]])
    trainer.allreduce_grads()
    for grad in p.list_grad():
        np.testing.assert_allclose(grad.asnumpy(), G[0] + G[1], rtol=1e-6)
    for grad in p.list_grad():                      # a transformation between the two
        grad[:] = grad * 2
    with pytest.raises(RuntimeError, match="summed by allreduce_grads.. already and step "
                                           "would sum them again"):
        trainer.step(2)
    trainer.update(2)
    for value in _values(p):
        np.testing.assert_allclose(value, W0 - 0.5 * (G[0] + G[1]), rtol=1e-6)
    _backward([p], [[G[0]], [G[1]]])
    trainer.step(1)                                 # after update, step is fine again

    on_kv = gluon.Trainer([_param(W0, name="v")], "sgd", update_on_kvstore=True)
    with pytest.raises(AssertionError, match=r"update\(\) when parameters are updated on "
                                             r"kvstore is not supported"):
        on_kv.update(1)
    with pytest.raises(AssertionError, match=r"allreduce_grads\(\) when parameters"):
        on_kv.allreduce_grads()


def test_stale_gradients_raise_and_ignore_stale_grad_skips_them():
    a, b = _param(W0, name="a"), _param(W0, name="b")
    trainer = gluon.Trainer([a, b], "sgd", {"learning_rate": 1.0})
    _backward([a, b], [[G[0], G[1]], [G[0], G[1]]])
    trainer.step(1)
    _backward([a], [[G[0]], [G[0]]])                  # b is not used this time
    before = _values(a)
    with pytest.raises(UserWarning, match=r"Gradient of Parameter `b` on context cpu\(0\) "
                                          r"has not been updated by backward"):
        trainer.step(1)
    assert all((x == y).all() for x, y in zip(_values(a), before))   # nothing applied
    b_before = _values(b)
    trainer.step(1, ignore_stale_grad=True)
    for value in _values(a):
        np.testing.assert_allclose(value, W0 - 4 * G[0], rtol=1e-5)
    assert all((x == y).all() for x, y in zip(_values(b), b_before))


def test_grad_req_null_parameters_are_left_alone():
    frozen = _param(W0, name="frozen", grad_req="null")
    p = _param(W0, name="p")
    trainer = gluon.Trainer([frozen, p], "sgd", {"learning_rate": 1.0})
    _backward([p], [[G[0]], [G[0]]])
    trainer.step(1)
    assert all((v == W0).all() for v in _values(frozen))
    np.testing.assert_allclose(_values(p)[0], W0 - 2 * G[0], rtol=1e-6)


def test_lr_mult_of_a_parameter_applies_as_it_changes():
    p = _param(W0, ctx=[mx.cpu(0)])
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    p.lr_mult = 0.5
    _backward([p], [[G[0]]])
    trainer.step(1)
    np.testing.assert_allclose(_values(p)[0], W0 - 0.5 * G[0], rtol=1e-6)


def test_learning_rate_set_and_scheduled():
    p = _param(W0, ctx=[mx.cpu(0)])
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 0.2})
    assert trainer.learning_rate == 0.2
    trainer.set_learning_rate(0.05)
    assert trainer.learning_rate == 0.05 and trainer.optimizer.lr == 0.05
    _backward([p], [[G[0]]])
    trainer.step(1)
    np.testing.assert_allclose(_values(p)[0], W0 - 0.05 * G[0], rtol=1e-6)

    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    q = _param(W0)
    trainer = gluon.Trainer([q], "sgd", {"lr_scheduler": sched}, update_on_kvstore=False)
    seen = []
    for _ in range(5):
        _backward([q], [[G[0]], [G[0]]])
        trainer.step(1)
        seen.append(trainer.learning_rate)
    assert seen == [1.0, 1.0, 0.5, 0.5, 0.25]
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer has already been"):
        trainer.set_learning_rate(0.1)


@pytest.mark.parametrize("update_on_kvstore", [True, False])
def test_save_and_load_states_continue_the_momentum(tmp_path, update_on_kvstore):
    def trainer_for(value):
        p = _param(value)
        return p, gluon.Trainer([p], "sgd", {"learning_rate": 0.1, "momentum": 0.9},
                                update_on_kvstore=update_on_kvstore)

    def steps(p, trainer, grads):
        for g in grads:
            _backward([p], [[g], [g]])
            trainer.step(1)

    first, trainer = trainer_for(W0)
    steps(first, trainer, G)
    trainer.save_states(tmp_path / "t.states")
    second, trainer = trainer_for(_values(first)[0])
    trainer.load_states(tmp_path / "t.states")
    steps(second, trainer, G)
    expected = _manual_sgd(W0, [2 * g for g in G + G], 0.1, 0.9, 0.0, 1.0, 4)
    for value in _values(second):
        np.testing.assert_allclose(value, expected, rtol=1e-5)
    # the optimizer came back from the file, and reads this trainer's parameters again
    assert isinstance(trainer.optimizer, mx.optimizer.SGD) and trainer.optimizer.momentum == 0.9
    assert trainer.optimizer.param_dict == dict(enumerate(trainer._params))
    assert [f.name for f in tmp_path.iterdir()] == ["t.states"]      # no temp file left


def test_load_states_refuses_a_file_that_is_not_optimizer_states(tmp_path):
    bad = tmp_path / "bad.states"
    bad.write_bytes(b"not a pickle")
    trainer = gluon.Trainer([_param(W0)], "sgd", update_on_kvstore=False)
    with pytest.raises(mx.MXNetError, match=r"Trainer.load_states: .*bad.states.*not a valid"):
        trainer.load_states(bad)


def test_a_store_without_optimizer_support_updates_here_and_refuses_update_on_kvstore():
    p = _param(W0)
    kv = mx.kv.create("teststore")
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, kvstore=kv)
    _backward([p], [[G[0]], [G[1]]])
    trainer.step(1)
    assert trainer._update_on_kvstore is False
    for value in _values(p):
        np.testing.assert_allclose(value, W0 - G[0] - G[1], rtol=1e-6)
    forced = gluon.Trainer([p], "sgd", kvstore=kv, update_on_kvstore=True)
    with pytest.raises(ValueError, match="Please set update_on_kvstore=False"):
        forced.step(1)


def test_mxnet_update_on_kvstore_environment_variable(monkeypatch):
    monkeypatch.setenv("MXNET_UPDATE_ON_KVSTORE", "0")
    trainer = gluon.Trainer([_param(W0)], "sgd")
    trainer.allreduce_grads()        # allowed: the update does not run on the store
    assert trainer._kvstore.type == "device" and trainer._update_on_kvstore is False
    explicit = gluon.Trainer([_param(W0, name="v")], "sgd", update_on_kvstore=True)
    explicit._init_kvstore()
    assert explicit._update_on_kvstore is True


def test_two_bit_compression_sums_the_quantized_gradients():
    p = _param(np.zeros((2, 2), np.float32))
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, update_on_kvstore=False,
                            compression_params={"type": "2bit", "threshold": 0.5})
    g = np.array([[0.7, -0.6], [0.2, -0.1]], np.float32)
    _backward([p], [[g], [g]])
    trainer.step(1)
    sent = np.array([[0.5, -0.5], [0.0, 0.0]], np.float32)       # each context's 2-bit code
    for value in _values(p):
        np.testing.assert_allclose(value, -2 * sent)


def test_parameter_dict_is_taken_in_sorted_key_order():
    params = {"b": _param(W0, name="b"), "a": _param(W0, name="a")}
    trainer = gluon.Trainer(params, "sgd")
    assert [p.name for p in trainer._params] == ["a", "b"]


def test_arguments_are_checked():
    p = _param(W0)
    with pytest.raises(ValueError, match="list or dict of Parameters, got <class 'str'>"):
        gluon.Trainer("w", "sgd")
    with pytest.raises(ValueError, match="got list of <class 'int'>"):
        gluon.Trainer([1], "sgd")
    with pytest.raises(ValueError, match=r"optimizer_params must be empty .* \['momentum'\]"):
        gluon.Trainer([p], mx.optimizer.SGD(), {"momentum": 0.9})
    with pytest.raises(TypeError, match="optimizer must be an Optimizer or the name"):
        gluon.Trainer([p], 3)
    with pytest.raises(ValueError, match=r"Parameter 'one' is initialized on \[cpu\(0\)\]"):
        gluon.Trainer([p, _param(W0, ctx=[mx.cpu(0)], name="one")], "sgd")
    with pytest.raises(TypeError, match="kvstore must be a KVStore, a KVStore type name"):
        gluon.Trainer([p], "sgd", kvstore=3).step(1)


@pytest.mark.parametrize("stype,grad_stype,given,chosen", [
    ("default", "row_sparse", None, False), ("default", "row_sparse", True, True),
    ("row_sparse", "row_sparse", None, True), ("row_sparse", "default", None, True)])
def test_row_sparse_parameters_follow_mxnets_update_on_kvstore_rules(stype, grad_stype, given,
                                                                      chosen):
    p = gluon.Parameter("w", shape=(2, 3), stype=stype, grad_stype=grad_stype)
    p.initialize(ctx=CTXS, init="zeros")
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0}, kvstore="local",
                            update_on_kvstore=given)
    rows = mx.nd.arange(2)

    def values():
        return p.list_data() if stype == "default" else p.list_row_sparse_data(rows)

    with autograd.record():
        ys = [(w * mx.nd.array(G[0], ctx=w.context)).sum() for w in values()]
    autograd.backward(ys)
    trainer.step(1)
    assert trainer._kvstore.type == "local"
    assert trainer._update_on_kvstore is chosen
    for value in values():
        np.testing.assert_allclose(value.asnumpy(), -2 * G[0], rtol=1e-6)


def test_a_row_sparse_weight_gets_a_kvstore_even_on_one_device():
    p = gluon.Parameter("w", shape=(2, 3), stype="row_sparse")
    p.initialize(ctx=[mx.cpu(0)], init="zeros")
    trainer = gluon.Trainer([p], "sgd", {"learning_rate": 1.0})
    with autograd.record():
        y = (p.row_sparse_data(mx.nd.arange(2)) * mx.nd.array(G[0])).sum()
    y.backward()
    trainer.step(1)
    assert trainer._kvstore.type == "device" and trainer._update_on_kvstore is True
    np.testing.assert_allclose(p.row_sparse_data(mx.nd.arange(2)).asnumpy(), -G[0])


def test_row_sparse_weights_refuse_updates_off_the_kvstore():
    p = gluon.Parameter("w", shape=(2, 3), stype="row_sparse")
    p.initialize(ctx=[mx.cpu(0)], init="zeros")
    trainer = gluon.Trainer([p], "sgd", update_on_kvstore=False)
    with pytest.raises(ValueError, match="Cannot set update_on_kvstore=False when sparse "
                                         "weights are present"):
        trainer.step(1)


def test_a_batch_split_over_two_contexts_trains_as_the_whole_batch_on_one():
    data = mx.nd.array(np.random.default_rng(3).uniform(-1, 1, (8, 5)))
    label = mx.nd.array([0, 1, 2, 0, 1, 2, 0, 1])
    loss_fn = gluon.loss.SoftmaxCrossEntropyLoss()

    def train(ctxs):
        net = gluon.nn.Dense(3, in_units=5, prefix="fc_")
        net.initialize(mx.init.Constant(0.1), ctx=ctxs)
        net.hybridize()
        trainer = gluon.Trainer(net.collect_params(), "adam", {"learning_rate": 0.1})
        for _ in range(3):
            xs = gluon.utils.split_and_load(data, ctxs)
            ys = gluon.utils.split_and_load(label, ctxs)
            with autograd.record():
                losses = [loss_fn(net(x), y) for x, y in zip(xs, ys)]
            autograd.backward(losses)
            trainer.step(8)
        return {k: [d.asnumpy() for d in p.list_data()]
                for k, p in net.collect_params().items()}

    whole, split = train([mx.cpu(0)]), train(CTXS)
    for name, (value,) in whole.items():
        for copy in split[name]:
            np.testing.assert_allclose(copy, value, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("update_on_kvstore,ctxs", [(True, CTXS), (False, CTXS[:1])])
def test_states_mxnet_1_9_1_saved_continue_training_as_there(update_on_kvstore, ctxs):
    # (on several contexts without the store, MXNet's copies count their updates apart and
    # a loaded count reaches only the first: not the case to compare)
    fixtures = Path(__file__).parent.parent / "fixtures" / "mxnet-1.9.1"
    expected = np.load(fixtures / "trainer-expected.npz")
    p = _param(expected["saved"], ctx=ctxs)
    trainer = gluon.Trainer([p], "adam", {"learning_rate": 0.5},
                            update_on_kvstore=update_on_kvstore)
    trainer.load_states(fixtures / "trainer-adam.states")
    assert (trainer.learning_rate, trainer.optimizer.wd) == (0.05, 0.01)
    grads = [expected["grad:2:0"], expected["grad:2:1"]]
    _backward([p], [[g] for g in grads] if len(ctxs) == 2 else [[grads[0] + grads[1]]])
    trainer.step(2)
    for value in _values(p):
        np.testing.assert_allclose(value, expected["after"], rtol=1e-5, atol=1e-6)
