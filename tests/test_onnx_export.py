"""mx.onnx.export_model: Gluon model-zoo networks, MXNet-style symbolic networks, Gluon's RNN
layers and losses and single ops exported, checked with onnx.checker and run in ONNX Runtime
against mxnext's own outputs (1e-4 relative); every opset from 13 to the installed onnx's
latest; dynamic batch; the error for an op without a converter; ``mxnext onnx export``.

The heaviest model-zoo networks run only with MXNEXT_ONNX_HEAVY=1 (docs/onnx.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon
from mxnext.gluon.model_zoo import vision

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")

LATEST = onnx.defs.onnx_opset_version()
HEAVY = {"densenet161", "densenet169", "densenet201", "resnet101_v1", "resnet101_v2",
         "resnet152_v1", "resnet152_v2", "vgg13", "vgg13_bn", "vgg16", "vgg16_bn", "vgg19",
         "vgg19_bn"}
# input sizes: as small as each network's fixed pooling windows allow
SIZES = {"alexnet": 64, "inceptionv3": 299, "squeezenet1.0": 224, "squeezenet1.1": 224}


def run_onnx(path, feeds):
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    return session.run(None, {k: np.asarray(v) for k, v in feeds.items()})


def assert_close(got, want):
    want = np.asarray(want)
    assert got.shape == want.shape
    scale = max(float(np.abs(want).max()), 1e-30)
    assert float(np.abs(got - want).max()) <= 1e-4 * scale


def export_and_compare(tmp_path, sym, params, feeds, want, **kwargs):
    """Export ``sym``, check the model, run it on ``feeds`` and compare with ``want``
    (mxnext's outputs); returns the loaded ONNX model."""
    path = tmp_path / "model.onnx"
    names = [n for n in sym.list_inputs() if n in feeds]
    out = mx.onnx.export_model(sym, params, [feeds[n].shape for n in names],
                               [feeds[n].dtype for n in names], str(path), **kwargs)
    assert out == str(path)
    onnx.checker.check_model(out)
    got = run_onnx(path, feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert_close(g, w)
    return onnx.load(out)


def gluon_case(net, *inputs, call=None):
    """(symbol, parameters, feeds, outputs) of hybridized ``net`` called on ``inputs`` (by
    ``call(net, *inputs)`` if given), the data inputs named as ``HybridBlock.export`` names
    them (data, or data0, data1 ...)."""
    call = call or (lambda block, *args: block(*args))
    net.hybridize()
    outs = call(net, *inputs)
    outs = outs if isinstance(outs, (list, tuple)) else [outs]
    flat = [o for out in outs for o in (out if isinstance(out, (list, tuple)) else [out])]
    names = ["data"] if len(inputs) == 1 else [f"data{i}" for i in range(len(inputs))]
    sym = call(net, *[mx.sym.var(n) for n in names])
    if isinstance(sym, (list, tuple)):
        sym = mx.sym.Group([s for part in sym
                            for s in (part if isinstance(part, list) else [part])])
    params = {k: v.data() for k, v in net.collect_params().items()}
    return (sym, params, {n: x.asnumpy() for n, x in zip(names, inputs)},
            [o.asnumpy() for o in flat])


# -- the Gluon model zoo ---------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(vision._models))
def test_model_zoo_network(name, tmp_path):
    if name in HEAVY and not os.environ.get("MXNEXT_ONNX_HEAVY"):
        pytest.skip("heavy network: set MXNEXT_ONNX_HEAVY=1")
    size = SIZES.get(name, 224 if name.startswith("densenet") else 32)
    net = vision.get_model(name)
    net.initialize(mx.init.Xavier())
    x = mx.nd.random.uniform(shape=(1, 3, size, size))
    export_and_compare(tmp_path, *gluon_case(net, x))


# -- MXNet-style symbolic networks -----------------------------------------------------------
def mlp():
    data = mx.sym.var("data")
    fc1 = mx.sym.FullyConnected(data, num_hidden=16, name="fc1")
    act = mx.sym.Activation(fc1, act_type="relu", name="relu1")
    fc2 = mx.sym.FullyConnected(act, num_hidden=10, name="fc2")
    return mx.sym.SoftmaxOutput(fc2, name="softmax"), (4, 1, 8, 8)


def lenet():
    data = mx.sym.var("data")
    c1 = mx.sym.Convolution(data, kernel=(5, 5), num_filter=6, name="conv1")
    p1 = mx.sym.Pooling(mx.sym.Activation(c1, act_type="tanh"), pool_type="max",
                        kernel=(2, 2), stride=(2, 2))
    c2 = mx.sym.Convolution(p1, kernel=(5, 5), num_filter=12, name="conv2")
    p2 = mx.sym.Pooling(mx.sym.Activation(c2, act_type="tanh"), pool_type="avg",
                        kernel=(2, 2), stride=(2, 2))
    fc = mx.sym.FullyConnected(mx.sym.Flatten(p2), num_hidden=10, name="fc")
    bn = mx.sym.BatchNorm(fc, fix_gamma=False, name="bn")
    return mx.sym.SoftmaxOutput(bn, name="softmax"), (2, 1, 28, 28)


def inception_style():
    """The blocks of MXNet's example googlenet / inception-bn symbols: LRN, padded pooling,
    an inception module's concatenated branches, Dropout."""
    data = mx.sym.var("data")
    x = mx.sym.Activation(mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=8),
                          act_type="relu")
    x = mx.sym.Pooling(mx.sym.LRN(x, nsize=5, alpha=1e-4, beta=0.75), kernel=(3, 3),
                       stride=(2, 2), pad=(1, 1), pool_type="max")
    branches = [mx.sym.Convolution(x, kernel=(1, 1), num_filter=4),
                mx.sym.Convolution(x, kernel=(3, 3), pad=(1, 1), num_filter=4),
                mx.sym.Pooling(x, kernel=(3, 3), stride=(1, 1), pad=(1, 1), pool_type="avg")]
    x = mx.sym.Concat(*[mx.sym.identity(b) for b in branches], dim=1)
    x = mx.sym.Pooling(x, kernel=(8, 8), global_pool=True, pool_type="avg")
    x = mx.sym.FullyConnected(mx.sym.Dropout(mx.sym.Flatten(x), p=0.5), num_hidden=5)
    return mx.sym.SoftmaxOutput(x, name="softmax"), (2, 3, 16, 16)


def resnet_style():
    """A pre-activation residual unit as MXNet's example resnet symbol builds it."""
    data = mx.sym.BatchNorm(mx.sym.var("data"), fix_gamma=True, eps=2e-5)
    x = mx.sym.Convolution(data, kernel=(3, 3), pad=(1, 1), num_filter=8, no_bias=True)
    y = mx.sym.Activation(mx.sym.BatchNorm(x, fix_gamma=False), act_type="relu")
    y = mx.sym.Convolution(y, kernel=(3, 3), stride=(2, 2), pad=(1, 1), num_filter=8,
                           no_bias=True)
    short = mx.sym.Convolution(x, kernel=(1, 1), stride=(2, 2), num_filter=8, no_bias=True)
    x = mx.sym.Pooling(mx.sym.elemwise_add(y, short), global_pool=True, kernel=(7, 7),
                       pool_type="avg")
    x = mx.sym.FullyConnected(mx.sym.Flatten(x), num_hidden=5)
    return mx.sym.SoftmaxOutput(x, name="softmax"), (2, 3, 16, 16)


@pytest.mark.parametrize("build", [mlp, lenet, inception_style, resnet_style])
def test_symbolic_network_from_checkpoint_files(build, tmp_path):
    sym, shape = build()
    arg_shapes, _, aux_shapes = sym.infer_shape(data=shape)
    rng = np.random.default_rng(0)
    arg = {n: mx.nd.array(rng.normal(0, 0.3, s)) for n, s in
           zip(sym.list_arguments(), arg_shapes) if n not in ("data", "softmax_label")}
    aux = {n: mx.nd.array(rng.uniform(0.5, 1.5, s)) for n, s in
           zip(sym.list_auxiliary_states(), aux_shapes)}
    prefix = str(tmp_path / "net")
    mx.model.save_checkpoint(prefix, 0, sym, arg, aux)
    x = rng.uniform(size=shape).astype(np.float32)
    out = mx.onnx.export_model(f"{prefix}-symbol.json", f"{prefix}-0000.params", [shape],
                               np.float32, str(tmp_path / "net.onnx"))
    onnx.checker.check_model(out)
    model = onnx.load(out)
    assert [i.name for i in model.graph.input] == ["data"]     # the label is left out
    executor = sym.bind(mx.cpu(), {"data": mx.nd.array(x),
                                   "softmax_label": mx.nd.zeros(shape[:1]), **arg},
                        aux_states=aux)
    want = executor.forward(is_train=False)
    assert_close(run_onnx(out, {"data": x})[0], want[0].asnumpy())
    # the (arg_params, aux_params) pair and MXNet's old argument names give the same model
    again = mx.onnx.export_model(sym, [arg, aux], input_shape=[shape], input_type=np.float32,
                                 onnx_file_path=str(tmp_path / "again.onnx"))
    assert_close(run_onnx(again, {"data": x})[0], want[0].asnumpy())


# -- Gluon's RNN layers and losses -----------------------------------------------------------
@pytest.mark.parametrize("layer", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("layout, layers, bidirectional", [("TNC", 2, True), ("NTC", 1, False)])
def test_rnn_layer_with_its_states(layer, layout, layers, bidirectional, tmp_path):
    net = getattr(gluon.rnn, layer)(6, num_layers=layers, layout=layout,
                                    bidirectional=bidirectional)
    net.initialize(mx.init.Uniform(0.5))
    x = mx.nd.random.uniform(shape=(5, 3, 4))
    batch = x.shape[layout.find("N")]
    states = [mx.nd.random.uniform(shape=s.shape) for s in net.begin_state(batch)]
    case = gluon_case(net, x, *states, call=lambda block, data, *hidden: block(data, list(hidden)))
    assert np.abs(case[3][0]).max() > 0
    export_and_compare(tmp_path, *case)


def _loss_inputs():
    rng = np.random.default_rng(1)
    pred = mx.nd.array(rng.uniform(-1, 1, (4, 5)))
    dense = mx.nd.array(rng.uniform(0.1, 1, (4, 5)))
    sign = mx.nd.array(np.where(rng.uniform(size=(4, 5)) > 0.5, 1.0, -1.0))
    return {"SoftmaxCrossEntropyLoss": [pred, mx.nd.array([0, 3, 1, 4])],
            "L2Loss": [pred, dense], "L1Loss": [pred, dense],
            "SigmoidBinaryCrossEntropyLoss": [pred, dense], "KLDivLoss": [pred, dense],
            "HuberLoss": [pred, dense], "HingeLoss": [pred, sign],
            "SquaredHingeLoss": [pred, sign], "LogisticLoss": [pred, sign],
            "TripletLoss": [pred, dense, sign], "PoissonNLLLoss": [pred, dense],
            "CosineEmbeddingLoss": [pred, dense, mx.nd.array([1, -1, 1, -1])]}


@pytest.mark.parametrize("loss", sorted(_loss_inputs()))
def test_loss_inference_graph(loss, tmp_path):
    export_and_compare(tmp_path, *gluon_case(getattr(gluon.loss, loss)(),
                                             *_loss_inputs()[loss]))


# -- single ops ------------------------------------------------------------------------------
D = mx.sym.var("data")
OPS = {
    "reshape_codes": lambda: mx.sym.reshape(D, shape=(0, -3, -2)),
    "reshape_split": lambda: mx.sym.reshape(D, shape=(-4, 1, 2, -2)),
    "transpose_concat": lambda: mx.sym.transpose(mx.sym.concat(D, D * 2, dim=1),
                                                 axes=(0, 2, 1, 3)),
    "slice": lambda: mx.sym.slice(D, begin=(0, 1, None), end=(None, 3, 2), step=(1, 1, -1)),
    "slice_axis_split": lambda: mx.sym.Group(list(mx.sym.split(
        mx.sym.slice_axis(D, axis=3, begin=1, end=5), num_outputs=2, axis=3, squeeze_axis=False))),
    "scalars": lambda: mx.sym.clip((3 - D) * 2 / 4 + 1, a_min=0.5, a_max=2) ** 2,
    "compare": lambda: (D > 0.5) + mx.sym.broadcast_lesser(D, mx.sym.ones((1, 1, 1, 6))),
    "reductions": lambda: mx.sym.Group([mx.sym.sum(D, axis=(1, 3)), mx.sym.mean(D, axis=1,
                                        exclude=True, keepdims=True), mx.sym.max(D),
                                        mx.sym.norm(D, axis=2), mx.sym.argmax(D, axis=1)]),
    "unary": lambda: mx.sym.Group([mx.sym.exp(D), mx.sym.log1p(D), mx.sym.sqrt(D),
                                   mx.sym.sigmoid(D), mx.sym.square(D), mx.sym.rsqrt(D + 1)]),
    "softmax": lambda: mx.sym.Group([mx.sym.softmax(D, axis=1), mx.sym.log_softmax(D),
                                     mx.sym.softmax(D, temperature=2.0)]),
    "broadcast": lambda: mx.sym.broadcast_to(mx.sym.sum(D, axis=2, keepdims=True),
                                             shape=(0, 0, 4, 0)),
    "expand_squeeze_tile": lambda: mx.sym.tile(mx.sym.squeeze(mx.sym.expand_dims(D, axis=0),
                                                               axis=0), reps=(1, 2)),
    "topk": lambda: mx.sym.topk(D, k=2, ret_typ="both"),
    "leaky": lambda: mx.sym.Group([mx.sym.LeakyReLU(D - 0.5, act_type=t)
                                   for t in ("leaky", "elu", "selu", "gelu")]),
    "upsampling": lambda: mx.sym.UpSampling(D, scale=2, sample_type="nearest"),
    "adaptive_pool": lambda: mx.sym.contrib.AdaptiveAvgPooling2D(D, output_size=2),
    "blockgrad_pad": lambda: mx.sym.Pad(mx.sym.BlockGrad(D), mode="edge",
                                        pad_width=(0, 0, 0, 0, 1, 1, 2, 2)),
    "dot": lambda: mx.sym.batch_dot(D, D, transpose_b=True),
    "pooling": lambda: mx.sym.Group([
        mx.sym.Pooling(D, kernel=(3, 3), pool_type="avg", pad=(1, 1), count_include_pad=False),
        mx.sym.Pooling(D, kernel=(3, 3), stride=(2, 2), pool_type="max",
                       pooling_convention="full")]),
}


@pytest.mark.parametrize("opset", [13, LATEST])
@pytest.mark.parametrize("op", sorted(OPS))
def test_op(op, opset, tmp_path):
    sym = OPS[op]()
    x = np.random.default_rng(2).uniform(0.1, 1, (2, 3, 4, 6)).astype(np.float32)
    want = [o.asnumpy() for o in sym.eval(data=mx.nd.array(x))]
    export_and_compare(tmp_path, sym, {}, {"data": x}, want, opset_version=opset)


def _weights(*shape):
    return mx.nd.array(np.random.default_rng(3).normal(0, 0.5, shape))


I = mx.sym.var("index")
W = mx.sym.var("weight")
# name -> (symbol, its other inputs, its parameters); data is (2, 3, 4, 6)
MORE = {
    "take_pick": lambda: (mx.sym.Group([mx.sym.take(D, I, axis=1), mx.sym.pick(D, I, axis=1)]),
                          {"index": np.random.default_rng(5).integers(0, 3, (2, 4, 6))
                           .astype(np.float32)}, {}),
    "embedding_one_hot": lambda: (
        mx.sym.Group([mx.sym.broadcast_add(mx.sym.Embedding(I, W, input_dim=5, output_dim=3),
                                           mx.sym.sum(D)),
                      mx.sym.one_hot(I, depth=5)]),
        {"index": np.array([[0, 4, 2], [1, 1, 3]], np.float32)}, {"weight": _weights(5, 3)}),
    "gather_nd": lambda: (mx.sym.gather_nd(D, I),
                          {"index": np.array([[1, 0], [2, 1]], np.float32)}, {}),
    "sequence": lambda: (
        mx.sym.Group([mx.sym.SequenceMask(D, I, use_sequence_length=True, axis=1, value=-1),
                      mx.sym.SequenceLast(D, I, use_sequence_length=True, axis=1),
                      mx.sym.SequenceLast(D)]),
        {"index": np.array([3, 1], np.float32)}, {}),
    "where_cast": lambda: (mx.sym.where(D > 0.5, mx.sym.Cast(I, dtype="float32"), D * 0),
                           {"index": np.ones((2, 3, 4, 6), np.float32)}, {}),
    "fully_connected_3d": lambda: (mx.sym.FullyConnected(D, W, num_hidden=2, no_bias=True,
                                                         flatten=False),
                                   {}, {"weight": _weights(2, 6)}),
    "deconvolution": lambda: (mx.sym.Deconvolution(D, W, kernel=(3, 3), stride=(2, 2),
                                                   pad=(1, 1), adj=(1, 1), num_filter=2),
                              {}, {"weight": _weights(3, 2, 3, 3)}),
    "norms": lambda: (mx.sym.Group([mx.sym.LRN(D, nsize=3), mx.sym.L2Normalization(D),
                                    mx.sym.InstanceNorm(D, W, W * 0.5),
                                    mx.sym.LayerNorm(D, mx.sym.ones((6,)), mx.sym.zeros((6,)))]),
                      {}, {"weight": _weights(3)}),
    "shapes": lambda: (mx.sym.Group([mx.sym.stack(D, D, axis=1), mx.sym.swapaxes(D, 1, 3),
                                     mx.sym.repeat(D, repeats=2, axis=2),
                                     mx.sym.reshape_like(D, mx.sym.zeros((6, 4, 6))),
                                     mx.sym.depth_to_space(mx.sym.tile(D, reps=(1, 4, 1, 1)), 2),
                                     mx.sym.space_to_depth(D, 2)]), {}, {}),
    "constants": lambda: (mx.sym.broadcast_add(mx.sym.broadcast_add(D, mx.sym.arange(6)),
                                               mx.sym.ones((4, 6)) * 2), {}, {}),
    "reverse_argsort_mod": lambda: (
        mx.sym.Group([mx.sym.reverse(D, axis=(1, 3)), mx.sym.argsort(D, axis=2),
                      mx.sym.broadcast_mod(D * 7 - 3, I), mx.sym.SequenceReverse(D),
                      mx.sym.SequenceReverse(D, mx.sym.var("length"), use_sequence_length=True),
                      mx.sym.contrib.div_sqrt_dim(D)]),
        {"index": np.array([[[[0.7]]], [[[-1.3]]]], np.float32),
         "length": np.array([2, 1, 2], np.float32)}, {}),
    "self_attention": lambda: (
        mx.sym.contrib.interleaved_matmul_selfatt_valatt(
            D, mx.sym.softmax(mx.sym.contrib.interleaved_matmul_selfatt_qk(D, heads=2)),
            heads=2), {"data": np.random.default_rng(6).normal(size=(3, 2, 12))
                       .astype(np.float32)}, {}),
}


@pytest.mark.parametrize("op", sorted(MORE))
def test_op_with_more_inputs(op, tmp_path):
    sym, feeds, params = MORE[op]()
    feeds = {"data": np.random.default_rng(4).uniform(0.1, 1, (2, 3, 4, 6)).astype(np.float32),
             **feeds}     # a case may give its own data
    args = {**{k: mx.nd.array(v) for k, v in feeds.items()}, **params}
    want = [o.asnumpy() for o in sym.eval(**{k: v for k, v in args.items()
                                             if k in sym.list_inputs()})]
    export_and_compare(tmp_path, sym, params, {k: v for k, v in feeds.items()
                                               if k in sym.list_inputs()}, want)


# -- opsets, dynamic shapes, the interface -----------------------------------------------------
def small_net():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, padding=1), gluon.nn.BatchNorm(), gluon.nn.Activation("relu"),
            gluon.nn.MaxPool2D(), gluon.nn.LayerNorm(), gluon.nn.Flatten(), gluon.nn.Dense(3))
    net.initialize(mx.init.Xavier())
    return net


