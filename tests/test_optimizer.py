"""mx.optimizer and mx.lr_scheduler: each optimizer's steps against a numpy reference written
from the update rules, multipliers, multi-precision, the Updater and its saved states, the
registry, and the schedulers."""

import math
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest

import mxnext as mx

RNG = np.random.RandomState(7)
W0 = RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
GRADS = [RNG.uniform(-2, 2, (3, 4)).astype(np.float32) for _ in range(3)]


def run(name, grads=GRADS, dtype=np.float32, **kwargs):
    """The weight after ``len(grads)`` updates of index 0 through an Updater."""
    updater = mx.optimizer.get_updater(mx.optimizer.create(name, **kwargs))
    weight = mx.nd.array(W0, dtype=dtype)
    for g in grads:
        updater(0, mx.nd.array(g, dtype=dtype), weight)
    return weight.asnumpy(), updater


def clip(x, bound):
    return x if bound is None else np.clip(x, -bound, bound)


# -- numpy references, one function per optimizer: (w, grads, **hyper) -> w ------------------
def ref_sgd(w, grads, lr, momentum=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=None):
    mom = np.zeros_like(w)
    for g in grads:
        mom = momentum * mom - lr * (clip(rescale_grad * g, clip_gradient) + wd * w)
        w = w + mom
    return w


def ref_nag(w, grads, lr, momentum, wd=0.0, clip_gradient=None):
    mom = np.zeros_like(w)
    for g in grads:
        step = lr * (clip(g, clip_gradient) + wd * w)
        mom = momentum * mom - step
        w = w + momentum * mom - step
    return w


def ref_signum(w, grads, lr, momentum, wd=0.0, wd_lh=0.0):
    mom = np.zeros_like(w)
    for g in grads:
        if momentum:
            mom = momentum * mom - (1 - momentum) * (g + wd * w)
            w = (1 - lr * wd_lh) * w + lr * np.sign(mom)
        else:
            w = (1 - lr * wd) * w - lr * np.sign(g)
    return w


def ref_adam(w, grads, lr, wd=0.0, clip_gradient=None, beta1=0.9, beta2=0.999, eps=1e-8):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = clip(g + wd * w, clip_gradient)
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        w = w - lr * math.sqrt(1 - beta2 ** t) / (1 - beta1 ** t) * m / (np.sqrt(v) + eps)
    return w


def ref_adagrad(w, grads, lr, wd=0.0, eps=1e-7):
    hist = np.zeros_like(w)
    for g in grads:
        hist += g * g
        w = w - lr * (g / np.sqrt(hist + eps) + wd * w)
    return w


def ref_rmsprop(w, grads, lr, wd=0.0, gamma1=0.9, eps=1e-8, clip_weights=None):
    n = np.zeros_like(w)
    for g in grads:
        g = g + wd * w
        n = (1 - gamma1) * g * g + gamma1 * n
        w = clip(w - lr * g / np.sqrt(n + eps), clip_weights)
    return w


def ref_rmsprop_centered(w, grads, lr, wd=0.0, gamma1=0.9, gamma2=0.9, eps=1e-8):
    n, mg, delta = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        g = g + wd * w
        n = (1 - gamma1) * g * g + gamma1 * n
        mg = (1 - gamma1) * g + gamma1 * mg
        delta = gamma2 * delta - lr * g / np.sqrt(n - mg * mg + eps)
        w = w + delta
    return w


def ref_adadelta(w, grads, wd=0.0, rho=0.9, eps=1e-5):
    acc_g, acc_d = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        acc_g = rho * acc_g + (1 - rho) * g * g
        d = np.sqrt(acc_d + eps) / np.sqrt(acc_g + eps) * g
        acc_d = rho * acc_d + (1 - rho) * d * d
        w = w - (d + wd * w)
    return w


