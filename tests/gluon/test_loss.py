"""gluon.loss: each loss against its formula in numpy, with sample weights, the scalar
weight and batch_axis; hybridized equal to imperative, values and gradients; CTC against
a sum over every alignment."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import mxnext as mx
from mxnext import autograd, gluon
from mxnext.gluon import loss as L

rng = np.random.default_rng(7)
X = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
Y = rng.uniform(-2, 2, (4, 5)).astype(np.float32)
P01 = rng.uniform(0.05, 0.95, (4, 5)).astype(np.float32)
BIN = rng.integers(0, 2, (4, 5)).astype(np.float32)
SIGN = np.where(rng.uniform(-1, 1, (4, 5)) > 0, 1, -1).astype(np.float32)
SW = rng.uniform(0.1, 1, (4, 1)).astype(np.float32)
CLS = rng.integers(0, 5, (4,)).astype(np.float32)
POSW = rng.uniform(0.5, 3, (1, 5)).astype(np.float32)


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def sigmoid(x):
    return 1 / (1 + np.exp(-x))


def relu(x):
    return np.maximum(x, 0)


PROB = softmax(Y)

# name: (loss, inputs, numpy value per sample)
CASES = {
    "l2": (L.L2Loss(), [X, Y, SW], ((X - Y) ** 2 / 2 * SW).mean(1)),
    "l2_weight": (L.L2Loss(weight=3.), [X, Y], ((X - Y) ** 2 * 1.5).mean(1)),
    "l1": (L.L1Loss(weight=0.5), [X, Y, SW], (abs(X - Y) * 0.5 * SW).mean(1)),
    "bce": (L.SigmoidBinaryCrossEntropyLoss(), [X, BIN, SW],
            (-(BIN * np.log(sigmoid(X)) + (1 - BIN) * np.log(1 - sigmoid(X))) * SW).mean(1)),
    "bce_pos_weight": (L.SigmoidBCELoss(), [X, BIN, None, POSW],
                       (-(BIN * np.log(sigmoid(X)) * POSW
                          + (1 - BIN) * np.log(1 - sigmoid(X)))).mean(1)),
    "bce_from_sigmoid": (L.SigmoidBCELoss(from_sigmoid=True), [P01, BIN, SW, POSW],
                         (-(BIN * np.log(P01) * POSW + (1 - BIN) * np.log(1 - P01))
                          * SW).mean(1)),
    "ce": (L.SoftmaxCrossEntropyLoss(), [X, CLS, SW],
           -np.log(softmax(X)[np.arange(4), CLS.astype(int)]) * SW[:, 0]),
    "ce_dense": (L.SoftmaxCELoss(sparse_label=False), [X, PROB],
                 -(np.log(softmax(X)) * PROB).sum(1)),
    "ce_from_logits": (L.SoftmaxCELoss(from_logits=True), [np.log(PROB), CLS],
                       -np.log(PROB[np.arange(4), CLS.astype(int)])),
    "kl": (L.KLDivLoss(), [np.log(PROB), P01, SW],
           (P01 * (np.log(P01) - np.log(PROB)) * SW).sum(1)),
    "kl_not_logits": (L.KLDivLoss(from_logits=False), [X, PROB],
                      (PROB * (np.log(PROB) - np.log(softmax(X)))).sum(1)),
    "huber": (L.HuberLoss(rho=0.7), [X, Y, SW],
              (np.where(abs(X - Y) > 0.7, abs(X - Y) - 0.35, (X - Y) ** 2 / 1.4) * SW).mean(1)),
    "hinge": (L.HingeLoss(), [X, SIGN, SW], (relu(1 - X * SIGN) * SW).mean(1)),
    "squared_hinge": (L.SquaredHingeLoss(margin=2), [X, SIGN],
                      (relu(2 - X * SIGN) ** 2).mean(1)),
    "logistic": (L.LogisticLoss(), [X, SIGN, SW], (np.log1p(np.exp(-X * SIGN)) * SW).mean(1)),
    "logistic_binary": (L.LogisticLoss(label_format="binary"), [X, BIN],
                        np.log1p(np.exp(-X * (2 * BIN - 1))).mean(1)),
    "triplet": (L.TripletLoss(margin=0.5), [X, Y, P01],
                relu(((Y - X) ** 2).sum(1) - ((P01 - X) ** 2).sum(1) + 0.5)),
    "poisson": (L.PoissonNLLLoss(), [X, 3 * P01, SW],
                np.array([((np.exp(X) - 3 * P01 * X) * SW).mean()])),
    "poisson_full": (L.PoissonNLLLoss(from_logits=False, compute_full=True),
                     [P01 + 1, 4 * P01 + 0.5],
                     np.array([(P01 + 1 - (4 * P01 + 0.5) * np.log(P01 + 1 + 1e-8)
                                + np.where(4 * P01 + 0.5 > 1,
                                           (4 * P01 + 0.5) * np.log(4 * P01 + 0.5)
                                           - (4 * P01 + 0.5)
                                           + 0.5 * np.log(2 * np.pi * (4 * P01 + 0.5)),
                                           0)).mean()])),
}


def _cosine_case():
    label = np.array([1, -1, 1, -1], np.float32)
    cos = (X * Y).sum(1) / np.linalg.norm(X, axis=1) / np.linalg.norm(Y, axis=1)
    want = np.where(label == 1, 1 - cos, relu(cos - 0.1))[:, None]
    return L.CosineEmbeddingLoss(margin=0.1), [X, Y, label], want


def _sdml_case():
    d = ((X[:, None, :] - Y[None, :, :]) ** 2).sum(2)
    logp = np.log(softmax(-d, axis=1))
    labels = np.full((4, 4), 0.3 / 3) + np.eye(4) * (0.7 - 0.1)
    return L.SDMLLoss(), [X, Y], (labels * (np.log(labels) - logp)).sum(1)


CASES["cosine"] = _cosine_case()
CASES["sdml"] = _sdml_case()


def _nd(values):
    return [None if v is None else mx.nd.array(v) for v in values]


def _run(loss, values, hybridize):
    loss.hybridize(hybridize)
    args = _nd(values)
    args[0].attach_grad()
    with autograd.record():
        out = loss(*args)
    out.backward()
    return out.asnumpy(), args[0].grad.asnumpy()


@pytest.mark.parametrize("name", sorted(CASES))
def test_value_matches_the_formula(name):
    loss, values, want = CASES[name]
    got = loss(*_nd(values)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hybridized_equals_imperative_values_and_gradients(name):
    loss, values, _ = CASES[name]
    value, grad = _run(loss, values, False)
    h_value, h_grad = _run(loss, values, True)
    assert loss._cached_op is not None          # it ran as one graph
    np.testing.assert_allclose(h_value, value, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(h_grad, grad, rtol=1e-5, atol=1e-6)
    loss.hybridize(False)


def _numeric_grad(loss, values, eps=1e-3):
    """d sum(loss) / d values[0], central differences in float64 inputs."""
    base = values[0].astype(np.float64)
    grad = np.zeros_like(base)
    for idx in np.ndindex(base.shape):
        total = []
        for sign in (1, -1):
            x = base.copy()
            x[idx] += sign * eps
            total.append(loss(*_nd([x.astype(np.float32)] + values[1:])).asnumpy()
                         .astype(np.float64).sum())
        grad[idx] = (total[0] - total[1]) / (2 * eps)
    return grad


@pytest.mark.parametrize("name", ["l2", "bce", "bce_pos_weight", "ce", "ce_dense", "kl",
                                  "kl_not_logits", "logistic", "triplet", "poisson",
                                  "cosine", "sdml"])
def test_gradient_matches_finite_differences(name):
    loss, values, _ = CASES[name]
    _, grad = _run(loss, values, False)
    np.testing.assert_allclose(grad, _numeric_grad(loss, values), rtol=2e-2, atol=2e-3)


def test_analytic_gradients_of_the_simple_losses():
    _, grad = _run(L.L2Loss(weight=2.), [X, Y], False)
    np.testing.assert_allclose(grad, (X - Y) * 2 / 5, rtol=1e-5)
    _, grad = _run(L.SigmoidBCELoss(), [X, BIN], False)
    np.testing.assert_allclose(grad, (sigmoid(X) - BIN) / 5, rtol=1e-4, atol=1e-6)
    _, grad = _run(L.SoftmaxCELoss(), [X, CLS], False)
    np.testing.assert_allclose(grad, softmax(X) - np.eye(5)[CLS.astype(int)], rtol=1e-4,
                               atol=1e-6)
    _, grad = _run(L.HingeLoss(), [X, SIGN], False)
    np.testing.assert_allclose(grad, np.where(1 - X * SIGN > 0, -SIGN, 0) / 5)


def test_batch_axis_averages_every_other_axis():
    x, y = X.T.copy(), Y.T.copy()          # samples along axis 1
    got = L.L2Loss(batch_axis=1)(mx.nd.array(x), mx.nd.array(y)).asnumpy()
    np.testing.assert_allclose(got, ((X - Y) ** 2 / 2).mean(1), rtol=1e-5)
    x3 = rng.uniform(-1, 1, (3, 4, 2)).astype(np.float32)
    got = L.L1Loss(batch_axis=1)(mx.nd.array(x3), mx.nd.zeros((3, 4, 2))).asnumpy()
    np.testing.assert_allclose(got, abs(x3).mean((0, 2)), rtol=1e-5)


def test_softmax_ce_over_another_axis_and_a_label_of_any_shape():
    got = L.SoftmaxCELoss(axis=0, batch_axis=1)(mx.nd.array(X), mx.nd.array([0, 3, 1, 2, 0]))
    want = -np.log(softmax(X, axis=0)[[0, 3, 1, 2, 0], np.arange(5)])
    np.testing.assert_allclose(got.asnumpy(), want, rtol=1e-4)
    flat = L.L2Loss()(mx.nd.array(X), mx.nd.array(Y.reshape(-1)))   # reshaped like pred
    np.testing.assert_allclose(flat.asnumpy(), ((X - Y) ** 2 / 2).mean(1), rtol=1e-5)


@pytest.mark.parametrize("bad, shown", [(5, "5.0"), (-1, "-1.0"), (np.nan, "nan")])
def test_softmax_ce_refuses_a_label_out_of_range_or_nan(bad, shown):
    # MXNet's pick clips the index: a NaN label for 3 classes gave a loss of log 3
    label = mx.nd.array([[0, 2], [bad, 1]])
    for loss, pred in ((L.SoftmaxCELoss(), mx.nd.zeros((2, 2, 3))),
                       (L.SoftmaxCELoss(axis=1, from_logits=True), mx.nd.zeros((2, 3, 2)))):
        with pytest.raises(mx.base.MXNetError, match=rf"^SoftmaxCrossEntropyLoss: label {shown} "
                                                     rf"is not a class index in \[0, 3\)$"):
            loss(pred, label)
    ok = L.SoftmaxCELoss()(mx.nd.zeros((2, 3)), mx.nd.array([2.7, 0]))   # truncated, as MXNet
    np.testing.assert_allclose(ok.asnumpy(), [math.log(3)] * 2, rtol=1e-6)


def _ctc_brute_force(logits, label):
    """-log P(label | logits) by summing every alignment (blank = last class)."""
    probs = softmax(logits.astype(np.float64))
    steps, classes = probs.shape
    blank = classes - 1
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        collapsed = [c for i, c in enumerate(path) if c != blank and (i == 0 or c != path[i - 1])]
        if collapsed == list(label):
            total += np.prod(probs[np.arange(steps), path])
    return -np.log(total)


def test_ctc_equals_the_sum_over_alignments_with_lengths_and_layouts():
    pred = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)       # NTC, 2 letters + blank
    label = np.array([[0, 1, -1], [1, 1, 0]], np.float32)
    want = [_ctc_brute_force(pred[0], [0, 1]), _ctc_brute_force(pred[1], [1, 1, 0])]
    got = L.CTCLoss()(mx.nd.array(pred), mx.nd.array(label)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    tnc = L.CTCLoss(layout="TNC", label_layout="TN")
    got = tnc(mx.nd.array(pred.transpose(1, 0, 2)), mx.nd.array(label.T)).asnumpy()
    np.testing.assert_allclose(got, want, rtol=1e-4)
    # lengths: the first sample uses 4 steps and 1 letter, the padding is ignored
    got = L.CTCLoss()(mx.nd.array(pred), mx.nd.array([[1, 0, 0], [1, 1, 0]]),
                      mx.nd.array([4, 5]), mx.nd.array([1, 3])).asnumpy()
    np.testing.assert_allclose(got, [_ctc_brute_force(pred[0, :4], [1]), want[1]], rtol=1e-4)
    weighted = L.CTCLoss(weight=0.5)(mx.nd.array(pred), mx.nd.array(label), None, None,
                                     mx.nd.array([1., 2.]))
    np.testing.assert_allclose(weighted.asnumpy(), [0.5 * want[0], want[1]], rtol=1e-4)


def test_ctc_hybridized_equals_imperative_with_lengths():
    pred = rng.uniform(-1, 1, (2, 5, 3)).astype(np.float32)
    inputs = [pred, np.array([[1, 0, 0], [1, 1, 0]], np.float32), None,
              np.array([1, 3], np.float32)]
    loss = L.CTCLoss()
    value, grad = _run(loss, inputs, False)
    h_value, h_grad = _run(loss, inputs, True)
    assert loss._cached_op is not None
    np.testing.assert_allclose(h_value, value, rtol=1e-5)
    np.testing.assert_allclose(h_grad, grad, rtol=1e-5, atol=1e-6)


def test_ctc_gradient_matches_finite_differences():
    pred = rng.uniform(-1, 1, (1, 4, 3)).astype(np.float32)
    label = np.array([[1, 0]], np.float32)
    loss = L.CTCLoss()
    _, grad = _run(loss, [pred, label], False)
    np.testing.assert_allclose(grad, _numeric_grad(loss, [pred, label]), rtol=2e-2, atol=2e-3)


def test_losses_compose_into_symbols_for_module():
    data, label = mx.sym.var("data"), mx.sym.var("label")
    out = L.SoftmaxCELoss()(data, label)
    assert isinstance(out, mx.sym.Symbol)
    assert out.list_arguments() == ["data", "label"]
    value = out.eval(ctx=mx.cpu(), data=mx.nd.array(X), label=mx.nd.array(CLS))[0]
    np.testing.assert_allclose(value.asnumpy(), CASES["ce"][2] / SW[:, 0], rtol=1e-4)


def test_arguments_are_checked_and_named():
    with pytest.raises(ValueError, match="LogisticLoss: label_format must be 'signed' or "
                                         "'binary', got 'ternary'"):
        L.LogisticLoss(label_format="ternary")
    with pytest.raises(ValueError, match="CTCLoss: layout must be 'NTC' or 'TNC', got 'NCT'"):
        L.CTCLoss(layout="NCT")
    with pytest.raises(ValueError, match="CTCLoss: label_layout must be 'NT' or 'TN'"):
        L.CTCLoss(label_layout="N")
    with pytest.raises(TypeError, match="L1Loss: weight must be a number or None, got str"):
        L.L1Loss(weight="0.5")


def test_aliases_and_repr():
    assert gluon.loss.SigmoidBCELoss is gluon.loss.SigmoidBinaryCrossEntropyLoss
    assert gluon.loss.SoftmaxCELoss is gluon.loss.SoftmaxCrossEntropyLoss
    assert repr(L.L2Loss()) == "L2Loss(batch_axis=0, w=1.0)"
    assert isinstance(L.HuberLoss(), gluon.HybridBlock)
