"""The ``_random_pdf_*`` densities: values against closed forms and MXNet's documented
examples, is_log, broadcasting over the sample's extra dims, gradients against central
differences, shape/dtype inference, errors and the mx.nd / mx.sym frontends."""

import math

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import ShapeError, TypeInferError
from opsdk.testing import check_forward, check_numeric_gradient, infer, op_def, parse, run_op

_gamma, _lgamma = np.vectorize(math.gamma), np.vectorize(math.lgamma)


def _nb(x, k, p):
    return _gamma(x + k) / (_gamma(k) * _gamma(x + 1)) * p ** k * (1 - p) ** x


# kind: (closed-form density in float64, sample domain, parameter domains, discrete sample)
CLOSED = {
    "uniform": (lambda x, lo, hi: np.broadcast_to(1 / (hi - lo), x.shape),
                (-1, 1), [(-3, -1.5), (1.5, 3)], False),
    "normal": (lambda x, m, s: np.exp(-(x - m) ** 2 / (2 * s * s)) / (s * math.sqrt(2 * math.pi)),
               (-3, 3), [(-1, 1), (0.5, 2)], False),
    "gamma": (lambda x, a, b: b ** a * x ** (a - 1) * np.exp(-b * x) / _gamma(a),
              (0.1, 4), [(0.5, 3), (0.5, 2)], False),
    "exponential": (lambda x, lam: lam * np.exp(-lam * x), (0, 3), [(0.5, 2)], False),
    "poisson": (lambda x, lam: lam ** x * np.exp(-lam) / _gamma(x + 1), (0, 9), [(0.5, 4)], True),
    "negative_binomial": (_nb, (0, 9), [(0.5, 3), (0.2, 0.8)], True),
    "generalized_negative_binomial": (lambda x, mu, a: _nb(x, 1 / a, 1 / (1 + mu * a)),
                                      (0, 9), [(0.5, 3), (0.2, 1.5)], True),
}


def _dirichlet(x, alpha):
    a = alpha[:, None, :]
    norm = _gamma(alpha.sum(-1)) / np.prod(_gamma(alpha), axis=-1)
    return norm[:, None] * np.prod(x ** (a - 1), axis=-1)


def _inputs(kind, sample_shape=(2, 3, 4), param_shape=(2, 3), seed=0):
    _, (lo, hi), domains, discrete = CLOSED[kind]
    rng = np.random.default_rng(seed)
    x = rng.integers(lo, hi, sample_shape) if discrete else rng.uniform(lo, hi, sample_shape)
    return [x.astype(np.float64)] + [rng.uniform(a, b, param_shape) for a, b in domains]


def _infer(op, shapes, dtypes):
    opdef = op_def(op)
    return infer(opdef, parse(opdef, {}), shapes, dtypes)


def _spread(params, extra):
    return [p.reshape(p.shape + (1,) * extra) for p in params]