def ref_ftrl(w, grads, lr, lamda1, wd=0.0, beta=1.0):
    z, n = np.zeros_like(w), np.zeros_like(w)
    for g in grads:
        z = z + g - (np.sqrt(n + g * g) - np.sqrt(n)) * w / lr
        n = n + g * g
        w = (np.sign(z) * lamda1 - z) / ((beta + np.sqrt(n)) / lr + wd) * (np.abs(z) > lamda1)
    return w


def ref_ftml(w, grads, lr, wd=0.0, beta1=0.6, beta2=0.999, eps=1e-8):
    d, v, z = np.zeros_like(w), np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        v = beta2 * v + (1 - beta2) * g * g
        d_t = (1 - beta1 ** t) / lr * (np.sqrt(v / (1 - beta2 ** t)) + eps)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * w
        d = d_t
        w = -z / d
    return w


def ref_adamax(w, grads, lr, wd=0.0, beta1=0.9, beta2=0.999):
    m, u = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        m = beta1 * m + (1 - beta1) * g
        u = np.maximum(beta2 * u, np.abs(g))
        w = w - lr / (1 - beta1 ** t) * m / u
    return w


def ref_nadam(w, grads, lr, wd=0.0, beta1=0.9, beta2=0.999, eps=1e-8, decay=0.004):
    m, v, sched = np.zeros_like(w), np.zeros_like(w), 1.0
    for t, g in enumerate(grads, 1):
        g = g + wd * w
        mu_t = beta1 * (1 - 0.5 * 0.96 ** (t * decay))
        mu_next = beta1 * (1 - 0.5 * 0.96 ** ((t + 1) * decay))
        sched *= mu_t
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        m_bar = (1 - mu_t) * g / (1 - sched) + mu_next * m / (1 - sched * mu_next)
        w = w - lr * m_bar / (np.sqrt(v / (1 - beta2 ** t)) + eps)
    return w


def ref_lamb(w, grads, lr, wd=0.0, beta1=0.9, beta2=0.999, eps=1e-6, lower=None, upper=None):
    m, v = np.zeros_like(w), np.zeros_like(w)
    for t, g in enumerate(grads, 1):
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        step = (m / (1 - beta1 ** t)) / (np.sqrt(v / (1 - beta2 ** t)) + eps) + wd * w
        r1 = np.clip(np.linalg.norm(w), lower or 0, upper or np.inf)
        r2 = np.linalg.norm(step)
        w = w - lr * (r1 / r2 if r1 and r2 else 1.0) * step
    return w


def ref_dcasgd(w, grads, lr, momentum=0.0, wd=0.0, lamda=0.04):
    mom, prev = np.zeros_like(w), w.copy()
    for g in grads:
        step = -lr * (g + wd * w + lamda * g * g * (w - prev))
        mom = momentum * mom + step
        prev = w
        w = w + mom
    return w


def ref_lars(w, grads, lr, momentum, wd, eta, name="fc_weight"):
    mom = np.zeros_like(w)
    for g in grads:
        rate = lr
        if not name.endswith("bias"):
            wn, gn = np.linalg.norm(w), np.linalg.norm(g)
            rate = lr * eta * wn / (gn + wd * wn)
        mom = momentum * mom - rate * (g + wd * w)
        w = w + mom
    return w


