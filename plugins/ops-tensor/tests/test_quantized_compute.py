"""The quantized compute ops (_contrib_quantized_fully_connected, _contrib_quantized_conv,
...): bit-exact against MXNet 1.9.1 (fixtures/quantized_compute_ref.npz, written by
fixtures/make_quantized_compute_ref.py), shape/type inference, errors, the graph-pass
protocol attributes and the frontends."""

import json
import os

import numpy as np
import pytest

import mxnext as mx
from opsdk import ShapeError, TypeInferError
from opsdk.testing import conformance_tests, infer, op_def, parse, run_op

REF = np.load(os.path.join(os.path.dirname(__file__), "fixtures", "quantized_compute_ref.npz"))
CASES = sorted(int(k.split(":")[1]) for k in REF.files if k.startswith("op:"))
F32 = np.float32
OPS = ["_contrib_quantized_fully_connected", "_contrib_quantized_conv",
       "_contrib_quantized_pooling", "_contrib_quantized_act",
       "_contrib_quantized_elemwise_add", "_contrib_quantized_elemwise_mul",
       "_contrib_quantized_concat", "_contrib_quantized_batch_norm"]

test_conformance = conformance_tests("ops-tensor", ops=OPS)


def _rng(*bounds):
    return [np.array([b], F32) for b in bounds]


def _infer(op, shapes, dtypes, params=None):
    d = op_def(op)
    return infer(d, parse(d, params), shapes, dtypes)


@pytest.mark.parametrize("i", CASES)
def test_matches_mxnet(i):
    op, params = str(REF[f"op:{i}"]), json.loads(str(REF[f"params:{i}"]))
    inputs = [REF[f"in{k}:{i}"] for k in range(12) if f"in{k}:{i}" in REF.files]
    outs = run_op(op, inputs, params)
    if op == "_contrib_quantized_conv":
        inputs, outs = _conv_as_mxnet(inputs, params, outs)
    for k, got in enumerate(outs):
        want = REF[f"out{k}:{i}"]
        assert got.dtype == want.dtype and got.shape == want.shape, (op, params, k)
        if op == "_contrib_quantized_rnn":      # within one uint8 step of the data's scale
            np.testing.assert_allclose(got, want, rtol=0, atol=1.01 / inputs[4][0])
            assert np.mean(got == want) > 0.9 or k == 2
        else:
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {params} output {k}")


def _conv_as_mxnet(inputs, params, outs):
    """The products only, compared with MXNet's: its unfused oneDNN convolution adds the
    int8 bias unscaled (subtracted from its output here) and declares another range (checked
    in test_conv_bias_and_range_as_fully_connected), where mxnext's convolution keeps both
    as fully connected does."""
    if not params.get("no_bias", False):
        bias = inputs[2].astype(np.int64).reshape((1, -1) + (1,) * (inputs[0].ndim - 2))
        products = run_op("_contrib_quantized_conv", [inputs[0], inputs[1], *inputs[3:7]],
                          {**params, "no_bias": True})[0]
        outs = [(products + bias).astype(np.int32)]
    return inputs, outs[:1]


def test_conv_bias_and_range_as_fully_connected():
    """A 1x1 convolution over one pixel is a fully connected layer: same sums, same
    rescaled bias, same range, for int8 and uint8 data."""
    rng = np.random.default_rng(0)
    for dtype, lo in ((np.uint8, 0), (np.int8, -0.5)):
        x = rng.integers(0, 100, (3, 5), dtype=dtype)
        w = rng.integers(-100, 100, (4, 5), dtype=np.int8)
        b = rng.integers(-100, 100, (4,), dtype=np.int8)
        ranges = _rng(lo, 2.0, -1.0, 0.5, -0.3, 0.2)
        fc = run_op(OPS[0], [x, w, b, *ranges], {"num_hidden": 4})
        conv = run_op(OPS[1], [x.reshape(3, 5, 1, 1), w.reshape(4, 5, 1, 1), b, *ranges],
                      {"kernel": (1, 1), "num_filter": 4})
        np.testing.assert_array_equal(conv[0].reshape(3, 4), fc[0])
        assert conv[1] == fc[1] and conv[2] == fc[2]


