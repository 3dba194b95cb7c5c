"""mx.operator custom ops (CustomOp / CustomOpProp / register, mx.nd.Custom) and mx.util."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import MXNetError


@mx.operator.register("test_scaled_sigmoid")
class ScaledSigmoidProp(mx.operator.CustomOpProp):
    def __init__(self, scale="1"):
        super().__init__(need_top_grad=True)
        self.scale = float(scale)

    def create_operator(self, ctx, in_shapes, in_dtypes):
        return ScaledSigmoid(self.scale)


class ScaledSigmoid(mx.operator.CustomOp):
    def __init__(self, scale):
        self.scale = scale

    def forward(self, is_train, req, in_data, out_data, aux):
        self.assign(out_data[0], req[0], self.scale / (1 + mx.nd.exp(-in_data[0])))

    def backward(self, req, out_grad, in_data, out_data, in_grad, aux):
        y = out_data[0] / self.scale
        self.assign(in_grad[0], req[0], out_grad[0] * self.scale * y * (1 - y))


def test_custom_forward_and_backward():
    xs = np.array([0.0, 1.0, -1.0], dtype=np.float32)
    x = mx.nd.array(xs)
    x.attach_grad()
    with mx.autograd.record():
        y = mx.nd.Custom(x, op_type="test_scaled_sigmoid", scale=3)
    s = 1 / (1 + np.exp(-xs))
    np.testing.assert_allclose(y.asnumpy(), 3 * s, rtol=1e-6)
    y.backward()
    np.testing.assert_allclose(x.grad.asnumpy(), 3 * s * (1 - s), rtol=1e-5)


def test_unknown_custom_op():
    with pytest.raises(MXNetError, match="test_scaled_sigmod.*did you mean"):
        mx.nd.Custom(mx.nd.ones(1), op_type="test_scaled_sigmod")


def test_register_requires_prop_class():
    with pytest.raises(MXNetError):
        mx.operator.register("bad")(object)


def test_util(tmp_path):
    d = tmp_path / "a" / "b"
    mx.util.makedirs(str(d))
    mx.util.makedirs(str(d))
    assert d.is_dir()
    assert mx.util.is_np_array() is False
    mx.util.setenv("MXNEXT_TEST_UTIL_VAR", 3)
    assert mx.util.getenv("MXNEXT_TEST_UTIL_VAR") == "3"
    mx.util.setenv("MXNEXT_TEST_UTIL_VAR", None)
    assert mx.util.getenv("MXNEXT_TEST_UTIL_VAR") is None