@pytest.mark.parametrize("opset", range(13, LATEST + 1))
def test_every_opset_from_13_to_the_latest(opset, tmp_path):
    model = export_and_compare(tmp_path, *gluon_case(small_net(), mx.nd.ones((2, 3, 8, 8))),
                               opset_version=opset)
    assert [(o.domain, o.version) for o in model.opset_import] == [("", opset)]


def test_the_default_opset_is_the_installed_onnx_latest(tmp_path):
    model = export_and_compare(tmp_path, *gluon_case(small_net(), mx.nd.ones((1, 3, 8, 8))))
    assert model.opset_import[0].version == LATEST


def test_shape_inference_on_request(tmp_path):
    sym, params, _, _ = gluon_case(small_net(), mx.nd.ones((1, 3, 8, 8)))
    plain = mx.onnx.export_model(sym, params, [(1, 3, 8, 8)],
                                 onnx_file_path=str(tmp_path / "p.onnx"))
    inferred = mx.onnx.export_model(sym, params, [(1, 3, 8, 8)], run_shape_inference=True,
                                    onnx_file_path=str(tmp_path / "i.onnx"))
    assert not onnx.load(plain).graph.value_info
    assert len(onnx.load(inferred).graph.value_info) > 5


def test_dynamic_batch(tmp_path):
    net = small_net()
    sym, params, feeds, _ = gluon_case(net, mx.nd.ones((2, 3, 8, 8)))
    path = mx.onnx.export_model(sym, params, [(2, 3, 8, 8)], np.float32,
                                str(tmp_path / "d.onnx"), dynamic=True,
                                dynamic_input_shapes=[(None, 3, 8, 8)])
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert not dims[0].HasField("dim_value") and [d.dim_value for d in dims[1:]] == [3, 8, 8]
    for batch in (1, 5):
        x = mx.nd.random.uniform(shape=(batch, 3, 8, 8))
        assert_close(run_onnx(path, {"data": x.asnumpy()})[0], net(x).asnumpy())
    path = mx.onnx.export_model(sym, params, [(2, 3, 8, 8)], np.float32,
                                str(tmp_path / "all.onnx"), dynamic=True)
    dims = onnx.load(path).graph.input[0].type.tensor_type.shape.dim
    assert not any(d.HasField("dim_value") for d in dims)