def test_fully_connected_sums_exactly_and_rescales_bias():
    x = np.full((1, 600), 127, np.int8)           # 600 * 127 * 127 > 2^24
    w = np.full((2, 600), 127, np.int8)
    out, lo, hi = run_op(OPS[0], [x, w, *_rng(-1, 1, -1, 1)], {"num_hidden": 2,
                                                              "no_bias": True})
    assert out.tolist() == [[600 * 127 * 127] * 2]
    assert hi[0] == -lo[0] == F32(1 / 127) * F32(1 / 127) * F32(2 ** 31)
    # bias 10 over (-1, 1): 10 * (127.5 * 127.5 * 1 / 127.5), truncated
    out = run_op(OPS[0], [np.ones((1, 2), np.int8), np.ones((1, 2), np.int8),
                          np.array([10], np.int8), *_rng(-1, 1, -1, 1, -1, 1)],
                 {"num_hidden": 1})[0]
    assert out.tolist() == [[2 + 1275]]


def test_conv_rescales_bias_and_pads():
    x = np.ones((1, 1, 2, 2), np.uint8)
    w = np.ones((1, 1, 2, 2), np.int8)
    out, lo, hi = run_op(OPS[1], [x, w, np.array([-3], np.int8), *_rng(0, 1, -1, 1, -1, 1)],
                         {"kernel": (2, 2), "num_filter": 1, "pad": (1, 1)})
    # bias -3 over (-1, 1): -3 * (255.5 * 127.5 * 1 / 127.5) = -766.5, truncated
    assert out.tolist() == [[[[-765, -764, -765], [-764, -762, -764], [-765, -764, -765]]]]
    assert hi[0] == -lo[0] == F32(1 / 127) * F32(1 / 255) * F32(2 ** 31)


def test_shape_and_type_inference():
    ins, outs, tins, touts = _infer(OPS[0], [(4, 3, 2)] + [None] * 8, [np.uint8] + [None] * 8,
                                    {"num_hidden": 5})
    assert ins[1:3] == [(5, 6), (5,)] and ins[3:] == [(1,)] * 6
    assert outs == [(4, 5), (1,), (1,)] and touts == [np.int32, np.float32, np.float32]
    assert tins[1:3] == [np.int8, np.int8] and tins[3:] == [np.float32] * 6
    assert _infer(OPS[0], [(4, 3, 2)] + [None] * 5, [np.int8] + [None] * 5,
                  {"num_hidden": 5, "no_bias": True, "flatten": False})[1][0] == (4, 3, 5)
    ins, outs, _, _ = _infer(OPS[1], [(2, 3, 4, 9, 9)] + [None] * 5, [np.uint8] + [None] * 5,
                             {"kernel": (1, 3, 3), "num_filter": 8, "no_bias": True,
                              "stride": (1, 2, 2), "dilate": (1, 2, 1), "pad": (0, 1, 0)})
    assert ins[1] == (8, 3, 1, 3, 3) and outs[0] == (2, 8, 4, 4, 4)