CASES = [
    ("sgd", dict(learning_rate=0.1, wd=0.01), ref_sgd, dict(lr=0.1, wd=0.01)),
    ("sgd", dict(learning_rate=0.1, momentum=0.9, wd=0.02, rescale_grad=0.5, clip_gradient=0.6),
     ref_sgd, dict(lr=0.1, momentum=0.9, wd=0.02, rescale_grad=0.5, clip_gradient=0.6)),
    ("ccsgd", dict(learning_rate=0.1, momentum=0.5), ref_sgd, dict(lr=0.1, momentum=0.5)),
    # wd=0 for NAG: MXNet's in-place kernel reads the new weight for the wd term (see docs)
    ("nag", dict(learning_rate=0.1, momentum=0.9, clip_gradient=1.0), ref_nag,
     dict(lr=0.1, momentum=0.9, clip_gradient=1.0)),
    ("nag", dict(learning_rate=0.1, wd=0.1), ref_sgd, dict(lr=0.1, wd=0.1)),
    ("signum", dict(learning_rate=0.1, momentum=0.9, wd=0.01, wd_lh=0.02), ref_signum,
     dict(lr=0.1, momentum=0.9, wd=0.01, wd_lh=0.02)),
    ("signum", dict(learning_rate=0.1, momentum=0.0, wd=0.05), ref_signum,
     dict(lr=0.1, momentum=0.0, wd=0.05)),
    ("adam", dict(learning_rate=0.05, wd=0.01, clip_gradient=1.5), ref_adam,
     dict(lr=0.05, wd=0.01, clip_gradient=1.5)),
    ("adagrad", dict(learning_rate=0.1, wd=0.01), ref_adagrad, dict(lr=0.1, wd=0.01)),
    ("rmsprop", dict(learning_rate=0.01, wd=0.01, clip_weights=0.8), ref_rmsprop,
     dict(lr=0.01, wd=0.01, clip_weights=0.8)),
    ("rmsprop", dict(learning_rate=0.01, wd=0.01, centered=True), ref_rmsprop_centered,
     dict(lr=0.01, wd=0.01)),
    ("adadelta", dict(wd=0.01), ref_adadelta, dict(wd=0.01)),
    ("ftrl", dict(learning_rate=0.1, lamda1=0.05, wd=0.01), ref_ftrl,
     dict(lr=0.1, lamda1=0.05, wd=0.01)),
    ("ftml", dict(learning_rate=0.1, wd=0.01), ref_ftml, dict(lr=0.1, wd=0.01)),
    ("adamax", dict(learning_rate=0.1, wd=0.01), ref_adamax, dict(lr=0.1, wd=0.01)),
    ("nadam", dict(learning_rate=0.1, wd=0.01), ref_nadam, dict(lr=0.1, wd=0.01)),
    ("lamb", dict(learning_rate=0.1, wd=0.01), ref_lamb, dict(lr=0.1, wd=0.01)),
    ("lamb", dict(learning_rate=0.1, lower_bound=2.5, upper_bound=3.0), ref_lamb,
     dict(lr=0.1, lower=2.5, upper=3.0)),
    ("dcasgd", dict(learning_rate=0.1, momentum=0.9, wd=0.01), ref_dcasgd,
     dict(lr=0.1, momentum=0.9, wd=0.01)),
    ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, eta=0.01,
                  param_idx2name={0: "fc_weight"}, momentum_correction=False), ref_lars,
     dict(lr=0.1, momentum=0.9, wd=0.01, eta=0.01)),
    ("lars", dict(learning_rate=0.1, momentum=0.9, wd=0.01, param_idx2name={0: "fc_bias"}),
     ref_lars, dict(lr=0.1, momentum=0.9, wd=0.0, eta=0.01, name="fc_bias")),
]


@pytest.mark.parametrize("name,kwargs,ref,hyper", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_steps_match_numpy_reference(name, kwargs, ref, hyper):
    got, _ = run(name, **kwargs)
    want = ref(W0.astype(np.float64), [g.astype(np.float64) for g in GRADS], **hyper)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name,kwargs", [
    ("sgd", dict(momentum=0.9)), ("sgd", {}), ("nag", dict(momentum=0.9)),
    ("adam", {}), ("lamb", {}), ("adamax", {}), ("rmsprop", dict(centered=True))])
def test_multi_precision_runs_on_a_float32_master_copy(name, kwargs):
    kwargs = dict(learning_rate=0.05, wd=0.01, **kwargs)
    want, _ = run(name, **kwargs)
    got, updater = run(name, dtype=np.float16, multi_precision=True, **kwargs)
    assert got.dtype == np.float16
    master = updater.states[0][1 if name in ("sgd", "nag") else 0]
    assert master.dtype == np.float32
    # the fp16 weight is the master copy rounded; the master tracks the fp32 run (its inputs
    # rounded to fp16 once)
    np.testing.assert_array_equal(got, master.asnumpy().astype(np.float16))
    np.testing.assert_allclose(master.asnumpy(), want, rtol=2e-3, atol=2e-3)