def test_int16_uint16_uint32_uint64_inputs_parameters_and_casts(tmp_path):
    x, w = mx.sym.var("x"), mx.sym.var("w")
    y = mx.sym.cast(mx.sym.broadcast_add(x, w), dtype="uint64")
    z = mx.sym.cast(x, dtype="int16") - 1
    g = mx.sym.broadcast_greater(mx.sym.cast(x, dtype="uint32"), mx.sym.var("u"))
    out = mx.sym.Group([y, z, g])
    w_value = mx.nd.array([[1, 2, 65000]], dtype="uint16")
    path = mx.onnx.export_model(out, {"w": w_value}, [(2, 3), (2, 3)], [np.uint16, np.uint32],
                                str(tmp_path / "narrow.onnx"))
    feeds = {"x": np.array([[3, 9, 500], [0, 7, 535]], np.uint16),
             "u": np.array([[4, 9, 0], [1, 6, 2 ** 32 - 1]], np.uint32)}
    args = {"w": w_value, **{k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}}
    ours = out.bind(mx.cpu(), args, grad_req="null").forward()
    for got, want in zip(run_onnx(path, feeds), ours):
        assert got.dtype == np.dtype(want.dtype)
        np.testing.assert_array_equal(got, want.asnumpy())


def test_operator_support():
    ops = mx.onnx.get_operator_support()
    assert ops == sorted(ops) == mx.onnx.get_operator_support(13)
    for op in ("Convolution", "BatchNorm", "RNN", "_rnn_param_concat", "BlockGrad", "topk",
               "UpSampling", "_contrib_AdaptiveAvgPooling2D", "SoftmaxOutput", "Embedding"):
        assert op in ops
    with pytest.raises(mx.base.ParamError, match=f"opset_version must be an int from 13 to "
                                                 f"{LATEST}.* not 12"):
        mx.onnx.get_operator_support(12)