def test_errors_name_op_and_argument():
    with pytest.raises(TypeInferError, match="quantized_fully_connected.*float32.*int8 or uint8"):
        run_op(OPS[0], [np.zeros((2, 3), F32), np.zeros((1, 3), np.int8),
                        *_rng(-1, 1, -1, 1)], {"num_hidden": 1, "no_bias": True})
    with pytest.raises(TypeInferError, match="quantized_conv.*weight.*uint8.*int8"):
        run_op(OPS[1], [np.zeros((1, 1, 3, 3), np.uint8), np.zeros((1, 1, 2, 2), np.uint8),
                        *_rng(-1, 1, -1, 1)], {"kernel": (2, 2), "num_filter": 1,
                                               "no_bias": True})
    with pytest.raises(ShapeError, match="quantized_conv.*num_group must be 1"):
        _infer(OPS[1], [(1, 4, 5, 5)] + [None] * 5, [np.uint8] + [None] * 5,
               {"kernel": (3, 3), "num_filter": 4, "num_group": 2, "no_bias": True})
    with pytest.raises(ShapeError, match="quantized_conv.*2-d or 3-d kernel"):
        _infer(OPS[1], [(1, 4, 5)] + [None] * 5, [np.uint8] + [None] * 5,
               {"kernel": (3,), "num_filter": 4, "no_bias": True})
    with pytest.raises(ShapeError, match="quantized_pooling.*pool_type must be max or avg"):
        _infer(OPS[2], [(1, 2, 4, 4), None, None], [np.int8, None, None],
               {"kernel": (2, 2), "pool_type": "sum"})
    with pytest.raises(ShapeError, match="quantized_pooling.*kernel size \\(5\\) exceeds"):
        _infer(OPS[2], [(1, 2, 4, 4), None, None], [np.int8, None, None], {"kernel": (5, 2)})
    with pytest.raises(TypeInferError, match="quantized_act.*act_type must be relu"):
        run_op(OPS[3], [np.zeros(2, np.int8), *_rng(-1, 1)], {"act_type": "tanh"})
    with pytest.raises(TypeInferError, match="quantized_elemwise_mul.*lhs.*uint8.*int8"):
        run_op(OPS[5], [np.zeros(2, np.uint8), np.zeros(2, np.int8), *_rng(-1, 1, -1, 1)])
    with pytest.raises(ShapeError, match="quantized_elemwise_add.*no broadcasting"):
        run_op(OPS[4], [np.zeros(2, np.int8), np.zeros((1, 2), np.int8), *_rng(-1, 1, -1, 1)])
    with pytest.raises(ShapeError, match="quantized_fully_connected.*weight"):
        _infer(OPS[0], [(2, 3), (4, 4)] + [None] * 4, [np.int8] + [None] * 5,
               {"num_hidden": 4, "no_bias": True})


@pytest.mark.parametrize("shape, other, flatten, want", [
    ((0, 64), (4, 8), True, (4, 64)),            # an LSTM cell's _zeros begin state
    ((0, 4, 16), (6, 8), True, (6, 4, 16)),
    ((0, 3, 5), (4, 3, 8), False, (4, 3, 5)),
])
def test_fc_data_batch_from_output(shape, other, flatten, want):
    """As MXNet's QuantizedFullyConnectedShape: the data's unknown batch size comes back
    from a known output (shapes checked against MXNet 1.9.1's infer_shape_partial)."""
    V = mx.sym.Variable
    fc = mx.sym.contrib.quantized_fully_connected(
        data=V("data", shape=shape), weight=V("w"), min_data=V("a"), max_data=V("b"),
        min_weight=V("c"), max_weight=V("d"), num_hidden=8, no_bias=True, flatten=flatten)
    s = mx.sym.elemwise_add(fc[0], V("other"))
    args, outs, _ = s.infer_shape_partial(other=other)
    got = dict(zip(s.list_arguments(), args))
    assert got["data"] == want and outs == [other]
    assert got["w"] == (8, want[-1] if not flatten else int(np.prod(want[1:])))


@pytest.mark.parametrize("op, float_op, requantize", [
    ("_contrib_quantized_fully_connected", "FullyConnected", True),
    ("_contrib_quantized_conv", "Convolution", True),
    ("_contrib_quantized_pooling", "Pooling", False),
    ("_contrib_quantized_act", "Activation", False),
    ("_contrib_quantized_elemwise_add", "elemwise_add", True),
    ("_contrib_quantized_elemwise_mul", "elemwise_mul", True),
    ("_contrib_quantized_concat", "Concat", False),
    ("_contrib_quantized_batch_norm", "BatchNorm", False),
    ("_contrib_quantized_rnn", "RNN", False),
    ("_contrib_quantized_flatten", "Flatten", False),
    ("_contrib_quantized_embedding", "Embedding", False),
])
def test_protocol_attributes(op, float_op, requantize):
    d = op_def(op)
    assert d.get_attr("FQuantizes") == float_op
    assert d.get_attr("FNeedRequantize", False) is requantize


