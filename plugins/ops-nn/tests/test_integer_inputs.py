"""Integer data: the ops MXNet 1.9.1 runs on floating point types only reject it at type
inference, through mx.nd and mx.sym alike, instead of computing zeros or truncated math."""

import numpy as np
import pytest

import mxnext as mx
from mxnext.base import TypeInferError

# op, its inputs (data first) as shapes, params: each one MXNet 1.9.1 rejects on int32 data
REJECTED = [
    ("softmax", [(2, 3)], {}),
    ("log_softmax", [(2, 3)], {"axis": 0}),
    ("softmin", [(2, 3)], {}),
    ("SoftmaxActivation", [(2, 3)], {}),
    ("SoftmaxOutput", [(2, 3), (2,)], {}),
    ("softmax_cross_entropy", [(2, 3), (2,)], {}),
    ("Activation", [(2, 3)], {"act_type": "sigmoid"}),
    ("Activation", [(2, 3)], {"act_type": "relu"}),
    ("LeakyReLU", [(2, 3)], {}),
    ("LayerNorm", [(2, 3), (3,), (3,)], {}),
    ("BatchNorm", [(2, 3), (3,), (3,), (3,), (3,)], {}),
    ("FullyConnected", [(2, 3), (4, 3), (4,)], {"num_hidden": 4}),
    ("Convolution", [(1, 1, 4, 4), (1, 1, 3, 3), (1,)], {"kernel": (3, 3), "num_filter": 1}),
    ("Pooling", [(1, 1, 4, 4)], {"kernel": (2, 2)}),
    ("Dropout", [(2, 3)], {"p": 0.5}),
    ("LinearRegressionOutput", [(2, 3), (2, 3)], {}),
    ("sgd_update", [(2, 3), (2, 3)], {"lr": 0.1}),
]
_MESSAGE = r"{op}.*input '\w+' has dtype int32, expected float16, float32 or float64"


@pytest.mark.parametrize("op, shapes, params", REJECTED, ids=[r[0] for r in REJECTED])
def test_imperative_call_rejects_integer_data(op, shapes, params):
    args = [mx.nd.ones(s, dtype="int32") for s in shapes]
    with pytest.raises(TypeInferError, match=_MESSAGE.format(op=op)):
        getattr(mx.nd, op)(*args, **params)


@pytest.mark.parametrize("op, shapes, params", REJECTED, ids=[r[0] for r in REJECTED])
def test_symbol_type_inference_rejects_integer_data(op, shapes, params):
    sym = getattr(mx.sym, op)(mx.sym.var("x"), *[mx.sym.var(f"a{i}") for i in
                                                range(len(shapes) - 1)], **params)
    with pytest.raises(TypeInferError, match=_MESSAGE.format(op=op)):
        sym.infer_type(x="int32")


def test_softmax_takes_integer_lengths_with_float_data():
    x = mx.nd.array([[1, 2, 3], [3, 2, 1]])
    got = mx.nd.softmax(x, mx.nd.array([2, 3], dtype="int32"), use_length=True, axis=1)
    e = np.exp([1, 2]) / np.exp([1, 2]).sum()
    np.testing.assert_allclose(got.asnumpy()[0], [e[0], e[1], 0], rtol=1e-6)
    with pytest.raises(TypeInferError, match="softmax.*'data' has dtype int32"):
        mx.nd.softmax(x.astype("int32"), mx.nd.array([2, 3], dtype="int32"), use_length=True)


def test_a_bound_graph_rejects_integer_data_before_running():
    net = mx.sym.SoftmaxOutput(mx.sym.FullyConnected(mx.sym.var("data"), num_hidden=3),
                               name="softmax")
    with pytest.raises(TypeInferError, match="FullyConnected.*int32"):
        net.simple_bind(mx.cpu(), data=(2, 4), type_dict={"data": "int32"})