@pytest.mark.parametrize("kind", sorted(CLOSED))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("is_log", [False, True])
def test_values_match_closed_forms(kind, dtype, is_log):
    ref = CLOSED[kind][0]
    x, *params = _inputs(kind)
    want = ref(x, *_spread(params, 1))
    if is_log:
        want = np.log(want)
    rtol = 1e-12 if dtype == "float64" else 2e-6
    check_forward(f"_random_pdf_{kind}", [a.astype(dtype) for a in [x, *params]],
                  want.astype(dtype), params={"is_log": is_log}, rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("is_log", [False, True])
def test_dirichlet_matches_closed_form(dtype, is_log):
    rng = np.random.default_rng(1)
    alpha = rng.uniform(0.5, 3, (2, 4))
    x = np.stack([rng.dirichlet(a, (3,)) for a in alpha])           # (2, 3, 4) on the simplex
    want = _dirichlet(x, alpha)
    check_forward("random_pdf_dirichlet", [x.astype(dtype), alpha.astype(dtype)],
                  (np.log(want) if is_log else want).astype(dtype), params={"is_log": is_log},
                  rtol=1e-12 if dtype == "float64" else 2e-6, atol=0)


@pytest.mark.parametrize("op, inputs, want", [   # examples MXNet 1.9's operator docs give
    ("random_pdf_uniform", [[[1, 2, 3, 4]], [0], [10]], [[0.1] * 4]),
    ("random_pdf_normal", [[[-2, -1, 0, 1, 2]], [0], [1]],
     [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]),
    ("random_pdf_gamma", [[[1, 2, 3, 4, 5]], [5], [1]],           # beta is the rate
     [[0.01532831, 0.09022352, 0.16803136, 0.19536681, 0.17546739]]),
    ("random_pdf_exponential", [[[1, 2, 3]] * 3, [1, 0.5, 0.25]],
     [[0.36787945, 0.13533528, 0.04978707], [0.30326533, 0.18393973, 0.11156508],
      [0.1947002, 0.15163267, 0.11809164]]),
    ("random_pdf_poisson", [[[0, 1, 2, 3]] * 2, [1, 3]],
     [[0.36787945, 0.36787945, 0.18393973, 0.06131324],
      [0.04978707, 0.14936121, 0.22404182, 0.22404182]]),
    ("random_pdf_negative_binomial", [[[1, 2, 3, 4]] * 2, [1, 1.5], [0.5, 0.5]],
     [[0.25, 0.125, 0.0625, 0.03125], [0.26516506, 0.16572815, 0.09667476, 0.05437956]]),
    ("random_pdf_generalized_negative_binomial", [[[1, 2, 3, 4]] * 2, [1, 1.5], [1, 0.6666]],
     [[0.25, 0.125, 0.0625, 0.03125], [0.26517063, 0.16573331, 0.09667706, 0.05437994]]),
    # off the simplex: the sample is not checked
    ("random_pdf_dirichlet", [[[1, 2], [2, 3], [3, 4]], [2.5, 2.5]],
     [38.413498, 199.60245, 564.56085]),
    ("random_pdf_dirichlet", [[[[1, 2, 3], [10, 20, 30], [100, 200, 300]],
                               [[0.1, 0.2, 0.3], [0.01, 0.02, 0.03], [0.001, 0.002, 0.003]]],
                              [0.1, 0.4, 0.9]],                 # one alpha for all
     [[2.3257459e-02, 5.8420084e-04, 1.4674458e-05],
      [9.2589635e-01, 3.6860607e+01, 1.4674468e+03]]),
])
def test_mxnet_documented_values(op, inputs, want):
    check_forward(op, [np.array(a, np.float32) for a in inputs], np.array(want, np.float32),
                  rtol=2e-6, atol=0)


def test_dirichlet_single_vector_gives_shape_1():
    out = run_op("random_pdf_dirichlet", [np.array([0.2, 0.8]), np.array([2.0, 3.0])])[0]
    assert out.shape == (1,)
    np.testing.assert_allclose(out, [12 * 0.2 * 0.8 ** 2], rtol=1e-14)


@pytest.mark.parametrize("kind", sorted(CLOSED))
def test_parameters_broadcast_over_the_sample_extra_dims(kind):
    """Parameters (2, 3) over samples (2, 3, 4, 5) = the parameters repeated to (2, 3, 4, 5)."""
    x, *params = _inputs(kind, (2, 3, 4, 5), (2, 3), seed=3)
    full = [np.broadcast_to(p[..., None, None], x.shape).copy() for p in params]
    for is_log in (False, True):
        got = run_op(f"_random_pdf_{kind}", [x, *params], {"is_log": is_log})[0]
        np.testing.assert_allclose(got, run_op(f"_random_pdf_{kind}", [x, *full],
                                               {"is_log": is_log})[0], rtol=1e-14)


def test_dirichlet_broadcasts_alpha_over_extra_dims():
    rng = np.random.default_rng(4)
    alpha, x = rng.uniform(0.5, 3, (2, 3)), rng.uniform(0.05, 1, (2, 4, 5, 3))
    got = run_op("_random_pdf_dirichlet", [x, alpha], {"is_log": True})[0]
    assert got.shape == (2, 4, 5)
    for i in range(2):
        np.testing.assert_allclose(got[i], np.log(_dirichlet(x[i].reshape(1, 20, 3),
                                                             alpha[i:i + 1])).reshape(4, 5),
                                   rtol=1e-12)


@pytest.mark.parametrize("kind", sorted(CLOSED))
def test_is_log_is_the_log_of_the_density(kind):
    ins = _inputs(kind, seed=5)
    pdf = run_op(f"_random_pdf_{kind}", ins)[0]
    logpdf = run_op(f"_random_pdf_{kind}", ins, {"is_log": "True"})[0]
    np.testing.assert_allclose(logpdf, np.log(pdf), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("kind", sorted(CLOSED) + ["dirichlet"])
@pytest.mark.parametrize("is_log", [False, True])
def test_gradients_match_central_differences(kind, is_log):
    """Every parameter (summed over its samples) and, for continuous distributions, the
    sample itself; the discrete ones are not differentiated in the sample."""
    if kind == "dirichlet":
        rng = np.random.default_rng(6)
        ins, grad = [rng.uniform(0.1, 1, (2, 3, 4)), rng.uniform(0.5, 3, (2, 4))], [0, 1]
    else:
        ins = _inputs(kind, (2, 3, 4), (2, 3), seed=6)
        grad = list(range(1 if CLOSED[kind][3] else 0, len(ins)))
    check_numeric_gradient(f"_random_pdf_{kind}", ins, {"is_log": is_log}, grad, rtol=1e-5,
                           atol=1e-8)


@pytest.mark.parametrize("kind", ["uniform", "poisson", "negative_binomial",
                                  "generalized_negative_binomial"])
def test_sample_gradient_is_zero_where_mxnet_gives_none(kind):
    x, *params = [mx.nd.array(a) for a in _inputs(kind, seed=7)]
    x.attach_grad()
    with mx.autograd.record():
        y = getattr(mx.nd, f"random_pdf_{kind}")(x, *params)
    y.backward()
    assert not x.grad.asnumpy().any()


def test_gamma_alpha_gradient_uses_an_exact_digamma():
    """d log p / d alpha = log beta + log x - psi(alpha); psi(1) = -Euler's gamma,
    psi(0.5) = -Euler's gamma - 2 log 2, psi(7) = H_6 - Euler's gamma."""
    euler = 0.57721566490153286
    alpha = np.array([1.0, 0.5, 7.0])
    x, beta = np.ones((3, 2)), np.ones(3)
    y = mx.nd.array(alpha, dtype="float64")
    y.attach_grad()
    with mx.autograd.record():
        out = mx.nd.random_pdf_gamma(mx.nd.array(x, dtype="float64"), y,
                                     mx.nd.array(beta, dtype="float64"), is_log=True)
    out.backward()
    psi = np.array([-euler, -euler - 2 * math.log(2), sum(1 / k for k in range(1, 7)) - euler])
    np.testing.assert_allclose(y.grad.asnumpy(), -2 * psi, rtol=1e-12)


def test_gradients_honour_add_requests():
    s = mx.sym.random_pdf_normal(mx.sym.var("x"), mx.sym.var("mu"), mx.sym.var("sigma"))
    x, mu, sigma = _inputs("normal", (2, 3), (2,), seed=8)
    args = {k: mx.nd.array(v, dtype="float64") for k, v in zip(("x", "mu", "sigma"),
                                                                 (x, mu, sigma))}
    grads = {k: mx.nd.ones(v.shape, dtype="float64") for k, v in args.items()}
    ex = s.bind(mx.cpu(), args, args_grad=grads, grad_req="add")
    ex.forward(is_train=True)
    ex.backward(mx.nd.ones((2, 3), dtype="float64"))
    pdf = CLOSED["normal"][0](x, mu[:, None], sigma[:, None])
    z = (x - mu[:, None]) / sigma[:, None]
    np.testing.assert_allclose(grads["x"].asnumpy(), 1 - pdf * z / sigma[:, None], rtol=1e-12)
    np.testing.assert_allclose(grads["mu"].asnumpy(), 1 + (pdf * z / sigma[:, None]).sum(1),
                               rtol=1e-12)
    np.testing.assert_allclose(grads["sigma"].asnumpy(),
                               1 + (pdf * (z * z - 1) / sigma[:, None]).sum(1), rtol=1e-12)


@pytest.mark.parametrize("op, shapes, out", [
    ("_random_pdf_normal", [(2, 3, 4), (2, 3), (2, 3)], (2, 3, 4)),
    ("_random_pdf_normal", [(2, 3, 4), (2,), None], (2, 3, 4)),
    ("_random_pdf_normal", [(5,), (5,), (5,)], (5,)),
    ("_random_pdf_poisson", [(2, 3, 4), (2, 3, 4)], (2, 3, 4)),
    ("_random_pdf_dirichlet", [(2, 3, 4), (2, 4)], (2, 3)),
    ("_random_pdf_dirichlet", [(2, 3, 4), (2, 3, 4)], (2, 3)),
    ("_random_pdf_dirichlet", [(2, 3, 4), (4,)], (2, 3)),
    ("_random_pdf_dirichlet", [(4,), (4,)], (1,)),
])
def test_shape_inference(op, shapes, out):
    in_s, out_s, _, _ = _infer(op, shapes, ["float32"] * len(shapes))
    assert out_s == [out]
    assert in_s[1:] == [in_s[1]] * (len(shapes) - 1)    # unknown parameters filled in


def test_shape_inference_waits_for_sample_and_a_parameter():
    s = mx.sym.random_pdf_gamma(mx.sym.var("x"), mx.sym.var("a"), mx.sym.var("b"))
    assert s.infer_shape_partial(x=(3, 4))[1] == [()]      # unknown, as in MXNet
    assert s.infer_shape(x=(3, 4), a=(3,)) == ([(3, 4), (3,), (3,)], [(3, 4)], [])


@pytest.mark.parametrize("op, shapes, message", [
    ("_random_pdf_normal", [(3,), (2,), (3,)],
     r"'_random_pdf_normal': mu has shape \(2,\), expected \(3,\)"),
    ("_random_pdf_normal", [(3, 4), (3,), (4,)],
     r"'_random_pdf_normal': sigma has shape \(4,\), expected \(3,\)"),
    ("_random_pdf_exponential", [(3,), (1, 3)],
     r"'_random_pdf_exponential': lam has 2 dims, more than sample \(3,\)"),
    ("_random_pdf_dirichlet", [(2, 2), (3,)],
     r"'_random_pdf_dirichlet': alpha has shape \(3,\), expected \(2,\)"),
    ("_random_pdf_dirichlet", [(2, 2), (1, 2)],
     r"alpha has shape \(1, 2\), expected \(2, 2\)"),
    ("_random_pdf_dirichlet", [(2, 2), ()], r"'_random_pdf_dirichlet': alpha needs at least 1"),
])
def test_shape_errors_name_the_op_and_argument(op, shapes, message):
    with pytest.raises(ShapeError, match=message):
        _infer(op, shapes, ["float32"] * len(shapes))


def test_dtype_errors_name_the_op_and_argument():
    with pytest.raises(TypeInferError, match=r"'_random_pdf_gamma': beta has dtype float64, "
                                             r"expected float32 \(the dtype of sample\)"):
        _infer("_random_pdf_gamma", [(2,)] * 3, ["float32", "float32", "float64"])
    s = mx.sym.random_pdf_uniform(mx.sym.var("x"), mx.sym.var("lo"), mx.sym.var("hi"))
    assert s.infer_type(hi="float16") == ([np.float16] * 3, [np.float16], [])


def test_integer_dtypes_are_rejected_at_type_inference():
    """MXNet's kernels fail on them when they run; here both frontends stop before that."""
    a = mx.nd.array([1, 2], dtype="int32")
    s = mx.sym.random_pdf_poisson(mx.sym.var("x"), mx.sym.var("lam"))
    msg = r"_random_pdf_poisson.*input 'sample' has dtype int32, expected float16, float32 or"
    with pytest.raises(TypeInferError, match=msg):
        s.infer_type(x="int32")
    with pytest.raises(TypeInferError, match=msg):
        mx.nd.random_pdf_poisson(a, a)


def test_float16_is_computed_wide_and_rounded_once():
    ins = _inputs("gamma", seed=9)
    want = run_op("_random_pdf_gamma", ins)[0]
    got = run_op("_random_pdf_gamma", [a.astype(np.float16) for a in ins])[0]
    assert got.dtype == np.float16
    wide = run_op("_random_pdf_gamma", [a.astype(np.float16).astype(np.float64) for a in ins])[0]
    np.testing.assert_array_equal(got, wide.astype(np.float16))
    np.testing.assert_allclose(got, want, rtol=5e-2)


def test_frontends_and_argument_names():
    s = mx.sym.random_pdf_generalized_negative_binomial(mx.sym.var("x"), mx.sym.var("m"),
                                                        mx.sym.var("a"), is_log=True)
    assert s.list_arguments() == ["x", "m", "a"]
    named = mx.sym.random_pdf_negative_binomial(name="nb")
    assert named.list_arguments() == ["nb_sample", "nb_k", "nb_p"]
    x = mx.nd.array([[1.0, 2.0]])
    by_name = mx.nd.random_pdf_normal(sample=x, mu=mx.nd.array([0.5]), sigma=mx.nd.array([2]))
    internal = mx.nd._internal._random_pdf_normal(x, mx.nd.array([0.5]), mx.nd.array([2]))
    np.testing.assert_array_equal(by_name.asnumpy(), internal.asnumpy())
    np.testing.assert_allclose(by_name.asnumpy(), CLOSED["normal"][0](
        np.array([[1.0, 2.0]]), 0.5, 2.0), rtol=1e-6)
