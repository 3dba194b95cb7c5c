"""Optimizer update ops against their formulas, written per element."""

import math

import numpy as np
import pytest

import mxnext as mx
from opsdk import MXNetError, ParamError
from opsdk.testing import op_def, parse, run_op

RNG = np.random.default_rng(21)


def clip(v, bound):
    return max(-bound, min(bound, v)) if bound >= 0 else v


def sign(v):
    return float(v > 0) - float(v < 0)


# scalar rules: (params, w, g, *states) -> (new w, *new states)
def sgd(p, w, g):
    return ((1 - p["lr"] * p["wd"]) * w - p["lr"] * clip(p["rescale_grad"] * g, p["clip"]),)


def sgd_mom(p, w, g, m):
    m = p["momentum"] * m - p["lr"] * p["wd"] * w - p["lr"] * clip(p["rescale_grad"] * g, p["clip"])
    return w + m, m


def nag(p, w, g, m):
    d = clip(p["rescale_grad"] * g, p["clip"]) + p["wd"] * w
    m = p["momentum"] * m
    new_w = w - m + (p["momentum"] + 1) * (m - p["lr"] * d)
    return new_w, m - p["lr"] * d


def adam(p, w, g, mean, var):
    g = clip(p["rescale_grad"] * g + p["wd"] * w, p["clip"])
    mean = p["beta1"] * mean + (1 - p["beta1"]) * g
    var = p["beta2"] * var + (1 - p["beta2"]) * g * g
    return w - p["lr"] * mean / (math.sqrt(var) + p["epsilon"]), mean, var


def rmsprop(p, w, g, n):
    g = clip(p["rescale_grad"] * g + p["wd"] * w, p["clip"])
    n = (1 - p["gamma1"]) * g * g + p["gamma1"] * n
    return clip(w - p["lr"] * g / math.sqrt(n + p["epsilon"]), p["clip_weights"]), n


def rmspropalex(p, w, g, n, gm, delta):
    g = clip(p["rescale_grad"] * g + p["wd"] * w, p["clip"])
    n = (1 - p["gamma1"]) * g * g + p["gamma1"] * n
    gm = (1 - p["gamma1"]) * g + p["gamma1"] * gm
    delta = p["gamma2"] * delta - p["lr"] * g / math.sqrt(n - gm * gm + p["epsilon"])
    return clip(w + delta, p["clip_weights"]), n, gm, delta


def ftrl(p, w, g, z, n):
    g = clip(p["rescale_grad"] * g, p["clip"])
    z = z + g - (math.sqrt(n + g * g) - math.sqrt(n)) * w / p["lr"]
    n = n + g * g
    new_w = 0.0
    if abs(z) > p["lamda1"]:
        new_w = (sign(z) * p["lamda1"] - z) / ((p["beta"] + math.sqrt(n)) / p["lr"] + p["wd"])
    return new_w, z, n


def signsgd(p, w, g):
    return ((1 - p["lr"] * p["wd"]) * w - p["lr"] * sign(g),)


def signum(p, w, g, m):
    m = (p["momentum"] * m - (1 - p["momentum"]) * p["wd"] * w
         - (1 - p["momentum"]) * clip(p["rescale_grad"] * g, p["clip"]))
    return (1 - p["lr"] * p["wd_lh"]) * w + p["lr"] * sign(m), m


CASES = [  # op, rule, extra params, state value ranges
    ("sgd_update", sgd, {}, []),
    ("sgd_mom_update", sgd_mom, {"momentum": 0.9}, [(-1, 1)]),
    ("nag_mom_update", nag, {"momentum": 0.8}, [(-1, 1)]),
    ("adam_update", adam, {"beta1": 0.8, "beta2": 0.95, "epsilon": 1e-6}, [(-1, 1), (0, 1)]),
    ("rmsprop_update", rmsprop, {"gamma1": 0.9, "epsilon": 1e-6, "clip_weights": 0.6}, [(0, 1)]),
    ("rmspropalex_update", rmspropalex,
     {"gamma1": 0.9, "gamma2": 0.8, "epsilon": 1e-6, "clip_weights": -1.0},
     [(0.3, 0.5), (-0.2, 0.2), (-1, 1)]),
    ("ftrl_update", ftrl, {"lamda1": 0.05, "beta": 0.7}, [(-1, 1), (0, 1)]),
    ("signsgd_update", signsgd, {}, []),
    ("signum_update", signum, {"momentum": 0.9, "wd_lh": 0.02}, [(-1, 1)]),
]