def test_an_op_without_converter_is_named_with_its_node(tmp_path):
    sym = mx.sym.contrib.ROIAlign(D, mx.sym.var("rois"), pooled_size=(2, 2),
                                  spatial_scale=1.0, name="align")
    with pytest.raises(mx.MXNetError, match=r"op '_contrib_ROIAlign' \(node 'align'\) has no "
                                            r"ONNX converter .*get_operator_support"):
        mx.onnx.export_model(sym, {}, [(1, 3, 8, 8), (2, 5)],
                             onnx_file_path=str(tmp_path / "x.onnx"))
    assert not (tmp_path / "x.onnx").exists()


def test_wrong_arguments_say_what_was_expected():
    sym = mx.sym.relu(D)
    with pytest.raises(mx.base.ParamError, match=r"in_shapes gives 2 shapes but the model has "
                                                 r"1 data inputs \['data'\]"):
        mx.onnx.export_model(sym, {}, [(1, 8), (1, 8)])
    with pytest.raises(mx.base.ParamError, match="sym must be a Symbol or a -symbol.json path"):
        mx.onnx.export_model(3, {}, [(1, 8)])
    with pytest.raises(mx.base.ParamError, match="set dynamic=True"):
        mx.onnx.export_model(sym, {}, [(1, 8)], dynamic_input_shapes=[(None, 8)])