def test_pooling_and_act_protocol():
    pool = op_def("_contrib_quantized_pooling").get_attr("FQuantizable")
    assert pool({"pool_type": "avg"}) and pool({}) and not pool({"pool_type": "lp"})
    act = op_def("_contrib_quantized_act").get_attr("FQuantizable")
    assert act({"act_type": "relu"}) and not act({"act_type": "tanh"})


def test_pooling_and_act_values():
    x = np.array([[[[-5, 3, 2], [1, -128, 4], [7, 0, -1]]]], np.int8)
    out, lo, hi = run_op(OPS[2], [x, *_rng(-2, 3)], {"kernel": (2, 2), "pool_type": "max",
                                                     "pooling_convention": "full",
                                                     "stride": (2, 2)})
    assert out.tolist() == [[[[3, 4], [7, -1]]]] and (lo[0], hi[0]) == (-2, 3)
    avg = run_op(OPS[2], [x, *_rng(-2, 3)], {"kernel": (1, 1), "global_pool": True,
                                              "pool_type": "avg"})[0]
    assert avg.dtype == np.int8 and avg.tolist() == [[[[-13]]]]      # -117 / 9
    relu = run_op(OPS[3], [np.array([-3, 0, 5], np.int8), *_rng(-1, 1)],
                  {"act_type": "relu"})[0]
    assert relu.tolist() == [0, 0, 5]
    relu = run_op(OPS[3], [np.array([3, 200], np.uint8), *_rng(0, 1)], {"act_type": "relu"})[0]
    assert relu.dtype == np.int8 and relu.tolist() == [3, -56]     # MXNet's int8 output


def test_elemwise_values_and_types():
    a, b = np.array([100, -7], np.int8), np.array([4, 127], np.int8)
    out, lo, hi = run_op(OPS[4], [a, b, *_rng(-1, 1, -3, 3)])
    assert out.dtype == np.int32 and (lo[0], hi[0]) == (-4, 4)
    # a counts 1/127.5 per step, b 3/127.5; the output 4/2^31
    want = np.rint(a * (F32(2 ** 31) / F32(4 * 127.5)) + b * (F32(3 * 2 ** 31) / F32(4 * 127.5)))
    np.testing.assert_allclose(out, want, rtol=1e-6)
    out, lo, hi = run_op(OPS[4], [a, b, *_rng(-1, 1, -3, 3)],
                         {"min_calib_range": -2.0, "max_calib_range": 2.0})
    assert out.dtype == np.int8 and out.tolist() == [50 + 6, 127] and (lo[0], hi[0]) == (-2, 2)
    out, lo, hi = run_op(OPS[5], [a, b, *_rng(-1, 1, -3, 3)])
    assert out.tolist() == [400, -889] and out.dtype == np.int32
    (f,) = run_op(OPS[5], [a, b, *_rng(-1, 1, -3, 3)], {"enable_float_output": True})
    np.testing.assert_allclose(f, [400 * 3 / 127.5 ** 2, -889 * 3 / 127.5 ** 2], rtol=1e-6)
    s = mx.sym.contrib.quantized_elemwise_mul(*[mx.sym.var(f"v{k}") for k in range(6)],
                                              enable_float_output=True)
    assert len(s.list_outputs()) == 1


