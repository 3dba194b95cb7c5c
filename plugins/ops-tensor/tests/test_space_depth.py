"""depth_to_space and space_to_depth: MXNet 1.9.1's documented example, round trips,
gradients and shape errors."""

import numpy as np
import pytest

import mxnext as mx
from opsdk import ParamError, ShapeError
from opsdk.testing import check_backward, check_forward, infer, op_def, run_op

X = np.arange(24, dtype=np.float32).reshape(1, 4, 2, 3)
Y = np.array([[[[0, 6, 1, 7, 2, 8], [12, 18, 13, 19, 14, 20],
                [3, 9, 4, 10, 5, 11], [15, 21, 16, 22, 17, 23]]]], np.float32)


def test_mxnet_example_and_inverse():
    check_forward("depth_to_space", [X], Y, {"block_size": 2})
    check_forward("space_to_depth", [Y], X, {"block_size": 2})
    x = np.random.default_rng(0).integers(0, 100, (2, 18, 2, 3)).astype(np.int64)
    (y,) = run_op("depth_to_space", [x], {"block_size": 3})
    assert y.shape == (2, 2, 6, 9) and y.dtype == np.int64
    check_forward("space_to_depth", [y], x, {"block_size": 3})


def test_gradient_is_the_inverse_op():
    og = np.random.default_rng(1).normal(size=(1, 1, 4, 6)).astype(np.float32)
    (g,) = run_op("space_to_depth", [og], {"block_size": 2})
    check_backward("depth_to_space", [X], [og], [g], {"block_size": 2})
    (g,) = run_op("depth_to_space", [X], {"block_size": 2})
    check_backward("space_to_depth", [Y], [X], [g], {"block_size": 2})


def test_shapes_fill_both_ways():
    d2s, s2d = op_def("depth_to_space"), op_def("space_to_depth")
    p = d2s.parse_params({"block_size": 2})
    assert d2s.get_attr("FInferShape")(p, [None], [(1, 3, 4, 6)]) == ([(1, 12, 2, 3)],
                                                                       [(1, 3, 4, 6)])
    assert s2d.get_attr("FInferShape")(p, [None], [(1, 12, 2, 3)])[0] == [(1, 3, 4, 6)]
    _, out_s, _, out_t = infer(s2d, p, [(2, 3, 4, 6)], [np.dtype(np.float16)])
    assert out_s == [(2, 12, 2, 3)] and out_t == [np.dtype(np.float16)]


@pytest.mark.parametrize("op, shape, match", [
    ("depth_to_space", (1, 3, 2, 2), "multiple of block_size\\*\\*2 = 4"),
    ("depth_to_space", (1, 4, 0, 3), "dimension 2 of data must not be 0"),
    ("depth_to_space", (4, 2, 2), "4-D"),
    ("space_to_depth", (1, 1, 3, 4), "spatial dimension 2 must be a multiple of block_size = 2"),
    ("space_to_depth", (1, 1, 4, 5), "spatial dimension 3"),
])
def test_shape_errors(op, shape, match):
    with pytest.raises(ShapeError, match=f"'{op}': .*{match}"):
        infer(op_def(op), op_def(op).parse_params({"block_size": 2}), [shape],
              [np.dtype(np.float32)])


def test_block_size_must_be_positive():
    with pytest.raises(ParamError, match="block_size"):
        mx.nd.depth_to_space(mx.nd.array(X), block_size=0)


def test_frontends():
    a = mx.nd.array(X)
    a.attach_grad()
    with mx.autograd.record():
        y = mx.nd.depth_to_space(a, 2)
    y.backward(mx.nd.array(Y))
    np.testing.assert_array_equal(y.asnumpy(), Y)
    np.testing.assert_array_equal(a.grad.asnumpy(), X)
    s = mx.sym.space_to_depth(mx.sym.var("data"), block_size=2)
    assert s.infer_shape(data=(1, 1, 4, 6))[1] == [(1, 4, 2, 3)]
