"""dot (MXNet's N-d contraction rules) and batch_dot."""

import numpy as np
import pytest

from mxnext import ops as registry
from opsdk import ShapeError
from opsdk.testing import check_forward, check_numeric_gradient, infer

rng = np.random.default_rng(3)


def r(*shape):
    return rng.uniform(-1, 1, shape).astype(np.float32)


def shape_of(op, a, b, **params):
    d = registry.get(op)
    return infer(d, d.parse_params(params), [a, b], [np.dtype("float32")] * 2)[1][0]


def test_dot_shapes_follow_mxnet():
    assert shape_of("dot", (3,), (3,)) == (1,)
    assert shape_of("dot", (2, 3, 4), (4, 5)) == (2, 3, 5)
    assert shape_of("dot", (4, 3, 2), (4, 5), transpose_a=True) == (3, 2, 5)
    assert shape_of("dot", (2, 4), (5, 3, 4), transpose_b=True) == (2, 5, 3)
    assert shape_of("dot", (3,), (3, 4)) == (4,)
    with pytest.raises(ShapeError, match="contracted"):
        shape_of("dot", (2, 3), (4, 5))


def test_dot_values():
    a, b = r(2, 3, 4), r(4, 5)
    check_forward("dot", [a, b], np.tensordot(a, b, 1), rtol=1e-5)
    a, b = r(4, 3, 2), r(5, 4)
    check_forward("dot", [a, b], np.tensordot(a, b, ([0], [1])),
                  {"transpose_a": True, "transpose_b": True}, rtol=1e-5)
    v = r(3)
    check_forward("dot", [v, v], np.array([v @ v], np.float32), rtol=1e-5)


def test_dot_gradient_nd_transposed():
    check_numeric_gradient("dot", [r(4, 3, 2), r(5, 4)], {"transpose_a": True, "transpose_b": True})


def test_batch_dot():
    a, b = r(2, 3, 4), r(2, 5, 4)
    check_forward("batch_dot", [a, b], a @ b.transpose(0, 2, 1), {"transpose_b": True}, rtol=1e-5)
    assert shape_of("batch_dot", (2, 2, 3, 4), (2, 2, 4, 5)) == (2, 2, 3, 5)
    with pytest.raises(ShapeError, match="batch"):
        shape_of("batch_dot", (2, 3, 4), (3, 4, 5))
    check_numeric_gradient("batch_dot", [r(2, 4, 3), r(2, 4, 5)], {"transpose_a": True})