def test_concat_and_batch_norm():
    a, b = np.array([[10, -20]], np.int8), np.array([[100]], np.uint8)
    out, lo, hi = run_op(OPS[6], [a, b, *_rng(-1, 1, 0, 2)], {"num_args": 2})
    # output range (-1, 2): a's steps halve, b's (255.5 per 2) become 127.5 per 2
    assert out.dtype == np.int8 and out.tolist() == [[5, -10, 50]] and (lo[0], hi[0]) == (-1, 2)
    s = mx.sym.contrib.quantized_concat(*[mx.sym.var(f"v{k}") for k in range(6)], num_args=2,
                                        dim=0)
    assert s.list_arguments() == [f"v{k}" for k in range(6)]
    assert s.infer_shape(v0=(2, 3), v1=(4, 3))[1][0] == (6, 3)
    concat = op_def(OPS[6]).get_attr("FQuantizable")
    assert concat({"num_args": "2"}) and not concat({"num_args": "2", "dim": "0"})
    bn = op_def(OPS[7])
    assert [bn.get_attr("FAvoidQuantizeInput")({}, i) for i in range(5)] == [False] + [True] * 4
    assert bn.get_attr("FNeedCalibrateOutput")({}) == [0]
    x = np.array([[[-100, 50]]], np.int8)
    one, zero = np.ones(1, F32), np.zeros(1, F32)
    out, lo, hi = run_op(OPS[7], [x, one, zero, zero, one, *_rng(-1, 1)],
                         {"eps": 0.0, "min_calib_range": -2.0, "max_calib_range": 2.0})
    assert out.tolist() == [[[-50, 25]]] and (lo[0], hi[0]) == (-2, 2)
    with pytest.raises(TypeInferError, match="quantized_batch_norm.*min_calib_range"):
        run_op(OPS[7], [x, one, zero, zero, one, *_rng(-1, 1)])


def test_rnn_protocol_shapes_and_errors():
    rnn = op_def("_contrib_quantized_rnn")
    assert rnn.get_attr("FQuantizable")({"mode": "lstm"})
    assert not rnn.get_attr("FQuantizable")({"mode": "gru"})
    assert [rnn.get_attr("FAvoidQuantizeInput")({}, i) for i in range(4)] == [False] + [True] * 3
    s = mx.sym.contrib.quantized_rnn(mx.sym.var("d"), state_size=4, num_layers=2, mode="lstm",
                                     bidirectional=True, state_outputs=True, name="q")
    assert s.list_arguments() == ["d", "q_parameters", "q_state", "q_state_cell", "q_min_data",
                                  "q_max_data"]
    args, outs, _ = s.infer_shape(d=(5, 2, 3))
    assert args[1] == (2 * 4 * 4 * (3 + 4 + 2) + 2 * 4 * 4 * (8 + 4 + 2),)
    assert outs == [(5, 2, 8), (4, 2, 4), (4, 2, 4)]
    with pytest.raises(TypeInferError, match="quantized_rnn.*int8.*uint8"):
        s.infer_type(d=np.int8)
    with pytest.raises(ShapeError, match="quantized_rnn.*mode must be lstm"):
        mx.sym.contrib.quantized_rnn(mx.sym.var("d"), state_size=4, num_layers=1,
                                     mode="gru").infer_shape(d=(5, 2, 3))


def test_embedding_protocol():
    emb = op_def("_contrib_quantized_embedding")
    attrs = {k: emb.get_attr(k) for k in ("FAvoidQuantizeInput", "FQuantizable")}
    assert attrs["FAvoidQuantizeInput"]({}, 0) and not attrs["FAvoidQuantizeInput"]({}, 1)
    assert attrs["FQuantizable"]({"input_dim": "3", "output_dim": "2"})
    assert not attrs["FQuantizable"]({"input_dim": "3", "output_dim": "2", "dtype": "float16"})


def test_frontends_reach_the_ops():
    x = mx.nd.array(np.arange(6).reshape(2, 3), dtype="int8")
    w = mx.nd.array(np.ones((2, 3)), dtype="int8")
    r = [mx.nd.array([v]) for v in (-1, 1, -1, 1)]
    out, lo, hi = mx.nd.contrib.quantized_fully_connected(x, w, *r, num_hidden=2, no_bias=True)
    assert out.asnumpy().tolist() == [[3, 3], [12, 12]] and out.dtype == np.int32
    s = mx.sym.contrib.quantized_conv(mx.sym.var("d"), mx.sym.var("w"), mx.sym.var("b"),
                                      *[mx.sym.var(f"r{k}") for k in range(6)], kernel=(3, 3),
                                      num_filter=4)
    assert s.list_arguments()[:3] == ["d", "w", "b"] and len(s.list_outputs()) == 3
    assert s.infer_shape(d=(1, 2, 5, 5))[1][0] == (1, 4, 3, 3)