@pytest.mark.parametrize("clip_gradient", [-1.0, 0.3])
@pytest.mark.parametrize("op, rule, extra, states", CASES, ids=[c[0] for c in CASES])
def test_update_matches_formula(op, rule, extra, states, clip_gradient):
    shape = (3, 4)
    w = RNG.uniform(-1, 1, shape)
    g = RNG.uniform(-2, 2, shape)
    st = [RNG.uniform(lo, hi, shape) for lo, hi in states]
    params = {"lr": 0.1, "wd": 0.05, "rescale_grad": 0.7, "clip_gradient": clip_gradient, **extra}
    inputs = [w.copy(), g.copy(), *(s.copy() for s in st)]
    (out,) = run_op(op, inputs, params, outputs=[inputs[0]])       # out=weight, as MXNet calls it
    ref = {**params, "clip": clip_gradient}
    for idx in np.ndindex(shape):
        want = rule(ref, w[idx], g[idx], *(s[idx] for s in st))
        np.testing.assert_allclose(out[idx], want[0], rtol=1e-10, atol=1e-12)
        for k, value in enumerate(want[1:]):                   # states updated in place
            np.testing.assert_allclose(inputs[2 + k][idx], value, rtol=1e-10, atol=1e-12)
    assert out is inputs[0]
    opdef = op_def(op)
    assert opdef.mutate_inputs(parse(opdef, params)) == list(range(2, 2 + len(states)))
    assert opdef.get_attr("FGradient") is None


def test_signsgd_ignores_clip_and_zero_clip_clips_everything():
    w, g = np.ones(3), np.array([-5.0, 0.0, 5.0])
    (out,) = run_op("signsgd_update", [w, g], {"lr": 0.5, "clip_gradient": 0.1})
    np.testing.assert_allclose(out, [1.5, 1.0, 0.5])
    (out,) = run_op("sgd_update", [w, g], {"lr": 0.5, "clip_gradient": 0.0})
    np.testing.assert_allclose(out, w)                # MXNet clips when clip_gradient >= 0


def test_float32_keeps_dtype_and_lazy_update_is_accepted():
    w, g, m = (RNG.uniform(-1, 1, 5).astype(np.float32) for _ in range(3))
    (out,) = run_op("sgd_mom_update", [w, g, m.copy()], {"lr": "0.1", "momentum": "0.9",
                                                         "lazy_update": "False"})
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, w + 0.9 * m - 0.1 * g, rtol=1e-6)


@pytest.mark.parametrize("momentum", [None, 0.9])
def test_multi_sgd(momentum):
    op = "multi_sgd_update" if momentum is None else "multi_sgd_mom_update"
    shapes, lrs, wds = [(3, 4), (5,)], (0.1, 0.2), (0.0, 0.01)
    stride = 2 if momentum is None else 3
    arrays = [RNG.uniform(-1, 1, s) for s in shapes for _ in range(stride)]
    params = {"num_weights": 2, "lrs": lrs, "wds": wds, "rescale_grad": 0.5, "clip_gradient": 0.3}
    if momentum is not None:
        params["momentum"] = momentum
    inputs = [a.copy() for a in arrays]
    outs = run_op(op, inputs, params)
    for i in range(2):
        w, g = arrays[stride * i], arrays[stride * i + 1]
        m = arrays[stride * i + 2] if momentum is not None else np.zeros_like(w)
        ref = {"lr": lrs[i], "wd": wds[i], "rescale_grad": 0.5, "clip": 0.3,
               "momentum": momentum or 0.0}
        for idx in np.ndindex(w.shape):
            new_w, new_m = sgd_mom(ref, w[idx], g[idx], m[idx])
            np.testing.assert_allclose(outs[i][idx], new_w, rtol=1e-12)
            if momentum is not None:
                np.testing.assert_allclose(inputs[stride * i + 2][idx], new_m, rtol=1e-12)
    opdef = op_def(op)
    p = parse(opdef, params)
    assert opdef.list_input_names(p)[:stride] == ["weight_0", "grad_0", "mom_0"][:stride]
    assert opdef.mutate_inputs(p) == ([2, 5] if momentum is not None else [])


