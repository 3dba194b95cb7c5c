"""mx.init / mx.initializer: fill rules, dispatch by name, the registry and its JSON, Load,
Mixed. Expected strings and values are MXNet 1.9.1's (checked against it side by side)."""

import json
import logging
import math
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"
I = mx.init


def fill(init, name, shape, dtype="float32", **desc):
    arr = mx.nd.full(shape, 7.0, dtype=dtype)
    init(I.InitDesc(name, **desc), arr)
    return arr.asnumpy()


# -- module wiring ------------------------------------------------------------------------
def test_init_is_initializer_and_loads_lazily():
    import subprocess
    import sys
    code = ("import sys, mxnext as mx; print('mxnext.initializer' in sys.modules); "
            "print(mx.init is mx.initializer is sys.modules['mxnext.initializer'])")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, timeout=120).stdout.split()
    assert out == ["False", "True"]


# -- dumps and create ---------------------------------------------------------------------
@pytest.mark.parametrize("init, expected", [
    (I.Zero(), '["zero", {}]'),
    (I.One(), '["one", {}]'),
    (I.Constant(2.5), '["constant", {"value": 2.5}]'),
    (I.Uniform(), '["uniform", {"scale": 0.07}]'),
    (I.Normal(0.5), '["normal", {"sigma": 0.5}]'),
    (I.Orthogonal(), '["orthogonal", {"scale": 1.414, "rand_type": "uniform"}]'),
    (I.Xavier(factor_type="in", magnitude=2.34),
     '["xavier", {"rnd_type": "uniform", "factor_type": "in", "magnitude": 2.34}]'),
    (I.MSRAPrelu(), '["msraprelu", {"factor_type": "avg", "slope": 0.25}]'),
    (I.Bilinear(), '["bilinear", {}]'),
    (I.LSTMBias(), '["lstmbias", {"forget_bias": 1.0}]'),
    (I.FusedRNN(I.Normal(), 4, 1, "lstm"),
     '["fusedrnn", {"init": "[\\"normal\\", {\\"sigma\\": 0.01}]", "num_hidden": 4, '
     '"num_layers": 1, "mode": "lstm", "bidirectional": false, "forget_bias": 1.0}]'),
])
def test_dumps_matches_mxnet_and_create_reads_it_back(init, expected):
    assert init.dumps() == expected
    again = I.create(expected)
    assert type(again) is type(init) and again == init and again.dumps() == expected


def test_create_accepts_names_aliases_classes_instances_and_dicts():
    assert type(I.create("zeros")) is I.Zero and type(I.create("ONES")) is I.One
    assert I.create("uniform", 0.2) == I.Uniform(0.2)
    assert I.create(I.Normal, sigma=2.0) == I.Normal(2.0)
    inst = I.Xavier()
    assert I.create(inst) is inst
    assert I.create({"initializer": "normal", "sigma": 0.3}) == I.Normal(0.3)
    assert I.create('{"initializer": "uniform", "scale": 0.2}') == I.Uniform(0.2)
    assert I.create(initializer="constant", value=3) == I.Constant(3)
    # what MXNet's ops write into __init__ (LeakyReLU's gamma) uses a capitalized name
    assert I.create('["Constant", {"value": 0.25}]') == I.Constant(0.25)


def test_create_errors_are_clear():
    with pytest.raises(ValueError, match=r"'normall' is not a registered initializer "
                                         r"\(did you mean 'normal'\?\); known: .*xavier"):
        I.create("normall")
    with pytest.raises(MXNetError, match="already an instance"):
        I.create(I.Zero(), 1)
    with pytest.raises(MXNetError, match="got int 3"):
        I.create(3)
    with pytest.raises(MXNetError, match="not valid JSON"):
        I.create("[normal")
    with pytest.raises(MXNetError, match="takes no extra arguments"):
        I.create('["normal", {}]', 1)
    with pytest.raises(TypeError):
        I.Zero(1)


def test_register_custom_initializer_with_alias():
    with pytest.warns(UserWarning, match="is overriding existing initializer"):
        @I.register             # as in MXNet, the name the alias took warns again
        @I.alias("halfinit")
        class HalfInit(I.Initializer):
            def _init_weight(self, _, arr):
                arr[:] = 0.5

    assert type(I.create("halfinit")) is HalfInit and type(I.create("HalfInit")) is HalfInit
    assert (fill(I.create("halfinit"), "fc_weight", (2, 2)) == 0.5).all()
    with pytest.warns(UserWarning, match="is overriding existing initializer"):
        I.register(type("HalfInit", (I.Initializer,), {}))
    with pytest.raises(MXNetError, match="subclass of Initializer"):
        I.register(dict)