def test_sgd_multi_precision_state_order_and_float16_warning():
    w16 = mx.nd.array(W0, dtype="float16")
    mom, master = mx.optimizer.SGD(momentum=0.9, multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert mom.dtype == master.dtype == np.float32
    np.testing.assert_array_equal(master.asnumpy(), W0.astype(np.float16).astype(np.float32))
    master, (mean, var) = mx.optimizer.Adam(multi_precision=True) \
        .create_state_multi_precision(0, w16)
    assert master.dtype == mean.dtype == np.float32
    with pytest.warns(UserWarning, match="multi_precision=True"):
        mx.optimizer.SGD().create_state_multi_precision(0, w16)


def test_list_updates_equal_single_updates_and_group_by_dtype():
    """SGD's Updater aggregates lists (multi_sgd_mom_update) in batches of aggregate_num."""
    opt = mx.optimizer.SGD(learning_rate=0.1, momentum=0.9, wd=0.01)
    opt.aggregate_num = 2
    updater = mx.optimizer.get_updater(opt)
    weights = [mx.nd.array(W0 * (i + 1), dtype=dt)
               for i, dt in enumerate(["float32"] * 3 + ["float64"])]
    for g in GRADS:
        updater([0, 1, 2, 3], [mx.nd.array(g * (i + 1), dtype=w.dtype)
                               for i, w in enumerate(weights)], weights)
    for i, w in enumerate(weights):
        want = ref_sgd(W0 * (i + 1.0), [g * (i + 1.0) for g in GRADS], lr=0.1, momentum=0.9,
                       wd=0.01)
        np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)
    assert opt._index_update_count == {0: 3, 1: 3, 2: 3, 3: 3}
    assert opt.num_update == 3


def test_sgld_noise_is_seeded_and_has_variance_lr():
    w0 = np.zeros((200, 200), np.float32)
    g = np.ones_like(w0)

    def step(seed):
        mx.random.seed(seed)
        w = mx.nd.array(w0)
        mx.optimizer.SGLD(learning_rate=0.04).update(0, w, mx.nd.array(g), None)
        return w.asnumpy()

    a, b = step(3), step(3)
    np.testing.assert_array_equal(a, b)
    noise = a - (-0.04 / 2 * g)
    assert abs(noise.mean()) < 0.01
    assert abs(noise.std() - 0.2) < 0.01


def test_test_optimizer_and_adadelta_rescale_in_place():
    opt = mx.optimizer.create("test", rescale_grad=0.5)
    w, g = mx.nd.array(W0), mx.nd.array(GRADS[0])
    state = opt.create_state(0, w)
    opt.update(0, w, g, state)
    np.testing.assert_allclose(w.asnumpy(), W0 + 0.5 * GRADS[0], rtol=1e-6)
    np.testing.assert_array_equal(state.asnumpy(), w.asnumpy())


def test_group_adagrad_keeps_one_history_per_row():
    opt = mx.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, clip_gradient=1.5)
    assert type(mx.optimizer.create("groupadagrad")) is mx.optimizer.contrib.GroupAdaGrad
    w = mx.nd.array(W0)
    state = opt.create_state(0, w)
    assert state.shape == (3, 1)
    want, hist = W0.astype(np.float64), np.zeros((3, 1))
    for g in GRADS:
        opt.update(0, w, mx.nd.array(g), state)
        g = np.clip(g, -1.5, 1.5)
        hist += (g * g).mean(axis=1, keepdims=True)
        want = want - 0.1 * g / np.sqrt(hist + 1e-5)
    np.testing.assert_allclose(w.asnumpy(), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(ValueError, match="2 dimensions"):
        opt.create_state(0, mx.nd.ones((2, 2, 2)))
    with pytest.raises(ValueError, match="weight decay is not supported"):
        mx.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, w, w, state)


