"""softmax, log_softmax, softmin and SoftmaxActivation against numpy loop references."""

import numpy as np
import pytest

from mxnext import ops as registry
from opsdk import MXNetError, ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

RNG = np.random.default_rng(3)
X = RNG.normal(size=(2, 3, 4)).astype(np.float32)
HEAD = RNG.normal(size=(2, 3, 4)).astype(np.float32)


def softmax_rows(x, axis, t=1.0, negate=False, lengths=None):
    """Softmax along ``axis`` one row at a time; ``lengths`` masks each row's tail."""
    x = np.moveaxis(np.asarray(x, np.float64), axis, -1)
    out = np.zeros_like(x)
    for idx in np.ndindex(x.shape[:-1]):
        n = x.shape[-1] if lengths is None else int(lengths[idx])
        row = (-x[idx][:n] if negate else x[idx][:n]) / t
        if n:
            e = np.exp(row - row.max())
            out[idx][:n] = e / e.sum()
    return np.moveaxis(out, -1, axis)


def softmax_grad_rows(y, head, axis, t=1.0, negate=False, log=False):
    """Row-wise chain rule: J^T head for the softmax (or log-softmax) Jacobian."""
    y, head = np.moveaxis(y, axis, -1).astype(np.float64), np.moveaxis(head, axis, -1)
    g = np.zeros_like(y)
    for idx in np.ndindex(y.shape[:-1]):
        p = np.exp(y[idx]) if log else y[idx]
        jac = (np.eye(len(p)) - p[None, :]) if log else (np.diag(p) - np.outer(p, p))
        g[idx] = jac.T @ head[idx] / t * (-1 if negate else 1)
    return np.moveaxis(g, -1, axis)


@pytest.mark.parametrize("axis, t", [(-1, 1.0), (1, 2.0), (0, 0.5)])
def test_softmax_family_forward_and_gradient(axis, t):
    sm = softmax_rows(X, axis, t)
    params = {"axis": axis, "temperature": t}
    check_forward("softmax", [X], sm.astype(np.float32), params)
    check_forward("log_softmax", [X], np.log(sm).astype(np.float32), params, atol=1e-5)
    smin = softmax_rows(X, axis, t, negate=True)
    check_forward("softmin", [X], smin.astype(np.float32), params)
    check_backward("softmax", [X], [HEAD], [softmax_grad_rows(sm, HEAD, axis, t)], params,
                   atol=1e-5)
    check_backward("log_softmax", [X], [HEAD],
                   [softmax_grad_rows(np.log(sm), HEAD, axis, t, log=True)], params, atol=1e-5)
    check_backward("softmin", [X], [HEAD], [softmax_grad_rows(smin, HEAD, axis, t, negate=True)],
                   params, atol=1e-5)


def test_softmax_dtype_override():
    (out,) = run_op("softmax", [X], {"dtype": "float64"})
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, softmax_rows(X, -1), rtol=1e-6)
    grads = check_backward("softmax", [X], [HEAD.astype(np.float64)],
                           [softmax_grad_rows(out, HEAD, -1)], {"dtype": "float64"}, atol=1e-6)
    assert grads[0].dtype == np.float32          # the gradient keeps the data dtype
    (half,) = run_op("log_softmax", [X.astype(np.float16)], {"dtype": "float32"})
    assert half.dtype == np.float32


@pytest.mark.parametrize("axis", [0, 1, 2])
def test_softmax_length_mask(axis):
    shape = X.shape
    lshape = tuple(s for i, s in enumerate(shape) if i != axis)
    lengths = RNG.integers(0, shape[axis] + 1, size=lshape).astype(np.int32)
    moved = np.moveaxis(X, axis, -1)
    want = np.moveaxis(softmax_rows(moved, -1, 1.5, lengths=lengths), -1, axis)
    params = {"axis": axis, "use_length": True, "temperature": 1.5}
    check_forward("softmax", [X, lengths], want.astype(np.float32), params)
    # rows are independent softmaxes over their first `length` entries; the rest get no gradient
    grad = np.zeros(shape)
    gm, ym, hm = (np.moveaxis(a, axis, -1) for a in (grad, want, HEAD))
    for idx in np.ndindex(lshape):
        n = lengths[idx]
        gm[idx][:n] = softmax_grad_rows(ym[idx][None, :n], hm[idx][None, :n], -1, 1.5)[0]
    check_backward("softmax", [X, lengths], [HEAD], [grad, np.zeros(lshape)], params, atol=1e-5)
    check_numeric_gradient("softmax", [X.astype(np.float64), lengths], params, grad_inputs=[0])


def test_softmax_length_errors():
    with pytest.raises(ShapeError, match="length"):
        run_op("softmax", [X, np.ones((2, 3), np.int32)], {"use_length": True, "axis": 1})
    with pytest.raises(MXNetError, match="integer"):     # when it runs, as MXNet 1.9
        run_op("softmax", [X, np.ones((2, 3), np.float32)], {"use_length": True})
    infer_type = registry.get("softmax").get_attr("FInferType")
    p = registry.get("softmax").parse_params({"use_length": True})
    assert infer_type(p, [np.float32, np.float32], [None]) == ([np.float32, np.float32],
                                                               [np.float32])
    with pytest.raises(ShapeError, match="only supported by softmax"):
        run_op("log_softmax", [X], {"use_length": True})
    with pytest.raises(ShapeError, match="axis=3"):
        run_op("softmax", [X], {"axis": 3})
    with pytest.raises(ParamError, match="dtype"):
        run_op("softmax", [X], {"dtype": "int32"})


def test_softmax_activation_modes():
    x2 = X[:, :, 0]
    check_forward("SoftmaxActivation", [x2], softmax_rows(x2, 1).astype(np.float32))
    flat = softmax_rows(X.reshape(2, -1), 1).reshape(X.shape)
    check_forward("SoftmaxActivation", [X], flat.astype(np.float32))
    check_forward("SoftmaxActivation", [X], softmax_rows(X, 1).astype(np.float32),
                  {"mode": "channel"})
    check_backward("SoftmaxActivation", [X], [HEAD],
                   [softmax_grad_rows(softmax_rows(X, 1), HEAD, 1)], {"mode": "channel"},
                   atol=1e-5)
    want = softmax_grad_rows(flat.reshape(2, -1), HEAD.reshape(2, -1), 1).reshape(X.shape)
    check_backward("SoftmaxActivation", [X], [HEAD], [want], atol=1e-5)
    with pytest.raises(MXNetError, match="at least 3 dims"):
        run_op("SoftmaxActivation", [x2], {"mode": "channel"})
