"""_contrib_round_ste and _contrib_sign_ste: round and sign forward (values as MXNet 1.9.1
printed them), the head gradient passed through unchanged."""

import numpy as np

import mxnext as mx
from opsdk.testing import check_backward, check_forward

X = np.array([-2.5, -1.5, -0.5, -0.49, 0.5, 1.5, 2.5, 3.7, -3.7, 0, np.nan, np.inf], np.float32)
# mx.nd.contrib.round_ste(X) and sign_ste(X) as MXNet 1.9.1 printed them
ROUND = np.array([-3, -2, -1, -0., 1, 2, 3, 4, -4, 0, np.nan, np.inf], np.float32)
SIGN = np.array([-1, -1, -1, -1, 1, 1, 1, 1, -1, 0, 0, 1], np.float32)


def test_forward_matches_mxnet():
    check_forward("_contrib_round_ste", [X], ROUND, atol=0, rtol=0)
    check_forward("_contrib_round_ste", [X.astype(np.float16)], ROUND.astype(np.float16))
    check_forward("_contrib_sign_ste", [X], SIGN, atol=0, rtol=0)
    ints = np.array([-2, 0, 3], np.int32)
    check_forward("_contrib_round_ste", [ints], ints)
    check_forward("_contrib_sign_ste", [ints], np.array([-1, 0, 1], np.int32))


def test_gradient_passes_through():
    og = np.array([1, -2, 3, 0.5, 4, 5, 6, 7, 8, 9, 10, 11], np.float32)
    for op in ("_contrib_round_ste", "_contrib_sign_ste"):
        check_backward(op, [X], [og], [og], atol=0, rtol=0)
    x = mx.nd.array([-1.5, 1.5, -1.9, 1.9, 2.7])
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.contrib.round_ste(x) * mx.nd.contrib.sign_ste(x)
    y.backward()
    # d/dx (round(x) sign(x)) with both straight through: sign(x) + round(x)
    np.testing.assert_array_equal(x.grad.asnumpy(), [-3, 3, -3, 3, 4])


def test_symbols():
    a = mx.sym.var("a")
    for s in (mx.sym.contrib.round_ste(a), mx.sym.contrib.sign_ste(a)):
        assert s.list_arguments() == ["a"] and s.infer_shape(a=(3, 2))[1] == [(3, 2)]