# -- learning rate, multipliers, counts --------------------------------------------------
def test_learning_rate_and_scheduler_interplay():
    opt = mx.optimizer.Optimizer(learning_rate=0.01)
    opt.set_learning_rate(0.2)
    assert opt.learning_rate == 0.2
    assert mx.optimizer.Optimizer().learning_rate == 0.01
    sched = mx.lr_scheduler.FactorScheduler(step=1)
    with pytest.warns(UserWarning, match="overwritten"):
        opt = mx.optimizer.Optimizer(lr_scheduler=sched, learning_rate=0.3)
    assert sched.base_lr == 0.3 and opt.learning_rate == 0.3
    with pytest.raises(UserWarning, match="LRScheduler of the optimizer"):
        opt.set_learning_rate(0.5)
    opt = mx.optimizer.Optimizer(lr_scheduler=mx.lr_scheduler.FactorScheduler(2, base_lr=8))
    assert opt.learning_rate == 8


def test_scheduler_drives_the_rate_by_num_update():
    sched = mx.lr_scheduler.FactorScheduler(step=2, factor=0.5, base_lr=1.0)
    opt = mx.optimizer.SGD(lr_scheduler=sched)
    rates = []
    for _ in range(6):
        opt._update_count(0)
        rates.append(opt._get_lr(0))
    assert rates == [1.0, 1.0, 0.5, 0.5, 0.25, 0.25]


def test_update_counts_begin_num_update_and_devices():
    opt = mx.optimizer.Optimizer(begin_num_update=10)
    opt._update_count([0, 1])
    opt._update_count(0)
    assert opt._index_update_count == {0: 12, 1: 11} and opt.num_update == 12
    opt._set_current_context(1)
    opt._update_count(0)
    assert opt._index_update_count == {0: 11} and opt.num_update == 12
    opt._set_current_context(0)
    assert opt._index_update_count[0] == 12


def test_wd_is_zero_for_named_non_weights_and_mults_by_name_or_index():
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta", 4: "other"}
    opt = mx.optimizer.Optimizer(wd=0.1, learning_rate=1.0, param_idx2name=names)
    assert opt.wd_mult == {"fc_bias": 0.0, "bn_beta": 0.0, "other": 0.0}
    assert [opt._get_wd(i) for i in range(6)] == [0.1, 0.0, 0.1, 0.0, 0.0, 0.1]
    opt.set_lr_mult({"fc_weight": 0.5, 5: 3.0})
    opt.set_wd_mult({"fc_bias": 2.0})
    assert opt._get_lrs([0, 1, 5]) == [0.5, 1.0, 3.0]
    assert opt._get_wd(1) == pytest.approx(0.2)
    lars = mx.optimizer.LARS(wd=0.1, param_idx2name=names)
    assert lars.wd_mult["bn_gamma"] == 0.0


def test_symbol_lr_mult_and_wd_mult_attributes():
    data = mx.sym.Variable("data")
    bias = mx.sym.Variable("fc1_bias", lr_mult=1.0)
    fc1 = mx.sym.FullyConnected(data=data, bias=bias, name="fc1", num_hidden=10, lr_mult=0)
    fc2 = mx.sym.FullyConnected(data=fc1, name="fc2", num_hidden=10, wd_mult=0.5)
    names = dict(enumerate(fc2.list_arguments()))
    opt = mx.optimizer.SGD(sym=fc2, param_idx2name=names, wd=1.0)
    assert opt.lr_mult == {"fc1_bias": 1.0, "fc1_weight": 0.0}
    assert opt.wd_mult == {"data": 0.0, "fc1_bias": 0.0, "fc2_bias": 0.5, "fc2_weight": 0.5}
    assert opt._get_lr(1) == 0.0 and opt._get_wd(4) == 0.5


def test_param_dict_wins_and_is_not_pickled():
    class Param:
        lr_mult, wd_mult = 4.0, 0.25

    opt = mx.optimizer.SGD(learning_rate=0.5, wd=0.4, param_dict={0: Param()})
    opt.set_lr_mult({0: 100.0})
    assert opt._get_lr(0) == 2.0 and opt._get_wd(0) == 0.1
    clone = pickle.loads(pickle.dumps(opt))
    assert clone.param_dict == {} and clone._get_lr(0) == 50.0