def test_update_param_errors():
    w = np.ones(3)
    with pytest.raises(ParamError, match="lr"):
        run_op("sgd_update", [w, w], {})
    with pytest.raises(ParamError, match="lrs has 1"):
        run_op("multi_sgd_update", [w, w, w, w], {"num_weights": 2, "lrs": (0.1,), "wds": (0, 0)})
    # centered RMSProp is rmspropalex_update: the Python optimizer's switch, not a parameter
    with pytest.raises(ParamError, match="centered"):
        run_op("rmsprop_update", [w, w, w], {"lr": 0.1, "centered": True})


def ftml(p, w, g, d, v, z):
    g = clip(p["rescale_grad"] * g + p["wd"] * w, p["clip_grad"])
    v = p["beta2"] * v + (1 - p["beta2"]) * g * g
    d_t = (1 - p["beta1"] ** p["t"]) / p["lr"] * (math.sqrt(v / (1 - p["beta2"] ** p["t"]))
                                                  + p["epsilon"])
    z = p["beta1"] * z + (1 - p["beta1"]) * g - (d_t - p["beta1"] * d) * w
    return -z / d_t, d_t, v, z


@pytest.mark.parametrize("clip_grad", [-1.0, 0.3])
def test_ftml_matches_formula(clip_grad):
    shape = (3, 4)
    w, g = RNG.uniform(-1, 1, shape), RNG.uniform(-2, 2, shape)
    st = [RNG.uniform(0, 1, shape) for _ in range(3)]
    params = {"lr": 0.1, "beta1": 0.5, "beta2": 0.9, "epsilon": 1e-6, "t": 4, "wd": 0.05,
              "rescale_grad": 0.7, "clip_grad": clip_grad}
    inputs = [w.copy(), g.copy(), *(s.copy() for s in st)]
    (out,) = run_op("ftml_update", inputs, params, outputs=[inputs[0]])
    for idx in np.ndindex(shape):
        want = ftml(params, w[idx], g[idx], *(s[idx] for s in st))
        np.testing.assert_allclose(out[idx], want[0], rtol=1e-10)
        for k, value in enumerate(want[1:]):                   # d, v, z updated in place
            np.testing.assert_allclose(inputs[2 + k][idx], value, rtol=1e-10)
    opdef = op_def("ftml_update")
    assert opdef.mutate_inputs(parse(opdef, params)) == [2, 3, 4]
    assert opdef.list_input_names(parse(opdef, params)) == ["weight", "grad", "d", "v", "z"]


def test_ftml_float32_is_mxnets():
    """float32 all the way, parameters included, as MXNet 1.9.1 computes it (its values)."""
    f32 = np.float32
    inputs = [np.array(a, f32) for a in ([0.5, -0.25, 1.0, -1.5], [0.3, -2.0, 0.01, 1.0],
                                         [0.1, 0.2, 0.0, 0.5], [0.01, 0.5, 0.0, 0.2],
                                         [0.2, -0.1, 0.0, 0.3])]
    run_op("ftml_update", inputs, {"lr": 0.05, "t": 3, "wd": 0.01, "rescale_grad": 0.5,
                                   "clip_grad": 0.8}, outputs=[inputs[0]])
    mxnet = [[0.49260348081588745, -0.2479758858680725, 0.955837070941925, -1.4994065761566162],
             [28.662124633789062, 202.55819702148438, 0.13586042821407318, 128.10240173339844],
             [0.010014024563133717, 0.5001400113105774, 2.2499709473322582e-07,
              0.2000352144241333],
             [-14.119062423706055, 50.229549407958984, -0.12986043095588684, 192.0775909423828]]
    for got, want in zip([inputs[0], *inputs[2:]], mxnet):
        assert got.dtype == f32
        np.testing.assert_array_equal(got, np.array(want, f32))


def test_ftml_param_errors():
    w = np.ones(3)
    with pytest.raises(ParamError, match="'t'"):
        run_op("ftml_update", [w] * 5, {"lr": 0.1})
    with pytest.raises(ParamError, match="beta1"):
        run_op("ftml_update", [w] * 5, {"lr": 0.1, "t": 1, "beta1": 1.5})


