"""Reductions and argmax/argmin: MXNet axis/keepdims/exclude shapes, values vs numpy,
dtypes, every OpReqType, gradients (MXNet values and numeric differences)."""

import numpy as np
import pytest
import mxnext as mx
from mxnext import ops as registry
from mxnext.base import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, infer, run_op

NUMPY = {"sum": np.sum, "mean": np.mean, "prod": np.prod, "max": np.max, "min": np.min,
         "nansum": np.nansum, "nanprod": np.nanprod}


def _out_shape(name, shape, **params):
    op = registry.get(name)
    return infer(op, op.parse_params(params), [shape], [np.dtype("float32")])[1][0]


@pytest.mark.parametrize("params, shape", [
    ({"axis": "(0,2)", "exclude": True}, (2, 4)),
    ({}, (1,)),
    ({"axis": "()"}, (1,)),
    ({"axis": 1, "keepdims": True, "exclude": True}, (1, 3, 1)),
    ({"axis": -1}, (2, 3)),
    ({"keepdims": "True"}, (1, 1, 1)),
    ({"axis": (0, 1, 2), "exclude": True}, (2, 3, 4)),
    ({"exclude": True}, (1,)),
    ({"axis": 1}, (2, 4)),
])
def test_shapes_as_mxnet(params, shape):
    for name in ("sum", "mean", "max", "nanprod"):
        assert _out_shape(name, (2, 3, 4), **params) == shape


def test_bad_axes():
    with pytest.raises(ShapeError, match="sum.*twice"):
        _out_shape("sum", (2, 3, 4), axis=(1, 1))
    with pytest.raises(ShapeError, match="sum.*axis 3 out of range"):
        _out_shape("sum", (2, 3, 4), axis=3)
    with pytest.raises(ParamError, match="keepdims"):
        registry.get("sum").parse_params({"keepdims": "maybe"})


@pytest.mark.parametrize("name", sorted(NUMPY))
@pytest.mark.parametrize("params", [{}, {"axis": 1}, {"axis": (0, 2), "keepdims": True},
                                    {"axis": 0, "exclude": True}])
def test_values_match_numpy(name, params):
    x = np.random.default_rng(0).uniform(0.5, 1.5, (2, 3, 4))
    x[0, 1, 2] = np.nan if name.startswith("nan") else x[0, 1, 2]
    axes = params.get("axis")
    if axes is not None and params.get("exclude"):
        axes = tuple(i for i in range(3) if i not in np.atleast_1d(axes))
    want = NUMPY[name](x, axis=axes, keepdims=params.get("keepdims", False))
    want = np.asarray(want).reshape(_out_shape(name, x.shape, **params))
    check_forward(name, [x], want, params, rtol=1e-12)
    if not name.startswith("nan"):
        check_numeric_gradient(name, [x], params, rtol=1e-4, atol=1e-6)


def test_nan_gradients():
    check_backward("nansum", [np.array([1, np.nan])], [np.ones(1)], [[1, 0]])
    check_backward("nanprod", [np.array([2, np.nan, 3])], [np.ones(1)], [[3, 0, 2]])


def test_integer_and_half_inputs():
    i = np.array([1, 2, 3, -7], np.int32)
    check_forward("sum", [i], np.array([-1], np.int32))
    check_forward("mean", [i], np.array([0], np.int32))      # -0.25 truncated, as MXNet
    check_forward("prod", [np.array([2, 3], np.int32)], np.array([6], np.int32))
    h = np.full(4096, 1.0, np.float16)                        # float16 sums in float32
    check_forward("sum", [h], np.array([4096], np.float16))


def test_norm():
    x = np.array([[1, -2], [3, 4.]], np.float32)
    check_forward("norm", [x], np.array([np.sqrt(30)], np.float32))
    check_forward("norm", [x], np.array([3, 7], np.float32), {"ord": 1, "axis": 1})
    assert _out_shape("norm", (2, 2), axis=(0, 1), keepdims=True) == (1, 1)
    assert _out_shape("norm", (2, 3, 4), axis=1) == (2, 4)
    out = run_op("norm", [x], {"out_dtype": "float64"})[0]
    assert out.dtype == np.float64
    with pytest.raises(ParamError, match="ord"):
        registry.get("norm").parse_params({"ord": 3})
    check_backward("norm", [np.array([3, 4.])], [np.ones(1)], [[0.6, 0.8]])
    check_backward("norm", [np.array([3, -4, 0.])], [np.ones(1)], [[1, -1, 0]], {"ord": 1})
    check_backward("norm", [np.array([[3, 4], [0, 1.]])], [np.ones((2, 1))],
                   [[[0.6, 0.8], [0, 1]]], {"axis": 1, "keepdims": True})
    check_numeric_gradient("norm", [np.random.default_rng(1).uniform(-1, 1, (3, 4))],
                           {"axis": 0}, rtol=1e-4, atol=1e-6)


