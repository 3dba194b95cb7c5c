"""BatchNorm (and BatchNorm_v1, SyncBatchNorm): training/inference statistics, fix_gamma,
use_global_stats, axis, gradients, moving-statistic updates by the backward pass, inference
and dtypes."""

import numpy as np
import pytest
from opsdk.testing import check_backward, eval_gradients, infer, op_def, parse, run_op

RNG = np.random.default_rng(0)
X = RNG.standard_normal((4, 3, 5, 2)) * 2 + 1
GAMMA, BETA = RNG.uniform(0.5, 2, 3), RNG.standard_normal(3)
MM, MV = RNG.standard_normal(3) * 0.1, RNG.uniform(0.5, 2, 3)
AXES = (0, 2, 3)


def bn_ref(x, gamma, beta, mean, var, eps, bc=(1, -1, 1, 1)):
    return (x - mean.reshape(bc)) / np.sqrt(var.reshape(bc) + eps) * gamma.reshape(bc) \
        + beta.reshape(bc)


def inputs():
    return [X.copy(), GAMMA.copy(), BETA.copy(), MM.copy(), MV.copy()]


@pytest.mark.parametrize("fix_gamma", [False, True])
def test_training_uses_batch_statistics(fix_gamma):
    kw = {"fix_gamma": fix_gamma, "output_mean_var": True, "eps": 1e-3}
    mean, var = X.mean(axis=AXES), X.var(axis=AXES)
    gamma = np.ones(3) if fix_gamma else GAMMA
    out = run_op("BatchNorm", inputs(), kw)
    np.testing.assert_allclose(out[0], bn_ref(X, gamma, BETA, mean, var, 1e-3), rtol=1e-10)
    np.testing.assert_allclose(out[1], mean, rtol=1e-12)
    np.testing.assert_allclose(out[2], 1 / np.sqrt(var + 1e-3), rtol=1e-12)   # inverse std


@pytest.mark.parametrize("kw, train", [({}, False), ({"use_global_stats": True}, True)])
def test_moving_statistics_at_inference_or_with_global_stats(kw, train):
    kw = {**kw, "fix_gamma": False}
    out = run_op("BatchNorm", inputs(), kw, is_train=train)
    np.testing.assert_allclose(out[0], bn_ref(X, GAMMA, BETA, MM, MV, 1e-3), rtol=1e-10)
    gy = RNG.standard_normal(X.shape)
    p = parse(op_def("BatchNorm"), kw)
    g = run_op("_backward_BatchNorm", [gy, out[1], out[2], X, GAMMA, MM.copy(), MV.copy()], p,
               is_train=train)
    inv = 1 / np.sqrt(MV + 1e-3)
    np.testing.assert_allclose(g[0], gy * (inv * GAMMA).reshape(1, -1, 1, 1), rtol=1e-10)


def test_channel_axis_last():
    x = RNG.standard_normal((3, 4, 2))
    kw = {"axis": -1, "fix_gamma": False, "eps": 1e-5}
    want = bn_ref(x, GAMMA[:2], BETA[:2], x.mean(axis=(0, 1)), x.var(axis=(0, 1)), 1e-5,
                  bc=(1, 1, -1))
    out = run_op("BatchNorm", [x, GAMMA[:2], BETA[:2], MM[:2], MV[:2]], kw)[0]
    np.testing.assert_allclose(out, want, rtol=1e-10)


def test_training_gradients():
    kw = {"fix_gamma": False, "eps": 1e-3}
    gy = RNG.standard_normal(X.shape)
    mean, var = X.mean(axis=AXES, keepdims=True), X.var(axis=AXES, keepdims=True)
    xhat = (X - mean) / np.sqrt(var + 1e-3)
    g = GAMMA.reshape(1, -1, 1, 1)
    n = X.size / 3
    gx = g / np.sqrt(var + 1e-3) * (gy - gy.sum(axis=AXES, keepdims=True) / n
                                    - xhat * (gy * xhat).sum(axis=AXES, keepdims=True) / n)
    grads = check_backward("BatchNorm", inputs(), [gy],
                           [gx, (gy * xhat).sum(axis=AXES), gy.sum(axis=AXES)], kw,
                           rtol=1e-9, atol=1e-10)
    assert grads[3] is None and grads[4] is None            # auxiliary states: no gradient
    fixed = check_backward("BatchNorm", inputs(), [gy], [None, np.zeros(3), None],
                           {"fix_gamma": True})
    assert fixed[1].shape == (3,)


def test_backward_of_a_training_step_updates_the_moving_statistics():
    kw = {"fix_gamma": False, "momentum": 0.8}
    arrays = inputs()
    run_op("BatchNorm", arrays, kw)
    np.testing.assert_array_equal(arrays[3], MM)           # the forward leaves them alone
    eval_gradients("BatchNorm", arrays, [np.ones(X.shape)], kw)
    np.testing.assert_allclose(arrays[3], 0.8 * MM + 0.2 * X.mean(axis=AXES), rtol=1e-10)
    np.testing.assert_allclose(arrays[4], 0.8 * MV + 0.2 * X.var(axis=AXES), rtol=1e-8)
    for kw, train in (({"use_global_stats": True}, True), ({}, False)):
        arrays = inputs()
        outs = run_op("BatchNorm", arrays, kw, is_train=train)
        p = parse(op_def("BatchNorm"), kw)
        run_op("_backward_BatchNorm", [np.ones(X.shape), outs[1], outs[2], X, GAMMA,
                                       arrays[3], arrays[4]], p, is_train=train)
        np.testing.assert_array_equal(arrays[3], MM)
        np.testing.assert_array_equal(arrays[4], MV)