# -- registry ---------------------------------------------------------------------------
def test_create_is_case_insensitive_and_unknown_names_fail():
    assert type(mx.optimizer.create("AdaM", learning_rate=0.1)) is mx.optimizer.Adam
    assert mx.optimizer.create("sgd", momentum=0.3).momentum == 0.3
    assert mx.opt.create is mx.optimizer.Optimizer.create_optimizer
    with pytest.raises(ValueError, match="Cannot find optimizer nosuch"):
        mx.optimizer.create("nosuch")
    with pytest.raises(TypeError):
        mx.optimizer.register(lambda: None)
    with pytest.raises(TypeError):
        mx.optimizer.Optimizer(param_idx2name=["a"])


def test_register_new_and_override_with_warning():
    reg = mx.optimizer.Optimizer.opt_registry
    saved = dict(reg)
    try:
        @mx.optimizer.register
        class HalfStep(mx.optimizer.Optimizer):
            def update(self, index, weight, grad, state):
                weight[:] -= 0.5 * grad

        w = mx.nd.ones((2,))
        mx.optimizer.get_updater(mx.optimizer.create("halfstep"))(0, mx.nd.ones((2,)), w)
        assert w.asnumpy().tolist() == [0.5, 0.5]
        with pytest.warns(UserWarning, match="is overriding existing optimizer"):
            mx.optimizer.register(type("HalfStep", (mx.optimizer.Optimizer,), {}))
    finally:
        reg.clear()
        reg.update(saved)


# -- Updater ----------------------------------------------------------------------------
def test_updater_states_round_trip_through_pickle():
    _, updater = run("adam", learning_rate=0.1)
    blob = updater.get_states()
    fresh = mx.optimizer.get_updater(mx.optimizer.Adam(learning_rate=0.1))
    fresh.set_states(blob)
    assert fresh.states_synced == {0: False}
    for a, b in zip(updater.states[0], fresh.states[0]):
        np.testing.assert_array_equal(a.asnumpy(), b.asnumpy())
    # continuing from loaded states equals continuing the original
    w1, w2 = mx.nd.array(W0), mx.nd.array(W0)
    fresh.optimizer._index_update_count[0] = 3
    updater(0, mx.nd.array(GRADS[0]), w1)
    fresh(0, mx.nd.array(GRADS[0]), w2)
    np.testing.assert_array_equal(w1.asnumpy(), w2.asnumpy())
    assert fresh.states_synced == {0: True}


def test_updater_dump_optimizer_restores_it():
    _, updater = run("sgd", learning_rate=0.3, momentum=0.9)
    other = mx.optimizer.get_updater(mx.optimizer.SGD())
    other.set_states(updater.get_states(dump_optimizer=True))
    assert isinstance(other.optimizer, mx.optimizer.SGD)
    assert other.optimizer.lr == 0.3 and other.optimizer.momentum == 0.9
    assert other.optimizer.num_update == 3


def test_updater_bytes_index_and_sync_state_context():
    updater = mx.optimizer.get_updater(mx.optimizer.SGD(momentum=0.9))
    updater(b"w", mx.nd.ones((2,)), mx.nd.ones((2,)))
    assert list(updater.states) == ["w"]
    state = (mx.nd.ones((2,)), [mx.nd.zeros((1,)), None], 3)
    synced = updater.sync_state_context(state, mx.cpu(1))
    assert isinstance(synced, tuple) and isinstance(synced[1], list)
    assert synced[0].context == mx.cpu(1) and synced[1][0].context == mx.cpu(1)
    assert synced[1][1] is None and synced[2] == 3


# -- schedulers -------------------------------------------------------------------------
def test_factor_scheduler():
    s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=1.0, stop_factor_lr=0.2)
    assert [s(n) for n in (1, 10, 11, 21, 31, 80)] == [1.0, 1.0, 0.5, 0.25, 0.2, 0.2]
    s = mx.lr_scheduler.FactorScheduler(step=10, factor=0.5, base_lr=1.0)
    assert s(35) == 0.125  # resumed late: catches up every step at once


