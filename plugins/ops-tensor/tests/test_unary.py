"""Elementwise unary ops: forward vs numpy/math references and MXNet 1.9 values,
dtypes, every OpReqType, gradients (MXNet values and numeric differences)."""

import math

import numpy as np
import pytest
from mxnext import ops as registry
from mxnext.base import ParamError, TypeInferError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, infer, run_op

_vec = np.vectorize

# name: (numpy/math reference in float64, input domain)
REFERENCES = {
    "abs": (np.abs, (-2, 2)), "sign": (np.sign, (-2, 2)), "negative": (np.negative, (-2, 2)),
    "reciprocal": (lambda x: 1 / x, (0.5, 2)), "square": (np.square, (-2, 2)),
    "sqrt": (np.sqrt, (0.1, 4)), "rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 4)),
    "cbrt": (np.cbrt, (-8, 8)), "exp": (np.exp, (-3, 3)), "expm1": (np.expm1, (-1, 1)),
    "log": (np.log, (0.1, 5)), "log1p": (np.log1p, (-0.5, 3)), "log2": (np.log2, (0.1, 5)),
    "log10": (np.log10, (0.1, 5)), "sin": (np.sin, (-3, 3)), "cos": (np.cos, (-3, 3)),
    "tan": (np.tan, (-1, 1)), "arcsin": (np.arcsin, (-0.9, 0.9)),
    "arccos": (np.arccos, (-0.9, 0.9)), "arctan": (np.arctan, (-3, 3)),
    "sinh": (np.sinh, (-2, 2)), "cosh": (np.cosh, (-2, 2)), "tanh": (np.tanh, (-2, 2)),
    "arcsinh": (np.arcsinh, (-2, 2)), "arccosh": (np.arccosh, (1.1, 4)),
    "arctanh": (np.arctanh, (-0.9, 0.9)), "sigmoid": (lambda x: 1 / (1 + np.exp(-x)), (-8, 8)),
    "relu": (lambda x: np.maximum(x, 0), (-2, 2)),
    "softsign": (lambda x: x / (1 + abs(x)), (-3, 3)),
    "erf": (_vec(math.erf), (-4, 4)), "gamma": (_vec(math.gamma), (0.2, 6)),
    "gammaln": (_vec(math.lgamma), (0.2, 30)), "floor": (np.floor, (-3, 3)),
    "ceil": (np.ceil, (-3, 3)), "trunc": (np.trunc, (-3, 3)), "fix": (np.trunc, (-3, 3)),
    "degrees": (np.degrees, (-3, 3)), "radians": (np.radians, (-90, 90)),
    "logical_not": (lambda x: (x == 0).astype(x.dtype), (-2, 2)),
    "zeros_like": (np.zeros_like, (-2, 2)), "ones_like": (np.ones_like, (-2, 2)),
    "BlockGrad": (lambda x: x, (-2, 2)), "_copy": (lambda x: x, (-2, 2)),
}
NOT_DIFFERENTIABLE = {"sign", "floor", "ceil", "trunc", "fix", "logical_not", "zeros_like",
                      "ones_like", "BlockGrad", "round", "rint"}


def _sample(domain, dtype, shape=(3, 4), seed=0):
    return np.random.default_rng(seed).uniform(*domain, size=shape).astype(dtype)