def test_names_outputs_aux_and_inference():
    opdef = op_def("BatchNorm")
    p = parse(opdef, {})
    assert p.eps == 1e-3 and p.momentum == 0.9 and p.fix_gamma is True
    assert opdef.list_input_names(p) == ["data", "gamma", "beta", "moving_mean", "moving_var"]
    assert opdef.list_output_names(p) == ["output", "mean", "var"]
    assert opdef.mutate_inputs(p) == [3, 4]
    assert opdef.num_visible_outputs(p) == 1
    assert opdef.num_visible_outputs(parse(opdef, {"output_mean_var": "True"})) == 3
    ins, outs, tins, touts = infer(opdef, p, [(8, 16, 4, 4)] + [None] * 4,
                                   ["float16"] + [None] * 4)
    assert ins[1:] == [(16,)] * 4 and outs == [(8, 16, 4, 4), (16,), (16,)]
    assert [t.name for t in tins] == ["float16"] + ["float32"] * 4
    assert [t.name for t in touts] == ["float16", "float32", "float32"]


def test_float16_data_with_float32_parameters():
    x = X.astype(np.float16)
    out = run_op("BatchNorm", [x, GAMMA.astype(np.float32), BETA.astype(np.float32),
                               MM.astype(np.float32), MV.astype(np.float32)],
                 {"fix_gamma": False})
    assert out[0].dtype == np.float16 and out[1].dtype == np.float32
    want = bn_ref(x.astype(np.float64), GAMMA, BETA, x.astype(np.float64).mean(axis=AXES),
                  x.astype(np.float64).var(axis=AXES), 1e-3)
    np.testing.assert_allclose(out[0], want, rtol=1e-2, atol=1e-2)


# -- BatchNorm_v1 and _contrib_SyncBatchNorm: axis 1, the variance as output 2 -------------
V1_OPS = [("BatchNorm_v1", {}), ("_contrib_SyncBatchNorm", {"key": "bn0"})]


def kw_bn(kw):
    """``kw`` for BatchNorm (which takes no ``key``)."""
    return {k: v for k, v in kw.items() if k != "key"}


@pytest.mark.parametrize("op, extra", V1_OPS)
def test_v1_and_sync_output_the_variance_and_update_with_it(op, extra):
    kw = {"fix_gamma": False, "output_mean_var": True, "momentum": 0.8, **extra}
    mean, var = X.mean(axis=AXES), X.var(axis=AXES)
    arrays = inputs()
    out = run_op(op, arrays, kw)
    np.testing.assert_allclose(out[0], bn_ref(X, GAMMA, BETA, mean, var, 1e-3), rtol=1e-10)
    np.testing.assert_allclose(out[1], mean, rtol=1e-12)
    np.testing.assert_allclose(out[2], var, rtol=1e-12)                  # not 1/std
    gy = RNG.standard_normal(X.shape)
    expected = check_backward("BatchNorm", inputs(), [gy], [None] * 3, kw_bn(kw))
    got = check_backward(op, arrays, [gy], [None] * 3, kw)
    for e, g in zip(expected[:3], got[:3]):
        np.testing.assert_allclose(g, e, rtol=1e-9)
    eval_gradients(op, arrays, [gy], kw)
    np.testing.assert_allclose(arrays[3], 0.8 * MM + 0.2 * mean, rtol=1e-10)
    np.testing.assert_allclose(arrays[4], 0.8 * MV + 0.2 * var, rtol=1e-10)
    at_inference = run_op(op, inputs(), kw, is_train=False)
    np.testing.assert_allclose(at_inference[0], bn_ref(X, GAMMA, BETA, MM, MV, 1e-3),
                               rtol=1e-10)
    np.testing.assert_array_equal(at_inference[2], MV)


def test_v1_lists_only_data_gamma_beta_as_arguments_and_takes_no_axis():
    import mxnext as mx
    sym = mx.sym.BatchNorm_v1(mx.sym.var("data"), name="bn")
    assert sym.list_arguments() == ["data", "bn_gamma", "bn_beta"]
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    with pytest.raises(mx.base.ParamError, match="axis"):
        parse(op_def("BatchNorm_v1"), {"axis": 1})


def test_sync_batch_norm_needs_a_key_and_one_device():
    import mxnext as mx
    with pytest.raises(mx.base.ParamError, match="required parameter 'key'"):
        parse(op_def("_contrib_SyncBatchNorm"), {})
    with pytest.raises(mx.base.ParamError, match="'ndev'.*expected 1.*got 2"):
        parse(op_def("_contrib_SyncBatchNorm"), {"key": "k", "ndev": 2})
    assert mx.nd.contrib.SyncBatchNorm is mx.nd._contrib_SyncBatchNorm


def test_composing_marks_the_initializers_of_the_statistics_gamma_and_upsampling_weight():
    """As MXNet's FSetInputVarAttrOnCompose: a variable's own __init__ wins."""
    import mxnext as mx
    d = mx.sym.var("data")
    attrs = mx.sym.BatchNorm(d, moving_var=mx.sym.var("mv", init=mx.init.Zero()),
                             name="bn").attr_dict()
    assert attrs["bn_moving_mean"]["__init__"] == '["zero", {}]'
    assert attrs["mv"]["__init__"] == '["zero", {}]' and "bn_gamma" not in attrs
    assert mx.sym.BatchNorm_v1(d, name="v1").attr_dict()["v1_moving_var"]["__init__"] == \
        '["one", {}]'
    assert mx.sym.LeakyReLU(d, act_type="prelu", name="p").attr_dict()["p_gamma"] == {
        "__init__": '["Constant", {"value": 0.25}]', "act_type": "prelu"}
    up = mx.sym.UpSampling(d, scale=2, sample_type="bilinear", num_filter=3, name="up")
    assert up.attr_dict()["up_weight"]["__init__"] == '["bilinear", {}]'
