"""mx.contrib.onnx: models built with onnx.helper, imported, run by mxnext and compared with
ONNX Runtime; metadata; SymbolBlock import; errors naming the op, node and input."""

import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

import mxnext as mx  # noqa: E402
from mxnext._runtime.base import MXNetError, ParamError  # noqa: E402
from mxnext.contrib.onnx import get_model_metadata, import_model, import_to_gluon  # noqa: E402

RNG = np.random.default_rng(7)


def _init(name, *shape, scale=0.3):
    return numpy_helper.from_array((RNG.standard_normal(shape) * scale).astype(np.float32), name)


def _model(nodes, inputs, outputs, inits, opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model


def _conv_net(opset):
    """Conv (asymmetric pads) -> BatchNormalization -> Relu -> MaxPool -> Conv -> Relu ->
    GlobalAveragePool -> Reshape -> Gemm -> Softmax."""
    T = TensorProto.FLOAT
    var = numpy_helper.from_array(RNG.uniform(0.5, 1.5, 8).astype(np.float32), "bn_var")
    nodes = [
        helper.make_node("Conv", ["data", "w1", "b1"], ["c1"], pads=[1, 1, 0, 0],
                         kernel_shape=[3, 3]),
        helper.make_node("BatchNormalization", ["c1", "gamma", "beta", "bn_mean", "bn_var"],
                         ["bn"], epsilon=1e-3),
        helper.make_node("Relu", ["bn"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], kernel_shape=[3, 3],
                         group=2),
        helper.make_node("Relu", ["c2"], ["r2"]),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"]),
        helper.make_node("Reshape", ["gap", "flat_shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1),
        helper.make_node("Softmax", ["fc"], ["out"], axis=1),
    ]
    inits = [_init("w1", 8, 3, 3, 3), _init("b1", 8), _init("gamma", 8), _init("beta", 8),
             _init("bn_mean", 8), var, _init("w2", 8, 4, 3, 3), _init("fc_w", 5, 8),
             _init("fc_b", 5),
             numpy_helper.from_array(np.array([0, -1], dtype=np.int64), "flat_shape")]
    return _model(nodes, [helper.make_tensor_value_info("data", T, [2, 3, 12, 12])],
                  [helper.make_tensor_value_info("out", T, [2, 5])], inits, opset)


def _mlp():
    """Two branches Concat-ed, MatMul + Add, Sigmoid, Flatten, Gemm with alpha/beta."""
    T = TensorProto.FLOAT
    nodes = [
        helper.make_node("MatMul", ["x", "w_a"], ["a"]),
        helper.make_node("Add", ["a", "b_a"], ["a1"]),
        helper.make_node("Tanh", ["a1"], ["ta"]),
        helper.make_node("MatMul", ["x", "w_b"], ["b"]),
        helper.make_node("Sigmoid", ["b"], ["sb"]),
        helper.make_node("Concat", ["ta", "sb"], ["cat"], axis=-1),
        helper.make_node("Flatten", ["cat"], ["flat"], axis=1),
        helper.make_node("Gemm", ["flat", "w_c", "b_c"], ["out"], alpha=0.5, beta=2.0),
    ]
    inits = [_init("w_a", 6, 4), _init("b_a", 4), _init("w_b", 6, 3), _init("w_c", 7, 2),
             _init("b_c", 2)]
    return _model(nodes, [helper.make_tensor_value_info("x", T, [5, 6])],
                  [helper.make_tensor_value_info("out", T, [5, 2])], inits)


def _run_mxnext(model, feeds):
    sym, arg_params, aux_params = import_model(model)
    args = {**arg_params, **{k: mx.nd.array(v) for k, v in feeds.items()}}
    exe = sym.bind(mx.cpu(), args, grad_req="null", aux_states=aux_params)
    return [o.asnumpy() for o in exe.forward()]


def _run_ort(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


@pytest.mark.parametrize("opset", [11, 13, 17, 21])
def test_conv_net_matches_onnxruntime(opset):
    model = _conv_net(opset)
    feeds = {"data": RNG.standard_normal((2, 3, 12, 12)).astype(np.float32)}
    ours, = _run_mxnext(model, feeds)
    ref, = _run_ort(model, feeds)
    np.testing.assert_allclose(ours, ref, rtol=1e-4, atol=1e-6)


def test_conv_net_parameters_split_into_args_and_aux():
    sym, arg_params, aux_params = import_model(_conv_net(17))
    assert set(aux_params) == {"bn_mean", "bn_var"}
    assert {"w1", "b1", "gamma", "beta", "w2", "fc_w", "fc_b"} == set(arg_params)
    assert "flat_shape" not in arg_params          # read at import time, not a parameter
    assert sym.list_arguments()[0] == "data"


def test_mlp_matches_onnxruntime_from_a_file(tmp_path):
    path, model = tmp_path / "mlp.onnx", _mlp()
    onnx.save(model, path)
    feeds = {"x": RNG.standard_normal((5, 6)).astype(np.float32)}
    ours, = _run_mxnext(str(path), feeds)
    ref, = _run_ort(model, feeds)
    np.testing.assert_allclose(ours, ref, rtol=1e-5, atol=1e-6)


def test_import_to_gluon_gives_a_symbolblock_with_loaded_parameters(tmp_path):
    path = tmp_path / "conv.onnx"
    model = _conv_net(13)
    onnx.save(model, path)
    net = import_to_gluon(str(path), mx.cpu())
    assert isinstance(net, mx.gluon.SymbolBlock)
    x = RNG.standard_normal((2, 3, 12, 12)).astype(np.float32)
    ref, = _run_ort(model, {"data": x})
    np.testing.assert_allclose(net(mx.nd.array(x)).asnumpy(), ref, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(net.collect_params()["fc_b"].data().asnumpy(),
                               numpy_helper.to_array(model.graph.initializer[8]))


def test_get_model_metadata_lists_inputs_and_outputs(tmp_path):
    path = tmp_path / "conv.onnx"
    onnx.save(_conv_net(17), path)
    meta = get_model_metadata(str(path))
    assert meta == {"input_tensor_data": [("data", (2, 3, 12, 12), TensorProto.FLOAT)],
                    "output_tensor_data": [("out", (2, 5))]}


def test_reshape_shape_computed_from_shape_ops_is_folded():
    """A PyTorch-style exported flatten: Shape -> Gather -> Unsqueeze -> Concat -> Reshape."""
    T, I64 = TensorProto.FLOAT, TensorProto.INT64
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Constant", [], ["zero"], value=helper.make_tensor("z", I64, [], [0])),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus_one"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["y"]),
    ]
    inits = [numpy_helper.from_array(np.array([0], np.int64), "axes"),
             numpy_helper.from_array(np.array([-1], np.int64), "minus_one")]
    model = _model(nodes, [helper.make_tensor_value_info("x", T, [3, 2, 4])],
                   [helper.make_tensor_value_info("y", T, [3, 8])], inits)
    x = RNG.standard_normal((3, 2, 4)).astype(np.float32)
    sym, arg_params, _ = import_model(model)
    assert sym.list_arguments() == ["x"] and arg_params == {}
    np.testing.assert_array_equal(_run_mxnext(model, {"x": x})[0], x.reshape(3, 8))


def test_split_into_an_empty_part_runs_under_np_shape():
    """Split with sizes [4, 0] (an expanded RotaryEmbedding's shape) joined back by Concat:
    the empty part is a real size under np_shape; legacy shapes read its 0 as unknown."""
    T = TensorProto.FLOAT
    nodes = [helper.make_node("Split", ["x", "sizes"], ["a", "b"], axis=-1),
             helper.make_node("Neg", ["a"], ["na"]),
             helper.make_node("Concat", ["na", "b"], ["y"], axis=-1)]
    model = _model(nodes, [helper.make_tensor_value_info("x", T, [2, 4])],
                   [helper.make_tensor_value_info("y", T, [2, 4])],
                   [numpy_helper.from_array(np.array([4, 0], np.int64), "sizes")])
    x = RNG.standard_normal((2, 4)).astype(np.float32)
    with mx.util.np_shape(True):
        np.testing.assert_array_equal(_run_mxnext(model, {"x": x})[0], -x)
    with pytest.raises(MXNetError):
        _run_mxnext(model, {"x": x})


def test_reshape_allowzero_gives_an_empty_output_under_np_shape():
    T = TensorProto.FLOAT
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"], allowzero=1)],
                   [helper.make_tensor_value_info("x", T, [0, 3, 4])],
                   [helper.make_tensor_value_info("y", T, [3, 4, 0])],
                   [numpy_helper.from_array(np.array([3, 4, 0], np.int64), "shape")], opset=14)
    with mx.util.np_shape(True):
        y = _run_mxnext(model, {"x": np.zeros((0, 3, 4), np.float32)})[0]
    assert y.shape == (3, 4, 0) and y.dtype == np.float32


@pytest.mark.parametrize("op, value", [("ReduceMax", -np.inf), ("ReduceMin", np.inf),
                                       ("ReduceLogSumExp", -np.inf)])
def test_a_reduction_over_an_empty_axis_gives_its_identity(op, value):
    T = TensorProto.FLOAT
    model = _model([helper.make_node(op, ["x", "axes"], ["y"], keepdims=1)],
                   [helper.make_tensor_value_info("x", T, [2, 0, 3])],
                   [helper.make_tensor_value_info("y", T, [2, 1, 3])],
                   [numpy_helper.from_array(np.array([1], np.int64), "axes")], opset=18)
    with mx.util.np_shape(True):
        y = _run_mxnext(model, {"x": np.zeros((2, 0, 3), np.float32)})[0]
    np.testing.assert_array_equal(y, np.full((2, 1, 3), value, np.float32))


def test_int16_uint16_uint32_uint64_tensors_match_onnxruntime():
    """Inputs, initializers and Cast targets of the dtypes MXNet 1.9 does not hold."""
    u16, u64 = TensorProto.UINT16, TensorProto.UINT64
    nodes = [helper.make_node("Add", ["x", "w"], ["a"]),
             helper.make_node("Cast", ["a"], ["b"], to=u64),
             helper.make_node("Mul", ["b", "big"], ["y"]),
             helper.make_node("Cast", ["a"], ["s"], to=TensorProto.INT16),
             helper.make_node("Sub", ["s", "one"], ["z"]),
             helper.make_node("Cast", ["x"], ["x32"], to=TensorProto.UINT32),
             helper.make_node("Greater", ["u", "x32"], ["g"])]
    inits = [numpy_helper.from_array(np.array([[1, 0, 65000]], np.uint16), "w"),
             numpy_helper.from_array(np.array([2 ** 40], np.uint64), "big"),
             numpy_helper.from_array(np.array([1], np.int16), "one")]
    model = _model(nodes, [helper.make_tensor_value_info("x", u16, [2, 3]),
                           helper.make_tensor_value_info("u", TensorProto.UINT32, [2, 3])],
                   [helper.make_tensor_value_info("y", u64, [2, 3]),
                    helper.make_tensor_value_info("z", TensorProto.INT16, [2, 3]),
                    helper.make_tensor_value_info("g", TensorProto.BOOL, [2, 3])], inits)
    feeds = {"x": np.array([[3, 9, 500], [0, 7, 535]], np.uint16),
             "u": np.array([[4, 9, 0], [1, 6, 2 ** 32 - 1]], np.uint32)}
    sym, arg_params, aux_params = import_model(model)
    assert arg_params["big"].dtype == np.uint64 and arg_params["w"].dtype == np.uint16
    args = {**arg_params, **{k: mx.nd.array(v, dtype=v.dtype) for k, v in feeds.items()}}
    ours = sym.bind(mx.cpu(), args, grad_req="null", aux_states=aux_params).forward()
    for got, want in zip(ours, _run_ort(model, feeds)):
        assert np.dtype(got.dtype) == want.dtype
        np.testing.assert_array_equal(got.asnumpy(), want)


def test_an_unmapped_op_is_named_with_its_node():
    model = _model([helper.make_node("Einsum", ["x", "x"], ["y"], name="mix",
                                     equation="ij,ij->i")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])], [])
    with pytest.raises(MXNetError, match=r"no conversion for ONNX op 'Einsum' \(node 'mix'\)"):
        import_model(model)