@pytest.mark.parametrize("name", sorted(REFERENCES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_forward_matches_reference(name, dtype):
    ref, domain = REFERENCES[name]
    x = _sample(domain, dtype)
    want = ref(x.astype(np.float64)).astype(dtype)
    tol = 1e-5 if dtype == "float32" else 1e-12
    check_forward(name, [x], want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", sorted(set(REFERENCES) - NOT_DIFFERENTIABLE))
def test_gradient_matches_numeric(name):
    x = _sample(REFERENCES[name][1], "float64", (2, 3), seed=1)
    check_numeric_gradient(name, [x], rtol=1e-4, atol=1e-6)


def test_special_functions_accuracy():
    x = np.linspace(-6, 6, 2001)
    erf = run_op("erf", [x])[0]
    assert np.abs(erf - _vec(math.erf)(x)).max() < 1e-12
    g = np.linspace(-9.5, 40, 1001)
    g = g[g != np.round(g)]
    assert np.allclose(run_op("gamma", [g])[0], _vec(math.gamma)(g), rtol=1e-11)
    assert np.allclose(run_op("gammaln", [g])[0], _vec(math.lgamma)(g), rtol=1e-11, atol=1e-12)


def test_mxnet_values():
    """Values and gradients as MXNet 1.9.1 computes them."""
    halves = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5], np.float32)
    check_forward("round", [halves], np.array([-3, -2, -1, 1, 2, 3], np.float32))
    check_forward("rint", [halves], np.array([-3, -2, -1, 0, 1, 2], np.float32))
    check_forward("fix", [halves], np.array([-2, -1, -0., 0, 1, 2], np.float32))
    check_forward("gamma", [np.array([-1.5, 0.5, 5, -2], np.float32)],
                  np.array([2.3632717, 1.7724538, 24, np.nan], np.float32))
    check_forward("gammaln", [np.array([-1.5, 0.5, 5], np.float32)],
                  np.array([0.86004704, 0.5723649, 3.1780539], np.float32))
    check_forward("erf", [np.array([0.5], np.float32)], np.array([0.5204999], np.float32))
    one = np.ones(1, np.float32)
    for name, x, grad in [("rsqrt", 4, -0.0625), ("cbrt", 8, 0.08333334),
                          ("gamma", 2.5, 0.9347348), ("gammaln", 2.5, 0.70315677),
                          ("softsign", 1, 0.25), ("erf", 0.5, 0.8787826),
                          ("arccosh", 2, 0.57735026)]:
        check_backward(name, [np.array([x], np.float32)], [one], [np.array([grad])], rtol=1e-5)
    three = np.array([-1, 0, 1], np.float32)
    check_backward("relu", [three], [np.ones(3, np.float32)], [np.array([0, 0, 1])])
    check_backward("abs", [three], [np.ones(3, np.float32)], [np.array([-1, 0, 1])])
    check_backward("sign", [three], [np.ones(3, np.float32)], [np.zeros(3)])


def test_integer_inputs_keep_their_dtype():
    i = np.array([1, 2, 3, -7], np.int32)
    check_forward("relu", [i], np.array([1, 2, 3, 0], np.int32))
    check_forward("sigmoid", [i], np.array([0, 0, 0, 0], np.int32))
    check_forward("abs", [i], np.array([1, 2, 3, 7], np.int32))
    check_forward("reciprocal", [i], np.array([1, 0, 0, 0], np.int32))
    check_forward("degrees", [i], np.array([57, 114, 171, -401], np.int32))
    check_forward("logical_not", [np.array([0, 2], np.int64)], np.array([1, 0], np.int64))


def test_clip():
    x = np.array([-1, 0, 0.5, 1, 2], np.float32)
    check_forward("clip", [x], np.array([0, 0, 0.5, 1, 1], np.float32),
                  {"a_min": "0", "a_max": "1"})
    check_backward("clip", [x], [np.ones(5, np.float32)], [np.array([0, 1, 1, 1, 0])],
                   {"a_min": 0, "a_max": 1})
    check_forward("clip", [np.array([1, 2, 3, -7], np.int32)], np.array([1, 2, 2, 0], np.int32),
                  {"a_min": 0.5, "a_max": 2.5})
    with pytest.raises(ParamError, match="a_max"):
        registry.get("clip").parse_params({"a_min": 0})
    check_forward("clip", [x], np.array([1, 1, 1, 1, 1], np.float32), {"a_min": 1, "a_max": 1})
    # a_min > a_max: MXNet returns a mix of both bounds; refused, naming both values
    with pytest.raises(ParamError, match=r"'clip'.*a_min=2\.0 > a_max=1\.0"):
        registry.get("clip").parse_params({"a_min": 2, "a_max": 1})
    with pytest.raises(ParamError, match=r"a_min=0\.5 > a_max=-0\.5"):
        check_backward("clip", [x], [np.ones(5, np.float32)], [None],
                       {"a_min": 0.5, "a_max": -0.5})


def test_cast():
    x = np.array([-2.5, 0.5, 1.7], np.float32)
    check_forward("Cast", [x], np.array([-2, 0, 1], np.int32), {"dtype": "int32"})
    check_forward("cast", [x], x.astype(np.float16), {"dtype": np.float16})
    _, _, _, out_t = infer(registry.get("Cast"), registry.get("Cast").parse_params(
        {"dtype": "uint8"}), [(3,)], [np.dtype(np.float64)])
    assert out_t == [np.dtype(np.uint8)]
    grads = check_backward("Cast", [x], [np.ones(3, np.float64)], [np.ones(3)],
                           {"dtype": "float64"})
    assert grads[0].dtype == np.float32     # the gradient comes back in the input's dtype
    with pytest.raises(ParamError, match="dtype"):
        registry.get("Cast").parse_params({"dtype": "complex64"})
    with pytest.raises(TypeInferError):
        registry.get("Cast").get_attr("FInferType")(
            registry.get("Cast").parse_params({"dtype": "int32"}), [None], [np.dtype("int8")])


def test_registered_by_the_plugin():
    for name in ("abs", "_backward_abs", "clip", "Cast", "zeros_like"):
        op = registry.get(name)
        assert op.provider == "ops-tensor"
        assert all(op.has_attr(k) for k in ("FInferShape", "FInferType", "FCompute<cpu>"))


def test_aliases_and_gradient_blocking():
    assert registry.get("stop_gradient") is registry.get("BlockGrad")
    assert registry.get("identity") is registry.get("_copy")
    assert registry.get("cast") is registry.get("Cast")
    x = np.array([1.0, 2.0])
    og = np.array([3.0, 4.0])
    check_backward("BlockGrad", [x], [og], [np.zeros(2)])
    check_backward("identity", [x], [og], [og])
    check_backward("negative", [x], [og], [-og])
    check_forward("ones_like", [np.zeros((2, 2), np.int8)], np.ones((2, 2), np.int8))


@pytest.mark.parametrize("req", ["null", "write", "inplace", "add"])
def test_every_req(req):
    x = np.array([0.25, 1.0, 4.0])
    want = np.sqrt(x)
    base = np.full(3, 10.0)
    out = x.copy() if req == "inplace" else base.copy()
    inputs = [out] if req == "inplace" else [x]
    got = run_op("sqrt", inputs, req=req, outputs=[out])[0]
    expected = {"null": base, "write": want, "inplace": want, "add": base + want}[req]
    np.testing.assert_allclose(got, expected)
    assert registry.get("sqrt").get_attr("FInplaceOption")(None) == [(0, 0)]


WIDE = {"exp": (-80, 80), "expm1": (-5, 5), "log": (1e-3, 1e3), "log1p": (-0.9, 10),
        "log2": (1e-3, 1e3), "log10": (1e-3, 1e3)}


@pytest.mark.parametrize("name", sorted(WIDE))
def test_float32_exp_log_family_is_correctly_rounded(name):
    """MXNet's CPU kernels call C's expf, logf, ... (all but always correctly rounded); numpy's
    float32 loops are up to an ulp off, so these ops round the float64 result once."""
    x = _sample(WIDE[name], "float32", (20000,), seed=4)
    want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(run_op(name, [x])[0], want)
    h = x.astype(np.float16)
    with np.errstate(over="ignore"):
        want16 = getattr(np, name)(h.astype(np.float64)).astype(np.float32).astype(np.float16)
    np.testing.assert_array_equal(run_op(name, [h])[0], want16)
    acc = np.ones_like(x)
    np.testing.assert_array_equal(run_op(name, [x], req="add", outputs=[acc])[0], want + 1)


def test_exp_and_its_gradients_are_mxnets():
    e = np.float32(2.71828175)                      # MXNet's exp(1.0f); numpy's float32 loop
    one = np.ones(1, np.float32)                    # gives the next float up
    check_forward("exp", [one], np.array([e]))
    check_backward("exp", [one], [one], [np.array([e])], rtol=0, atol=0)
    # expm1's gradient is og * exp(x) from the input (as MXNet), not from expm1's output + 1
    x = _sample((-5, 5), "float32", (1000,), seed=5)
    og = _sample((-2, 2), "float32", (1000,), seed=6)
    check_backward("expm1", [x], [og], [og * np.exp(x.astype(np.float64)).astype(np.float32)],
                   rtol=0, atol=0)


def test_log_family_gradients_round_as_mxnets():
    x = _sample((0.01, 100), "float32", (1000,), seed=7)
    og = _sample((-2, 2), "float32", (1000,), seed=8)
    check_backward("log", [x], [og], [og * (np.float32(1) / x)], rtol=0, atol=0)
    check_backward("log10", [x], [og], [og * (np.float32(math.log10(math.e)) / x)],
                   rtol=0, atol=0)
    check_backward("log2", [x], [og], [og * (np.float32(math.log2(math.e)) / x)], rtol=0, atol=0)
    h, og16 = x.astype(np.float16), og.astype(np.float16)
    d16 = (np.float32(1) / (h.astype(np.float32) + 1)).astype(np.float16)    # once, in float32
    check_backward("log1p", [h], [og16], [og16 * d16], rtol=0, atol=0)


def test_nan_through_comparison_gradients_as_mxnet():
    x = np.array([np.nan, -1, 0, 2, np.inf], np.float32)
    og = np.full(5, 3, np.float32)
    (g,) = check_backward("relu", [x], [og], [None])
    np.testing.assert_array_equal(g, [np.nan, 0, 0, 3, 3])      # relu_grad keeps NaN
    check_forward("sign", [x], np.array([0, -1, 0, 1, 1], np.float32))
    (g,) = check_backward("abs", [x], [og], [None])
    np.testing.assert_array_equal(g, [0, -3, 0, 3, 3])
    (g,) = check_backward("clip", [x], [og], [None], {"a_min": -0.5, "a_max": 1.5})
    np.testing.assert_array_equal(g, [3, 0, 3, 0, 0])          # NaN is not outside the range


# -- hard_sigmoid (values from MXNet 1.9.1) ------------------------------------------------
def test_hard_sigmoid_matches_mxnet():
    x = np.array([-3, -2.5, -1, 0, 1.3, 2.5, 3], np.float16)
    p = {"alpha": 0.3, "beta": 0.4}
    check_forward("hard_sigmoid", [x], np.array(
        [0, 0, 0.0999755859375, 0.39990234375, 0.7900390625, 1, 1], np.float16), p, atol=0)
    check_backward("hard_sigmoid", [x], [np.ones(7, np.float16)],
                   [np.array([0, 0, 0.300048828125, 0.300048828125, 0.300048828125, 0, 0])], p)
    x = np.array([np.nan, -10, 0.3, 10], np.float32)            # defaults 0.2, 0.5; NaN stays
    check_forward("hard_sigmoid", [x], np.array([np.nan, 0, 0.56, 1], np.float32))


def test_hard_sigmoid_rejects_integers():
    with pytest.raises(TypeInferError, match="hard_sigmoid.*'data' has dtype int32, expected"):
        infer(registry.get("hard_sigmoid"), registry.get("hard_sigmoid").parse_params({}),
              [(2,)], [np.dtype(np.int32)])


def test_hard_sigmoid_frontends():
    import mxnext as mx
    x = mx.nd.array([-4.0, 0.0, 1.0])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.hard_sigmoid(x, alpha=0.25, beta=0.5)
    y.backward()
    np.testing.assert_allclose(y.asnumpy(), [0, 0.5, 0.75])
    np.testing.assert_allclose(x.grad.asnumpy(), [0, 0.25, 0.25])


def test_gamma_and_digamma_at_the_poles_are_mxnets():
    """MXNet 1.9.1: gamma(+-0) = +-inf, nan at negative integers; digamma (the gradients'
    factor) is +inf at every pole, as cephes' psi returns MAXNUM there."""
    from mxnext_ops_tensor import _special
    g = _special.gamma(np, np.array([0.0, -0.0, -1.0, 3.0]))
    np.testing.assert_array_equal(g, [np.inf, -np.inf, np.nan, 2.0])
    psi = _special.digamma(np, np.array([0.0, -1.0, -2.5, 3.0]))
    np.testing.assert_allclose(psi, [np.inf, np.inf, 1.1031568, 0.9227843], rtol=1e-6)