def test_equality_is_by_class_and_kwargs():
    assert I.Normal(0.5) == I.Normal(0.5) and I.Normal(0.5) != I.Normal(0.4)
    assert I.Zero() != I.One() and I.Normal() != 3


# -- dispatch by name ---------------------------------------------------------------------
@pytest.mark.parametrize("name, value", [("fc_bias", 0), ("bn_gamma", 1), ("bn_beta", 0),
                                         ("q_min", 0), ("q_max", 1), ("fc_weight", 0.5)])
def test_initdesc_dispatch_by_suffix(name, value):
    assert (fill(I.Constant(0.5), name, (3, 2)) == value).all()


def test_init_attr_wins_and_global_init_is_set():
    desc = I.InitDesc("fc_bias", attrs={"__init__": I.Constant(3).dumps()})
    arr = mx.nd.zeros((2,))
    glob = I.Uniform()
    glob(desc, arr)
    assert (arr.asnumpy() == 3).all() and desc.global_init is glob
    assert isinstance(desc, str) and desc == "fc_bias" and desc.attrs["__init__"]


def test_unknown_name_is_a_clear_error():
    for name in ("foo", "bn_moving_mean"):   # moving stats come with an __init__ attribute
        with pytest.raises(ValueError, match=f"no default initialization for '{name}'"):
            fill(I.Uniform(), name, (2,))


def test_legacy_string_names_warn_and_cover_aux_states():
    def legacy(name, shape):
        arr = mx.nd.full(shape, 7.0)
        with pytest.warns(DeprecationWarning, match="InitDesc"):
            I.Constant(0.5)(name, arr)
        return arr.asnumpy()

    assert (legacy("bn_moving_mean", (3,)) == 0).all()
    assert (legacy("bn_moving_var", (3,)) == 1).all()
    assert (legacy("bn_moving_inv_var", (3,)) == 0).all()
    assert (legacy("fc_weight", (3,)) == 0.5).all()
    assert (legacy("stn_loc_weight", (6, 4)) == 0).all()
    assert legacy("stn_loc_bias", (6,)).tolist() == [1, 0, 0, 0, 1, 0]
    assert np.array_equal(legacy("upsampling0_weight", (1, 1, 4, 4)),
                          fill(I.Bilinear(), "up_weight", (1, 1, 4, 4)))
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="NDArray"):
        I.Zero()("fc_weight", np.zeros(3))


def test_set_verbosity_logs_each_array(caplog):
    init = I.One().set_verbosity(True)
    with caplog.at_level(logging.INFO):
        fill(init, "fc_weight", (2, 2))
    assert "Initialized fc_weight as weight: 1.0" in caplog.text


# -- values ---------------------------------------------------------------------------------
def test_constant_values_and_dumps_of_arrays():
    assert (fill(I.Constant(mx.nd.arange(3)), "w_weight", (2, 3)) == [0, 1, 2]).all()
    init = I.Constant(np.ones((2, 2)))
    assert init.dumps() == '["constant", {"value": [[1.0, 1.0], [1.0, 1.0]]}]'
    assert I.Constant(mx.nd.ones((2,))).dumps() == '["constant", {"value": [1.0, 1.0]}]'
    assert I.Constant(np.float32(2)).dumps() == '["constant", {"value": 2.0}]'
    back = I.create(init.dumps())
    assert (fill(back, "w_weight", (2, 2)) == 1).all()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_uniform_and_normal_statistics(dtype):
    mx.random.seed(3)
    u = fill(I.Uniform(0.1), "w_weight", (200, 100), dtype)
    n = fill(I.Normal(0.5), "w_weight", (200, 100), dtype)
    assert u.dtype == n.dtype == np.dtype(dtype)
    assert u.min() >= -0.1 and u.max() <= 0.1 and abs(u.mean()) < 0.005
    assert abs(u.std() - 0.1 / math.sqrt(3)) < 0.002
    assert abs(n.mean()) < 0.02 and abs(n.std() - 0.5) < 0.01


def test_random_draws_follow_mx_random_seed():
    draws = []
    for seed in (11, 11, 12):
        mx.random.seed(seed)
        draws.append(fill(I.Xavier(), "w_weight", (4, 5)))
    assert np.array_equal(draws[0], draws[1]) and not np.array_equal(draws[0], draws[2])