def test_a_shape_computed_at_run_time_names_the_input():
    T = TensorProto.FLOAT
    model = _model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="r")],
                   [helper.make_tensor_value_info("x", T, [2, 3]),
                    helper.make_tensor_value_info("shape", TensorProto.INT64, [2])],
                   [helper.make_tensor_value_info("y", T, [3, 2])], [])
    with pytest.raises(MXNetError, match=r"'r' \(Reshape\): input 1 \('shape'\) must be "
                                         r"known at import time"):
        import_model(model)


def test_an_unconverted_attribute_value_is_named():
    model = _model([helper.make_node("Pad", ["x", "pads"], ["y"], name="p", mode="wrap")],
                   [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 1])],
                   [numpy_helper.from_array(np.array([0, -1, 0, -1], np.int64), "pads")])
    with pytest.raises(ParamError, match=r"'p' \(Pad\): pads=\[0, 0, -1, -1\] is not "
                                         r"converted; non-negative pads with mode 'wrap'"):
        import_model(model)


def test_mx_contrib_onnx_is_the_importer():
    assert mx.contrib.onnx.import_model is import_model


def test_without_onnx_the_importer_says_what_to_install():
    """A fresh interpreter where ``import onnx`` fails (sys.modules blocks it)."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['onnx'] = None\n"
            "import mxnext as mx\n"
            "try:\n"
            "    mx.contrib.onnx.import_model('model.onnx')\n"
            "except ImportError as err:\n"
            "    print(err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert "mx.contrib.onnx needs the onnx package: pip install 'mxnext[onnx]'" in out.stdout
