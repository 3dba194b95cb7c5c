"""_contrib_hawkesll: log-likelihood, out_state and gradients as MXNet 1.9.1 printed them (the
expected arrays below), the gradients MXNet leaves out (state, lags, max_time, and those
through out_state) against central differences, and the errors."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import MXNetError, ShapeError, TypeInferError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient

OP = "_contrib_hawkesll"


def inputs(dtype="float32", valid_length=(7, 9), max_time=16.0):
    f = np.dtype(dtype).type
    lags = np.array([[6, 7, 8, 9, 3, 2, 5, 1, 7], [1, 2, 3, 4, 2, 1, 2, 1, 4]], f) * f(0.3)
    return [np.tile(np.array([1.5, 2.0, 3.0], f), (2, 1)), np.array([0.2, 0.3, 0.4], f),
            np.array([2.0, 2.0, 2.0], f), np.array([[0.5, 0.1, 0.0], [1.0, 2.0, 0.3]], f), lags,
            np.array([[0, 1, 2, 1, 0, 2, 1, 0, 2], [1, 2, 0, 0, 0, 2, 2, 1, 0]], np.int32),
            np.array(valid_length, f), np.full(2, max_time, f)]


# MXNet 1.9.1: nd.contrib.hawkesll(*inputs()) and, for the head gradient [1, -2] of the
# log-likelihood, the gradients of lda, alpha and beta (it leaves state's at 0)
LL = [-101.13783264160156, -100.72111511230469]
OUT_STATE = [[5.030452030041488e-06, 0.0003362941788509488, 1.6705454982002266e-05],
             [2.083701655664072e-09, 1.870321258978791e-10, 1.336073890412237e-10]]
G_LDA = [[-14.669086456298828, -14.500383377075195, -15.333353042602539],
         [26.820144653320312, 30.24779510498047, 30.058847427368164]]
G_ALPHA = [6.367067337036133, 3.2509279251098633, 4.1588134765625]
G_BETA = [0.09574191272258759, -0.10079646855592728, 0.029789891093969345]
# the same in float16, and in float64 with valid_length (2.5, 0) (MXNet rounds exp and log to
# float32 there, hence rtol 1e-7 below)
LL16, OUT_STATE16 = [-101.1875, -100.75], [[5.0067901611328125e-06, 0.0003364086151123047,
                                            1.6689300537109375e-05], [0, 0, 0]]
LL_SHORT = [-102.82912653414242, -104.91999999999999]
G_LDA_SHORT = [[-15.335753292555788, -15.50000614594797, -15.666666666666666], [32, 32, 32]]


def nd(xs):
    """NDArrays of ``xs`` keeping their dtypes (mx.nd.array makes float32 by default)."""
    return [mx.nd.array(a, dtype=a.dtype) for a in xs]


def _run(xs):
    return mx.nd.contrib.hawkesll(*nd(xs))[0].asnumpy()


def test_forward_matches_mxnet():
    f32 = np.float32
    check_forward(OP, inputs(), [np.array(LL, f32), np.array(OUT_STATE, f32)], rtol=1e-6)
    check_forward(OP, inputs("float16"), [np.array(LL16, np.float16),
                                          np.array(OUT_STATE16, np.float16)], rtol=1e-3)
    ll, _ = mx.nd.contrib.hawkesll(*nd(inputs("float64", (2.5, 0))))
    np.testing.assert_allclose(ll.asnumpy(), LL_SHORT, rtol=1e-7)


def test_gradients_match_mxnet():
    head = np.array([1, -2], np.float32)
    got = check_backward(OP, inputs(), [head], [np.array(G_LDA), np.array(G_ALPHA),
                                                np.array(G_BETA)], rtol=1e-5)
    assert got[5] is not None and not got[5].any() and not got[6].any()   # marks, valid_length
    x = nd(inputs("float64", (2.5, 0)))
    x[0].attach_grad()
    with mx.autograd.record():
        ll, _ = mx.nd.contrib.hawkesll(*x)
        loss = ll * mx.nd.array([1, -2], dtype="float64")
    loss.backward()
    np.testing.assert_allclose(x[0].grad.asnumpy(), G_LDA_SHORT, rtol=1e-6)


@pytest.mark.parametrize("valid_length, max_time", [((7, 9), 16.0), ((2.5, 0), 7.0),
                                                     ((4, 1), 9.5)])
def test_all_gradients_against_central_differences(valid_length, max_time):
    """Both outputs get head gradients: state, lags and max_time too, and out_state's
    dependence on beta and state (MXNet 1.9.1 computes neither)."""
    check_numeric_gradient(OP, inputs("float64", valid_length, max_time),
                           grad_inputs=[0, 1, 2, 3, 4, 7], rtol=1e-6, atol=1e-8, eps=1e-4, seed=3)


def test_symbol_names_and_partial_inference():
    names = ["lda", "alpha", "beta", "state", "lags", "marks", "valid_length", "max_time"]
    s = mx.sym.contrib.hawkesll(*[mx.sym.var(n) for n in names])
    assert s.list_arguments() == names
    assert [o.split("_", 1)[1] for o in s.list_outputs()] == ["output", "out_state"]
    arg, out, _ = s.infer_shape(lda=(2, 3), lags=(2, 9))
    assert arg == [(2, 3), (3,), (3,), (2, 3), (2, 9), (2, 9), (2,), (2,)]
    assert out == [(2,), (2, 3)]
    assert s.infer_type(lda="float64")[0][5] == np.int32




def test_shape_and_dtype_errors():
    x = inputs()
    x[1] = x[1][:2]
    with pytest.raises(ShapeError, match=f"'{OP}': alpha has shape \\(2,\\): number of marks K "
                                         "2, but lda gives 3"):
        _run(x)
    x = inputs()
    x[6] = x[6].reshape(2, 1)
    with pytest.raises(ShapeError, match="valid_length must have 1 dim"):
        _run(x)
    x = inputs()
    with pytest.raises(TypeInferError, match="'marks' has dtype float32, expected int32"):
        mx.nd.contrib.hawkesll(*nd(x[:5]), mx.nd.array(x[5]), *nd(x[6:]))
    with pytest.raises(TypeInferError, match="'lda' has dtype int32"):
        mx.nd.contrib.hawkesll(mx.nd.array(x[0], dtype="int32"), *nd(x[1:]))


def test_value_errors():
    x = inputs()
    x[5][1, 3] = 3                          # inside valid_length: refused
    with pytest.raises(MXNetError, match=r"marks must lie in \[0, K=3\).*\[3\]"):
        _run(x)
    x = inputs(valid_length=(7, 3))         # the same bad mark past valid_length: ignored
    x[5][1, 3] = 3
    assert np.isfinite(_run(x)).all()
    with pytest.raises(MXNetError, match=r"valid_length must be within \[0, T=9\]"):
        _run(inputs(valid_length=(7, 10)))