def test_multi_sgd_through_mx_nd_takes_the_arrays_as_varargs():
    """As MXNet's optimizer calls it: ``op(*weights_grads_moms, out=weights, num_weights=n)``."""
    w = [mx.nd.array(RNG.uniform(-1, 1, s)) for s in [(3, 4), (5,)]]
    g = [mx.nd.array(RNG.uniform(-1, 1, a.shape)) for a in w]
    m = [mx.nd.zeros(a.shape) for a in w]
    before = [a.asnumpy() for a in w]
    mx.nd.multi_sgd_mom_update(w[0], g[0], m[0], w[1], g[1], m[1], out=w, num_weights=2,
                               lrs=(0.1, 0.2), wds=(0.0, 0.0), momentum=0.9)
    for i, lr in enumerate((0.1, 0.2)):
        np.testing.assert_allclose(m[i].asnumpy(), -lr * g[i].asnumpy(), rtol=1e-6)
        np.testing.assert_allclose(w[i].asnumpy(), before[i] - lr * g[i].asnumpy(), rtol=1e-6)
    with pytest.raises(MXNetError, match="expected 2 input"):    # num_weights is not inferred
        mx.nd.multi_sgd_update(w[0], g[0], w[1], g[1], out=w, lrs=(0.1, 0.2), wds=(0.0, 0.0))


def _whole_array_sgd_mom(w, g, m, lr, wd, momentum, rescale, clip_gradient):
    """The whole-array rule, in numpy's order of operations (momentum None: no state)."""
    scaled = rescale * g
    if clip_gradient >= 0:
        scaled = np.clip(scaled, -clip_gradient, clip_gradient)
    step = (0 if momentum is None else momentum * m) - lr * wd * w - lr * scaled
    return w + step, step


@pytest.mark.parametrize("momentum", [None, 0.9])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("clip_gradient", [-1.0, 0.004])
def test_sgd_updates_over_many_blocks_keep_every_bit(momentum, dtype, clip_gradient):
    # 200003 elements: several of the kernels' cache blocks and a ragged last one
    n = 200003
    w = RNG.standard_normal(n).astype(dtype)
    g = RNG.standard_normal(n).astype(dtype)
    m = RNG.standard_normal(n).astype(dtype)
    p = {"lr": 0.05, "wd": 1e-4, "rescale_grad": 0.37, "clip_gradient": clip_gradient}
    want_w, want_m = _whole_array_sgd_mom(w, g, m, p["lr"], p["wd"], momentum,
                                          p["rescale_grad"], clip_gradient)
    if momentum is None:
        (got,) = run_op("multi_sgd_update", [w, g], {"lrs": (p["lr"],), "wds": (p["wd"],),
                                                      "rescale_grad": p["rescale_grad"],
                                                      "clip_gradient": clip_gradient})
        np.testing.assert_array_equal(got, want_w)
        return
    for op in ("sgd_mom_update", "multi_sgd_mom_update"):
        mom = m.copy()
        params = {**p, "momentum": momentum}
        if op.startswith("multi"):
            params.update(lrs=(p["lr"],), wds=(p["wd"],))
            del params["lr"], params["wd"]
        (got,) = run_op(op, [w, g, mom], params)
        np.testing.assert_array_equal(got, want_w)
        np.testing.assert_array_equal(mom, want_m)


def test_sgd_mom_update_in_place_over_the_weight_keeps_every_bit():
    n = 70000
    w = mx.nd.array(RNG.standard_normal(n).astype("float32"))
    g = mx.nd.array(RNG.standard_normal(n).astype("float32"))
    m = mx.nd.array(RNG.standard_normal(n).astype("float32"))
    want_w, want_m = _whole_array_sgd_mom(w.asnumpy(), g.asnumpy(), m.asnumpy(), 0.1, 0.01,
                                          0.9, 0.5, -1.0)
    mx.nd.sgd_mom_update(w, g, m, out=w, lr=0.1, wd=0.01, momentum=0.9, rescale_grad=0.5)
    np.testing.assert_array_equal(w.asnumpy(), want_w)
    np.testing.assert_array_equal(m.asnumpy(), want_m)
