"""LeakyReLU: every act_type against formulas, prelu broadcasting and gamma gradient, rrelu
in training and inference, erf accuracy, inference and errors."""

import math

import numpy as np
import pytest
from opsdk import ShapeError
from opsdk.testing import (check_backward, check_forward, check_numeric_gradient, infer, op_def,
                           parse, run_op)

from mxnext_ops_nn.leaky_relu import SELU_ALPHA, SELU_LAMBDA, erf

X = np.linspace(-4, 4, 33).reshape(3, 11)


def test_erf_matches_math_erf():
    xs = np.concatenate([np.linspace(-7, 7, 1401), [0.0, 1e-8, -3.3]])
    want = np.array([math.erf(v) for v in xs])
    np.testing.assert_allclose(erf(xs), want, rtol=0, atol=5e-15)


@pytest.mark.parametrize("act_type, f, df", [
    ("leaky", lambda x: np.where(x > 0, x, 0.1 * x), lambda x: np.where(x > 0, 1, 0.1)),
    ("elu", lambda x: np.where(x > 0, x, 0.1 * np.expm1(x)),
     lambda x: np.where(x > 0, 1, 0.1 * np.exp(x))),
    # the true derivative (MXNet 1.9 returns lambda*(alpha + out) below zero instead)
    ("selu", lambda x: SELU_LAMBDA * np.where(x > 0, x, SELU_ALPHA * np.expm1(x)),
     lambda x: SELU_LAMBDA * np.where(x > 0, 1, SELU_ALPHA * np.exp(x))),
    ("gelu", lambda x: np.array([0.5 * v * (1 + math.erf(v / math.sqrt(2))) for v in x.flat]
                                ).reshape(x.shape),
     lambda x: np.array([0.5 * (1 + math.erf(v / math.sqrt(2)))
                         + v * math.exp(-v * v / 2) / math.sqrt(2 * math.pi) for v in x.flat]
                        ).reshape(x.shape)),
])
def test_forward_and_gradient(act_type, f, df):
    kw = {"act_type": act_type, "slope": 0.1}
    check_forward("LeakyReLU", [X], f(X), kw, rtol=1e-12, atol=1e-12)
    gy = np.random.default_rng(0).standard_normal(X.shape)
    check_backward("LeakyReLU", [X], [gy], [gy * df(X)], kw, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("gamma_shape, expand", [((3,), (1, 3, 1)), ((1,), (1, 1, 1)),
                                                 ((2, 3), (2, 3, 1))])
def test_prelu_broadcasts_gamma_on_leading_axes(gamma_shape, expand):
    rng = np.random.default_rng(1)
    x, gamma = rng.standard_normal((2, 3, 4)), rng.uniform(0.1, 0.5, gamma_shape)
    g = gamma.reshape(expand)
    check_forward("LeakyReLU", [x, gamma], np.where(x > 0, x, g * x), {"act_type": "prelu"})
    gy = rng.standard_normal(x.shape)
    axes = tuple(i for i, n in enumerate(expand) if n == 1)
    gg = (gy * np.minimum(x, 0)).sum(axis=axes).reshape(gamma_shape)
    check_backward("LeakyReLU", [x, gamma], [gy], [gy * np.where(x > 0, 1, g), gg],
                   {"act_type": "prelu"})


def test_prelu_gamma_inferred_per_channel_and_named():
    opdef = op_def("LeakyReLU")
    p = parse(opdef, {"act_type": "prelu"})
    assert opdef.list_input_names(p) == ["data", "gamma"]
    ins, outs, _, _ = infer(opdef, p, [(4, 7, 5, 5), None], ["float32", None])
    assert ins[1] == (7,) and outs == [(4, 7, 5, 5)]
    with pytest.raises(ShapeError, match="Operator 'LeakyReLU': cannot broadcast gamma"):
        opdef.get_attr("FInferShape")(p, [(4, 7, 5), (5,)], [None])


def test_rrelu_random_slopes_in_training_and_mean_slope_at_inference():
    kw = {"act_type": "rrelu", "lower_bound": 0.2, "upper_bound": 0.4}
    x = -np.ones((50, 40))
    out, mask = run_op("LeakyReLU", [x], kw, seed=3)
    assert ((mask >= 0.2) & (mask < 0.4)).all() and mask.std() > 0.05
    np.testing.assert_array_equal(out, x * mask)
    again = run_op("LeakyReLU", [x], kw, seed=3)[1]
    np.testing.assert_array_equal(mask, again)                 # the RANDOM resource's stream
    pos = run_op("LeakyReLU", [-x], kw, seed=3)[0]
    np.testing.assert_array_equal(pos, -x)
    out, mask = run_op("LeakyReLU", [x], kw, is_train=False)
    np.testing.assert_allclose(out, -0.3 * np.ones(x.shape))
    np.testing.assert_allclose(mask, 0.3)
    assert op_def("LeakyReLU").num_visible_outputs(parse(op_def("LeakyReLU"), kw)) == 2


def test_rrelu_gradient_uses_the_drawn_slopes():
    check_numeric_gradient("LeakyReLU", [np.linspace(-1, 1, 12).reshape(3, 4) + 0.01],
                           {"act_type": "rrelu"}, seed=5)