# -- the command and the missing extra ---------------------------------------------------------
def test_cli_exports_a_checkpoint(tmp_path):
    net = vision.get_model("mobilenet0.25")
    net.initialize(mx.init.Xavier())
    net.hybridize()
    x = mx.nd.random.uniform(shape=(1, 3, 32, 32))
    want = net(x).asnumpy()
    net.export(str(tmp_path / "mb"))
    cli = Path(sys.executable).with_name("mxnext")
    r = subprocess.run([str(cli), "onnx", "export", "mb-symbol.json", "mb-0000.params",
                        "--input", "data:1,3,32,32", "-o", "model.onnx", "--opset", "13"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert r.returncode == 0, r.stderr
    assert r.stdout == "wrote model.onnx (inputs data:(1, 3, 32, 32))\n"
    assert onnx.load(tmp_path / "model.onnx").opset_import[0].version == 13
    assert_close(run_onnx(tmp_path / "model.onnx", {"data": x.asnumpy()})[0], want)
    r = subprocess.run([str(cli), "onnx", "export", "mb-symbol.json", "mb-0000.params",
                        "--input", "image:1,3,32,32"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=240)
    assert r.returncode == 2
    assert "the model's data inputs are ['data'], --input gives ['image']" in r.stderr


def test_without_onnx_it_says_what_to_install():
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import mxnext as mx\n"
            "try:\n    mx.onnx.get_operator_support()\n"
            "except ImportError as e:\n    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stderr
    assert "pip install 'mxnext[onnx]'" in r.stdout
