"""Integer data as MXNet 1.9.1 treats it (the values below are its outputs): elementwise math
in floating point truncated back to the integer dtype, integer means and scalars truncated,
and the ops whose kernels take floating point types only rejected at type inference."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import TypeInferError

X = [-3, -2, -1, 0, 1, 2, 3, 5]
MIN = np.iinfo(np.int32).min       # what casting NaN or -inf gives on x86, as in MXNet
ROWS = [[1, 2, 4], [3, 3, 5], [-1, -2, 2]]


@pytest.mark.parametrize("op, want", [
    ("exp", [0, 0, 0, 1, 2, 7, 20, 148]),
    ("sigmoid", [0] * 8),
    ("tanh", [0] * 8),
    ("erf", [0] * 8),
    ("arctan", [-1, -1, 0, 0, 0, 1, 1, 1]),
    ("degrees", [-171, -114, -57, 0, 57, 114, 171, 286]),
    ("cbrt", [-1, -1, -1, 0, 1, 1, 1, 1]),
    ("sqrt", [MIN, MIN, MIN, 0, 1, 1, 1, 2]),
    ("reciprocal", [0, 0, -1, MIN, 1, 0, 0, 0]),
    ("gamma", [MIN, MIN, MIN, MIN, 1, 1, 2, 24]),      # exact factorials: Gamma(5) is 24
])
def test_unary_math_truncates_back_to_the_integer_dtype(op, want):
    got = getattr(mx.nd, op)(mx.nd.array(X, dtype="int32"))
    assert got.dtype == np.int32 and got.asnumpy().tolist() == want


def test_scalar_ops_truncate_the_scalar_for_integer_data():
    x = mx.nd.array(X, dtype="int32")
    assert mx.nd._power_scalar(x, scalar=2.5).asnumpy().tolist() == [9, 4, 1, 0, 1, 4, 9, 25]
    assert mx.nd._rpower_scalar(x, scalar=2.5).asnumpy().tolist() == [0, 0, 0, 1, 2, 4, 8, 32]
    assert mx.nd._div_scalar(x, scalar=2.5).asnumpy().tolist() == [-1, -1, 0, 0, 0, 1, 1, 2]


def test_integer_reductions():
    y = mx.nd.array(ROWS, dtype="int32")
    assert mx.nd.mean(y, axis=1).asnumpy().tolist() == [2, 3, 0]
    mean, var = mx.nd.moments(y, axes=(1,))        # the variance around the truncated mean
    assert mean.asnumpy().tolist() == [2, 3, 0] and var.asnumpy().tolist() == [1, 1, 3]
    assert mx.nd.cumsum(y, axis=1).asnumpy().tolist() == [[1, 3, 7], [3, 6, 11], [-1, -3, -1]]
    counts, edges = mx.nd._histogram(y, bin_cnt=3, range=(-2, 5))
    assert counts.asnumpy().tolist() == [2, 1, 6] and edges.asnumpy().tolist() == [-2, 0, 2, 5]


@pytest.mark.parametrize("op, args, params", [
    ("dot", [(3, 3), (3, 3)], {}),
    ("batch_dot", [(1, 3, 3), (1, 3, 3)], {}),
    ("Pad", [(1, 1, 3, 3)], {"mode": "constant", "pad_width": (0, 0, 0, 0, 1, 1, 1, 1)}),
    ("_random_normal_like", [(2, 3)], {}),
    ("_sample_multinomial", [(2, 3)], {}),
    ("_random_pdf_normal", [(2, 3), (2,), (2,)], {}),
    ("fill_element_0index", [(2, 3), (2,), (2,)], {}),
], ids=lambda v: v if isinstance(v, str) else "")
def test_floating_point_only_ops_reject_integer_data(op, args, params):
    arrays = [mx.nd.ones(s, dtype="int32") for s in args]
    with pytest.raises(TypeInferError, match=rf"'{op}': input '\w+' has dtype int32, expected "
                                             r"float16, float32 or float64"):
        getattr(mx.nd, op)(*arrays, **params)
    sym = getattr(mx.sym, op)(*[mx.sym.var(f"a{i}") for i in range(len(args))], **params)
    with pytest.raises(TypeInferError, match=rf"\({op}\): input '\w+' has dtype int32"):
        sym.infer_type(a0="int32")