@pytest.mark.parametrize("factor_type", ["avg", "in", "out"])
def test_xavier_scale_from_fans(factor_type):
    shape = (64, 32, 3, 3)
    fan_in, fan_out = 32 * 9, 64 * 9
    n = {"avg": (fan_in + fan_out) / 2, "in": fan_in, "out": fan_out}[factor_type]
    mx.random.seed(0)
    u = fill(I.Xavier("uniform", factor_type, 3), "c_weight", shape)
    bound = math.sqrt(3 / n)
    assert np.abs(u).max() <= bound and np.abs(u).max() > 0.99 * bound
    g = fill(I.Xavier("gaussian", factor_type, 2), "c_weight", shape)
    assert abs(g.std() - math.sqrt(2 / n)) < 0.02 * math.sqrt(2 / n)
    msra = fill(I.MSRAPrelu(factor_type, slope=0.5), "c_weight", shape)
    assert abs(msra.std() - math.sqrt(2 / 1.25 / n)) < 0.02 * math.sqrt(2 / 1.25 / n)


def test_xavier_errors():
    with pytest.raises(ValueError, match="'b_weight' of shape \\(3,\\).*at least 2"):
        fill(I.Xavier(), "b_weight", (3,))
    with pytest.raises(ValueError, match="factor_type must be .* got 'bad'"):
        fill(I.Xavier(factor_type="bad"), "w_weight", (3, 3))
    with pytest.raises(ValueError, match="rnd_type must be .* got 'bad'"):
        fill(I.Xavier(rnd_type="bad"), "w_weight", (3, 3))


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2, 2)])
@pytest.mark.parametrize("rand_type", ["uniform", "normal"])
def test_orthogonal_rows_or_columns_are_orthonormal(shape, rand_type):
    mx.random.seed(5)
    w = fill(I.Orthogonal(scale=2.0, rand_type=rand_type), "w_weight", shape)
    m = w.reshape(shape[0], -1).astype(np.float64)
    gram = m @ m.T if m.shape[0] <= m.shape[1] else m.T @ m
    np.testing.assert_allclose(gram, 4 * np.eye(len(gram)), atol=1e-5)


def test_bilinear_kernel_values():
    one_d = np.array([0.25, 0.75, 0.75, 0.25])
    w = fill(I.Bilinear(), "up_weight", (2, 3, 4, 4))
    assert all(np.array_equal(w[i, j], np.outer(one_d, one_d)) for i in range(2)
               for j in range(3))
    odd = fill(I.Bilinear(), "up_weight", (1, 1, 5, 5))   # a tent over the width: f = 3
    tent = np.array([1, 2, 3, 2, 1]) / 3
    np.testing.assert_allclose(odd[0, 0], np.outer(tent, tent), rtol=1e-7)
    wide = fill(I.Bilinear(), "up_weight", (1, 1, 2, 4))  # the width sets the scale
    assert np.array_equal(wide[0, 0], np.outer(one_d[:2], one_d))


def test_lstm_bias_sets_only_the_forget_gate():
    arr = mx.nd.full((8,), 7.0)
    I.LSTMBias(2.0)._init_weight("lstm_i2h_bias", arr)
    assert arr.asnumpy().tolist() == [0, 0, 2, 2, 0, 0, 0, 0]
    attr = {"__init__": I.LSTMBias(1.5).dumps()}
    assert fill(I.Zero(), "i2h_bias", (4,), attrs=attr).tolist() == [0, 1.5, 0, 0]


def test_quantized_weight_draws_int8_values():
    mx.random.seed(1)
    q = fill(I.Zero(), "fc_weight_quantize", (50,), dtype="int8")
    assert q.dtype == np.int8 and q.min() >= -127 and q.max() < 127 and len(set(q)) > 10
    assert (fill(I.Uniform(), "fc_bias_quantize", (5,), dtype="int8") == 0).all()


def test_fused_rnn_packs_lstm_layout_with_forget_bias():
    h, x = 2, 3   # one LSTM layer: W_i2h (4h, x), W_h2h (4h, h), then b_i2h (4h), b_h2h (4h)
    arr = mx.nd.zeros((4 * h * (x + h + 2),))
    init = I.FusedRNN(I.Constant(0.5), h, 1, "lstm", forget_bias=3.0)
    I.Uniform()(I.InitDesc("rnn_parameters", attrs={"__init__": init.dumps()}), arr)
    got = arr.asnumpy()
    nw = 4 * h * (x + h)
    assert (got[:nw] == 0.5).all()
    gate_bias = np.array([0, 0, 3, 3, 0, 0, 0, 0], dtype=np.float32)   # gates i, f, c, o
    assert np.array_equal(got[nw:], np.concatenate([gate_bias, gate_bias]))


