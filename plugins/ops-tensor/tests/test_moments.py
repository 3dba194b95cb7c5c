"""moments: values, shapes and gradients against numpy and MXNet 1.9.1."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import ShapeError
from opsdk.testing import check_backward, check_forward, check_numeric_gradient, run_op

X = np.array([[1, 2, 3], [4, 5, 6]], np.float32)


def test_mxnet_doc_examples():
    check_forward("moments", [X], [np.array([2.5, 3.5, 4.5], np.float32),
                                   np.array([2.25, 2.25, 2.25], np.float32)], {"axes": (0,)})
    check_forward("moments", [X], [np.array([2, 5], np.float32),
                                   np.array([2 / 3, 2 / 3], np.float32)], {"axes": (1,)})
    check_forward("moments", [X], [np.array([3.5], np.float32),          # (1,), as MXNet
                                   np.array([35 / 12], np.float32)], {"axes": (0, 1)})


def test_keepdims_negative_axes_and_float16():
    x = np.random.default_rng(0).uniform(-1, 1, (2, 3, 4)).astype(np.float64)
    check_forward("moments", [x], [x.mean(axis=(0, 2), keepdims=True),
                                   x.var(axis=(0, 2), keepdims=True)],
                  {"axes": (-1, 0), "keepdims": True})
    check_forward("moments", [X.astype(np.float16)],       # MXNet 1.9.1's float16 values
                  [np.array([[2], [5]], np.float16),
                   np.array([[0.66650390625], [0.66650390625]], np.float16)],
                  {"axes": (1,), "keepdims": True}, atol=0)


def test_gradient_matches_mxnet():
    # MXNet 1.9.1: x = [[1,2,3],[4,5,6]], z = 2 mean + 3 var over axis 0 -> dz/dx below
    check_backward("moments", [X], [np.full(3, 2, np.float32), np.full(3, 3, np.float32)],
                   [np.array([[-3.5] * 3, [5.5] * 3])], {"axes": (0,)})
    x = np.random.default_rng(1).uniform(-1, 1, (3, 2, 2))
    check_numeric_gradient("moments", [x], {"axes": (0, 2)})


def test_every_req_and_inplace_mean():
    ref = run_op("moments", [X], {"axes": (0,)})
    outs = run_op("moments", [X], {"axes": (0,)}, req="add",
                  outputs=[np.ones(3, np.float32), np.ones(3, np.float32)])
    np.testing.assert_allclose(outs[0], ref[0] + 1)
    np.testing.assert_allclose(outs[1], ref[1] + 1)
    x = np.array([[1.0], [3.0]], np.float32)         # mean may take the data's memory
    mean, var = run_op("moments", [x], {"axes": (1,), "keepdims": True}, req=["inplace", "write"],
                       outputs=[x, np.empty((2, 1), np.float32)])
    np.testing.assert_array_equal(mean, [[1], [3]])
    np.testing.assert_array_equal(var, [[0], [0]])


def test_errors_name_the_op_and_axes():
    with pytest.raises(ShapeError, match="'moments': axes must name at least one axis"):
        run_op("moments", [X])
    with pytest.raises(ShapeError, match="'moments': axis 2 out of range"):
        run_op("moments", [X], {"axes": (2,)})


def test_frontends():
    a = mx.nd.array(X)
    mean, var = mx.nd.moments(a, axes=(0,))
    np.testing.assert_allclose(var.asnumpy(), [2.25] * 3)
    s = mx.sym.moments(mx.sym.var("data"), axes=(1,), keepdims=True)
    _, outs, _ = s.infer_shape(data=(4, 5))
    assert outs == [(4, 1), (4, 1)]
    assert s.list_outputs() == ["moments0_output0", "moments0_output1"]