def test_multifactor_scheduler_with_warmup():
    s = mx.lr_scheduler.MultiFactorScheduler([5, 10], factor=0.1, base_lr=1.0, warmup_steps=4,
                                             warmup_begin_lr=0.2)
    assert [s(n) for n in range(4)] == pytest.approx([0.2, 0.4, 0.6, 0.8])
    assert [s(n) for n in (4, 5, 6, 10, 11, 50)] == pytest.approx([1, 1, .1, .1, .01, .01])


def test_poly_and_cosine_schedulers():
    p = mx.lr_scheduler.PolyScheduler(max_update=10, base_lr=1.0, pwr=2, final_lr=0.1,
                                      warmup_steps=2, warmup_mode="constant",
                                      warmup_begin_lr=0.05)
    assert p(0) == p(1) == 0.05
    assert p(2) == 1.0
    assert p(6) == pytest.approx(0.1 + 0.9 * 0.5 ** 2)
    assert p(10) == pytest.approx(0.1) and p(20) == pytest.approx(0.1)
    c = mx.lr_scheduler.CosineScheduler(max_update=8, base_lr=2.0, final_lr=0.5)
    assert c(0) == 2.0 and c(4) == pytest.approx(1.25) and c(8) == pytest.approx(0.5)
    assert c(100) == pytest.approx(0.5)


@pytest.mark.parametrize("make,match", [
    (lambda: mx.lr_scheduler.FactorScheduler(step=0), "greater or equal than 1"),
    (lambda: mx.lr_scheduler.FactorScheduler(step=2, factor=1.5), "no more than 1"),
    (lambda: mx.lr_scheduler.MultiFactorScheduler([3, 3]), "increasing"),
    (lambda: mx.lr_scheduler.PolyScheduler(0), "strictly positive"),
    (lambda: mx.lr_scheduler.CosineScheduler(5, base_lr=0.1, warmup_begin_lr=0.5),
     "higher than warmup_begin_lr"),
    (lambda: mx.lr_scheduler.LRScheduler(warmup_mode="cubic"), "linear and constant"),
    (lambda: mx.lr_scheduler.LRScheduler(warmup_steps=-1), "positive or 0"),
])
def test_scheduler_argument_errors(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_base_scheduler_must_be_overridden():
    with pytest.raises(NotImplementedError):
        mx.lr_scheduler.LRScheduler()(1)


# -- module wiring ----------------------------------------------------------------------
def test_optimizer_modules_load_lazily():
    code = ("import sys, mxnext as mx; "
            "print(any(m in sys.modules for m in ('mxnext.optimizer', 'mxnext.lr_scheduler'))); "
            "print(mx.opt is mx.optimizer is sys.modules['mxnext.optimizer'], "
            "mx.lr_scheduler is sys.modules['mxnext.lr_scheduler'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True"]


def test_no_warnings_in_plain_float32_use():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        run("sgd", momentum=0.9)
        run("adam")


def test_compare_optimizer_of_test_utils():
    from mxnext.test_utils import compare_optimizer
    compare_optimizer(mx.optimizer.SGD(learning_rate=0.1, momentum=0.9),
                      mx.optimizer.NAG(learning_rate=0.1, momentum=0.9), (3, 4), np.float32,
                      compare_states=False, atol=1.0)
    with pytest.raises(AssertionError):
        compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.2),
                          (3, 4), np.float32)
    shapes = [(2, 3), (4,), (5, 1)]
    compare_optimizer(mx.optimizer.LAMB(), mx.optimizer.LAMB(), shapes, np.float32, ntensors=3)
    # a row_sparse gradient takes the storage fallback: plain SGD agrees with the dense one
    compare_optimizer(mx.optimizer.SGD(learning_rate=0.1), mx.optimizer.SGD(learning_rate=0.1),
                      (3, 4), np.float32, g_stype="row_sparse")
