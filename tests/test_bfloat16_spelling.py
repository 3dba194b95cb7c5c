"""MXNet's Python spelling of bfloat16, ``np.dtype([('bfloat16', np.uint16)])``, is read as
ml_dtypes' bfloat16 wherever a dtype is given: op parameters, variables, type inference,
NDArray creation and astype."""

import ml_dtypes
import numpy as np
import pytest

import mxnext as mx
from mxnext._runtime.base import MXNET_BFLOAT16, as_dtype
from mxnext._runtime.params import normalize_dtype

BF16 = np.dtype(ml_dtypes.bfloat16)


def test_as_dtype():
    assert as_dtype(MXNET_BFLOAT16) == BF16
    assert as_dtype("float16") == np.float16 and as_dtype(np.int32) == np.int32
    assert as_dtype(np.dtype([("other", np.uint16)])) == np.dtype([("other", np.uint16)])
    assert normalize_dtype(MXNET_BFLOAT16) == "bfloat16"
    with pytest.raises(TypeError):
        as_dtype("no_such_type")


def test_op_parameters_and_creation():
    x = mx.nd.array([1.5, -2.3, 3.1])
    y = mx.nd.amp_cast(x, dtype=MXNET_BFLOAT16)
    assert y.dtype == BF16
    np.testing.assert_array_equal(y.asnumpy().astype(np.float32), [1.5, -2.296875, 3.09375])
    assert mx.nd.Cast(x, dtype=MXNET_BFLOAT16).dtype == BF16
    assert x.astype(MXNET_BFLOAT16).dtype == BF16
    for made in (mx.nd.array([1, 2], dtype=MXNET_BFLOAT16), mx.nd.empty((2,), dtype=MXNET_BFLOAT16),
                 mx.nd.zeros((2,), dtype=MXNET_BFLOAT16), mx.nd.ones((2,), dtype=MXNET_BFLOAT16),
                 mx.nd.arange(0, 2, dtype=MXNET_BFLOAT16), mx.nd.eye(2, dtype=MXNET_BFLOAT16)):
        assert made.dtype == BF16


def test_symbols_and_binding():
    data = mx.sym.Variable("data", dtype=MXNET_BFLOAT16)
    assert data.attr("__dtype__") == "12"
    cast = mx.sym.amp_cast(mx.sym.Variable("x"), dtype=MXNET_BFLOAT16)
    assert cast.infer_type(x=np.float32)[1] == [BF16]
    assert cast.list_attr()["dtype"] == "bfloat16"
    net = mx.sym.FullyConnected(mx.sym.Variable("x"), num_hidden=2, name="fc")
    exe = net.simple_bind(mx.cpu(), x=(3, 4), type_dict={"x": MXNET_BFLOAT16,
                                                         "fc_weight": MXNET_BFLOAT16,
                                                         "fc_bias": MXNET_BFLOAT16})
    exe.arg_dict["x"][:] = mx.nd.ones((3, 4), dtype=MXNET_BFLOAT16)
    exe.arg_dict["fc_weight"][:] = mx.nd.full((2, 4), 0.5, dtype=MXNET_BFLOAT16)
    exe.arg_dict["fc_bias"][:] = mx.nd.zeros((2,), dtype=MXNET_BFLOAT16)
    out = exe.forward()[0]
    assert out.dtype == BF16
    np.testing.assert_array_equal(out.asnumpy().astype(np.float32), np.full((3, 2), 2.0))