def test_mxnet_gradients():
    check_backward("max", [np.array([1, 3, 3.])], [np.ones(1)], [[0, 1, 1]])   # ties share
    check_backward("min", [np.array([[1, 3], [1, 2.]])], [np.ones(2)], [[[1, 0], [1, 1]]],
                   {"axis": 0})
    check_backward("prod", [np.array([2, 0, 3.])], [np.ones(1)], [[0, np.nan, 0]])
    check_backward("mean", [np.array([[1, 2], [3, 4.]])], [np.ones(2)], [np.full((2, 2), 0.5)],
                   {"axis": 1})


def test_argmax_argmin():
    x = np.array([[1, 3, 3], [4, 2, 0]], np.float32)
    check_forward("argmax", [x], np.array([1, 0], np.float32), {"axis": 1})
    check_forward("argmin", [x], np.array([0, 1, 1], np.float32), {"axis": 0})
    check_forward("argmax", [x], np.array([3], np.float32))                 # flattened
    check_forward("argmax", [x.astype(np.float64)], np.array([[3]], np.float64),
                  {"keepdims": True})
    check_forward("argmin", [x.astype(np.int32)], np.array([[0], [2]], np.int32),
                  {"axis": -1, "keepdims": True})
    check_backward("argmax", [x], [np.ones(2, np.float32)], [np.zeros((2, 3))], {"axis": 1})
    with pytest.raises(ShapeError, match="argmax"):
        _out_shape("argmax", (2, 3), axis=2)


@pytest.mark.parametrize("req", ["null", "write", "add"])
def test_every_req(req):
    x = np.arange(6.0).reshape(2, 3)
    base = np.full(3, 100.0)
    got = run_op("sum", [x], {"axis": 0}, req=req, outputs=[base.copy()])[0]
    np.testing.assert_allclose(got, {"null": base, "write": [3, 5, 7],
                                     "add": base + [3, 5, 7]}[req])
    og = np.ones(3)
    gbase = np.full((2, 3), 1.0)
    g = run_op("_backward_sum", [og, x], {"axis": 0}, req=req, outputs=[gbase.copy()])[0]
    np.testing.assert_allclose(g, {"null": gbase, "write": np.ones((2, 3)),
                                   "add": gbase + 1}[req])


def test_aliases():
    assert registry.get("sum_axis") is registry.get("sum")
    assert registry.get("max_axis") is registry.get("max")
    assert registry.get("min_axis") is registry.get("min")


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumsum_values_and_gradient(axis):
    x0 = np.arange(1, 13, dtype=np.float32).reshape(3, 4)
    w0 = np.random.default_rng(1).random(x0.size).astype(np.float32)
    want = np.cumsum(x0, axis=axis)
    x = mx.nd.array(x0)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.cumsum(x, axis=axis)
        z = (y * mx.nd.array(w0.reshape(want.shape))).sum()
    z.backward()
    np.testing.assert_allclose(y.asnumpy(), want)
    w = w0.reshape(want.shape)
    ax = 0 if axis is None else axis
    grad = np.flip(np.cumsum(np.flip(w, ax), axis=ax), ax).reshape(x0.shape)
    np.testing.assert_allclose(x.grad.asnumpy(), grad, rtol=1e-6)
    assert mx.nd.cumsum(mx.nd.array(x0, dtype="int32"), axis=1, dtype="float64").dtype == np.float64


def test_argmax_channel_is_argmax_over_axis_1():
    x0 = np.array([[[1, 5, 2], [7, 0, 3]], [[4, 4, 9], [1, 2, 3]]], np.float32)
    got = mx.nd.argmax_channel(mx.nd.array(x0))
    assert got.dtype == np.float32 and got.asnumpy().tolist() == x0.argmax(axis=1).tolist()
    with pytest.raises(mx.base.ShapeError, match="at least 2 dims"):
        mx.nd.argmax_channel(mx.nd.ones((3,)))


def test_argmax_channel_keeps_the_input_dtype():
    """MXNet 1.9.1: positions come in the data's dtype, integer ones included."""
    got = mx.nd.argmax_channel(mx.nd.array([[1, 2], [4, 3]], dtype="int32"))
    assert got.dtype == np.int32 and got.asnumpy().tolist() == [1, 0]
    assert mx.nd.argmax_channel(mx.nd.ones((2, 3), dtype="float16")).dtype == np.float16


def test_min_max_reject_zero_size_input():
    """MXNet 1.9: min and max need elements (shape inference fails); sum does not."""
    with mx.np_shape():
        for op in ("min", "max"):
            with pytest.raises(ShapeError, match="size should be > 0"):
                infer(registry.get(op), registry.get(op).parse_params({}), [(5, 0)], ["float32"])
        assert infer(registry.get("sum"), registry.get("sum").parse_params({}), [(5, 0)],
                     ["float32"])[1] == [(1,)]