def test_fused_rnn_falls_back_to_global_init_and_reads_string_init():
    arr = mx.nd.zeros((3 * 2 * (3 + 2 + 2),))   # one GRU layer, h=2, x=3
    I.FusedRNN(None, 2, 1, "gru")._init_weight(I.InitDesc("p", global_init=I.One()), arr)
    got = arr.asnumpy()
    assert (got[:30] == 1).all() and (got[30:] == 0).all()
    init = I.FusedRNN('["constant", {"value": 2}]', 2, 1, "gru")
    init._init_weight(I.InitDesc("p", global_init=I.One()), arr)
    assert (arr.asnumpy()[:30] == 2).all()
    with pytest.raises(MXNetError, match="no init and no global initializer"):
        I.FusedRNN(None, 2, 1, "gru")._init_weight("p", arr)


# -- Load and Mixed -----------------------------------------------------------------------
def test_load_from_mxnet_checkpoint_drops_arg_prefix():
    saved = mx.nd.load(str(FIX / "mlp-0000.params"))
    key = next(k for k in saved if k.startswith("arg:") and k.endswith("weight"))
    name = key[4:]
    load = I.Load(str(FIX / "mlp-0000.params"), default_init=I.One())
    arr = mx.nd.zeros(saved[key].shape)
    load(I.InitDesc(name), arr)
    assert np.array_equal(arr.asnumpy(), saved[key].asnumpy())
    other = mx.nd.zeros((2, 2))
    load(I.InitDesc("new_weight"), other)
    assert (other.asnumpy() == 1).all()
    with pytest.raises(MXNetError, match=f"'{name}' has shape \\(2, 2\\) but the loaded"):
        load(I.InitDesc(name), other)
    with pytest.raises(MXNetError, match="'new_weight' is not among the loaded parameters"):
        I.Load(str(FIX / "mlp-0000.params"))("new_weight", other)


def test_load_from_saved_dict_and_rejects_lists(tmp_path):
    path = str(tmp_path / "p.params")
    mx.nd.save(path, {"aux:bn_moving_var": mx.nd.full((3,), 4.0), "w": mx.nd.ones((1,))})
    load = I.Load(path)
    assert sorted(load.param) == ["bn_moving_var", "w"]
    arr = mx.nd.zeros((3,))
    load("bn_moving_var", arr)
    assert (arr.asnumpy() == 4).all()
    mx.nd.save(path, [mx.nd.ones((1,))])
    with pytest.raises(MXNetError, match="unnamed list"):
        I.Load(path)


def test_mixed_uses_first_matching_pattern():
    mixed = I.Mixed([".*bias", ".*"], [I.Zero(), I.Constant(4)])
    bias, weight = mx.nd.ones((2,)), mx.nd.ones((2,))
    mixed(I.InitDesc("fc_bias"), bias)
    mixed(I.InitDesc("fc_weight"), weight)
    assert (bias.asnumpy() == 0).all() and (weight.asnumpy() == 4).all()
    with pytest.raises(ValueError, match="'fc_bias' matches none of the patterns \\['bias'\\]"):
        I.Mixed(["bias"], [I.Zero()])(I.InitDesc("fc_bias"), bias)   # re.match: anchored
    with pytest.raises(ValueError, match="2 patterns but 1 initializers"):
        I.Mixed(["a", "b"], [I.Zero()])


# -- symbols --------------------------------------------------------------------------------
def test_sym_var_stores_the_initializer_json():
    v = mx.sym.var("w", init=I.Xavier(factor_type="in", magnitude=2.34))
    assert json.loads(v.attr("__init__")) == ["xavier", {"rnd_type": "uniform",
                                                         "factor_type": "in",
                                                         "magnitude": 2.34}]
    assert mx.sym.var("w", init="zeros").attr("__init__") == "zeros"
    mx.random.seed(0)
    w = fill(I.Zero(), "w", (3, 4), attrs=v.list_attr())
    assert np.abs(w).max() <= math.sqrt(2.34 / 4) and (w != 0).any()
