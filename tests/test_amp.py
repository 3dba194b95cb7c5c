"""mx.contrib.amp: MXNet's op lists, the cast insertion of convert_symbol (where MXNet puts
amp_cast / amp_multicast), converted networks computing float32's results within float16
(bfloat16) tolerance, the dynamic loss scaler, and float16 training with loss scaling
reaching float32's accuracy (in a child process: amp.init rewrites mx.nd and mx.sym)."""

import importlib.util
import json
import pathlib
import subprocess
import sys

import numpy as np
import pytest

import mxnext as mx
from mxnext import gluon
from mxnext.base import MXNetError
from mxnext.contrib import amp
from mxnext.gluon.model_zoo import vision

HERE = pathlib.Path(__file__).parent
FIX = HERE / "fixtures" / "mxnet-1.9.1"
_spec = importlib.util.spec_from_file_location("amp_nets", FIX / "amp_nets.py")
amp_nets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(amp_nets)


def _nodes(sym):
    return json.loads(sym.tojson(remove_amp_cast=False))["nodes"]


def _reads(nodes, name):
    """The names of the nodes node ``name`` reads."""
    node = next(n for n in nodes if n["name"] == name)
    return [nodes[i]["name"] for i, _, _ in node["inputs"]]


def _cnn():
    return amp_nets.cnn(mx)


def test_op_lists_are_mxnets():
    assert amp.list_lp16_ops("float16") == ["Convolution", "Deconvolution", "FullyConnected",
                                            "RNN"]
    assert amp.list_lp16_ops("bfloat16") == ["Convolution", "FullyConnected"]
    fp16_sizes = [len(f("float16")) for f in (amp.list_fp32_ops, amp.list_lp16_fp32_ops,
                                              amp.list_widest_type_cast)]
    assert fp16_sizes == [136, 318, 113]
    assert {"softmax", "norm", "log_softmax"} <= set(amp.list_fp32_ops("float16"))
    assert {"elemwise_add", "Concat", "broadcast_mul"} <= set(amp.list_widest_type_cast("float16"))
    assert ("Activation", "act_type", ["softrelu"]) in amp.list_conditional_fp32_ops("bfloat16")
    assert amp.list_loss_output_functions("float16")[0] == "SoftmaxOutput"
    assert amp.list_lp16_use_fp32_params("float16") is None
    assert amp.list_lp16_use_fp32_params("bfloat16")["BatchNorm"][1:] == [
        "gamma", "beta", "moving_mean", "moving_var"]
    from mxnext.contrib.amp.lists import symbol_bf16
    assert amp.list_fp32_ops("bfloat16") is symbol_bf16.FP32_FUNCS
    with pytest.raises(MXNetError, match="amp.list_fp32_ops: target_dtype must be float16 or "
                                         "bfloat16, got 'float64'"):
        amp.list_fp32_ops("float64")


@pytest.mark.parametrize("key", list(amp_nets.CONFIGS))
def test_convert_symbol_gives_mxnets_graph(key):
    # every node, its inputs and __dtype__ as MXNet 1.9.1's convert_symbol made them
    want = json.loads((FIX / "amp-mxnet191.json").read_text())[key]
    target, kw = amp_nets.CONFIGS[key]
    got = amp_nets.graph(amp.convert_symbol(_cnn(), target, data_names=["data"], **kw))
    assert got == want


def test_convert_symbol_casts_where_mxnet_does():
    nodes = _nodes(amp.convert_symbol(_cnn(), data_names=["data"]))
    by_name = {n["name"]: n for n in nodes}
    # Convolution / FullyConnected: every input cast to float16 (data and parameters)
    assert _reads(nodes, "conv") == ["data_amp_cast_float16", "conv_weight_amp_cast_float16",
                                     "conv_bias_amp_cast_float16"]
    assert by_name["conv_weight_amp_cast_float16"]["attrs"]["dtype"] == "float16"
    # BatchNorm and relu run in whatever comes: no casts; pool's float16 output is shared
    assert _reads(nodes, "bn")[0] == "conv" and _reads(nodes, "fc")[0] == "pool"
    # softrelu is conditionally fp32; so is norm (fp32 list), reading the float32 data as is
    assert _reads(nodes, "soft") == ["pool_output_amp_cast_float32"]
    assert _reads(nodes, "fc2")[0] == "soft_output_amp_cast_float16"
    assert _reads(nodes, "norm0") == ["data"]
    # widest-type ops: both float16 -> no cast; float16 and float32 -> float32; an input of
    # unknown type (a variable) -> amp_multicast
    assert _reads(nodes, "_plus0") == ["fc", "fc2"]
    assert _reads(nodes, "mixed") == ["_plus0_output_amp_cast_float32", "reshape0"]
    assert _reads(nodes, "scaled") == ["mixed_0_amp_multicast"] * 2
    assert by_name["mixed_0_amp_multicast"]["attrs"]["num_outputs"] == "2"
    assert _reads(nodes, "sm") == ["scaled_0_amp_cast_float32"]
    # parameters get __dtype__ (float32: cast_optional_params is off)
    assert by_name["conv_weight"]["attrs"]["__dtype__"] == "0"
    assert "__dtype__" not in by_name["data"].get("attrs", {})


def test_convert_symbol_options():
    sym = _cnn()
    nodes = _nodes(amp.convert_symbol(sym, data_names=["data"], excluded_sym_names=["fc"],
                                      cast_optional_params=True))
    assert _reads(nodes, "fc") == ["pool_output_amp_cast_float32", "fc_weight", "fc_bias"]
    assert _reads(nodes, "conv") == ["data_amp_cast_float16", "conv_weight", "conv_bias"]
    assert next(n for n in nodes if n["name"] == "conv_weight")["attrs"]["__dtype__"] == "2"
    with pytest.raises(MXNetError, match=r"ops cannot be in two lists; in both "
                                         r"target_dtype_ops and fp32_ops: \['FullyConnected'\]"):
        amp.convert_symbol(sym, target_dtype_ops=["FullyConnected"], fp32_ops=["FullyConnected"])
    with pytest.raises(MXNetError, match=r"ops \['MyOp'\] are in none of amp.list_lp16_ops"):
        amp.convert_symbol(sym, fp32_ops=["MyOp"])
    with pytest.raises(MXNetError, match="target_dtype must be 'float16' or 'bfloat16', got "
                                         "'int8'"):
        amp.convert_symbol(sym, target_dtype="int8")
    # MXNet asserts these: code written for it catches AssertionError
    with pytest.raises(AssertionError, match="are in none of"):
        amp.convert_symbol(sym, target_dtype="bfloat16", fp32_ops=["elemwise_add"])
    with pytest.raises(AssertionError, match="must be a list"):
        amp.convert_symbol(sym, fp32_ops="sin")


@pytest.mark.parametrize("target, rtol", [("float16", 5e-3), ("bfloat16", 4e-2)])
def test_convert_model_agrees_with_float32(target, rtol):
    sym = _cnn()
    ex = sym.simple_bind(mx.cpu(), data=(4, 3, 10, 10))
    rng = np.random.default_rng(0)
    for name, arr in ex.arg_dict.items():
        arr[:] = rng.normal(scale=0.3, size=arr.shape)
    ex.arg_dict["scale"][:] = 1
    want = ex.forward()[0].asnumpy()
    args = {k: v for k, v in ex.arg_dict.items() if k != "data"}
    csym, cargs, caux = amp.convert_model(sym, args, dict(ex.aux_dict), target_dtype=target,
                                          cast_optional_params=True)
    assert cargs["conv_weight"].dtype == np.dtype(target)
    assert cargs["bn_gamma"].dtype == np.float32 and caux["bn_moving_var"].dtype == np.float32
    cex = csym.simple_bind(mx.cpu(), data=(4, 3, 10, 10), type_dict={"data": np.float32})
    for name, arr in {**cargs, **caux, "data": ex.arg_dict["data"]}.items():
        (cex.aux_dict if name in caux else cex.arg_dict)[name][:] = arr
    got = cex.forward()[0].asnumpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())


@pytest.mark.parametrize("target, rtol", [("float16", 5e-3), ("bfloat16", 3e-2)])
def test_convert_hybrid_block_resnet18(target, rtol):
    net = vision.resnet18_v1(classes=10)
    net.initialize(mx.init.Xavier(magnitude=2))
    net.hybridize()
    x = mx.nd.random.uniform(shape=(2, 3, 32, 32))
    want = net(x).asnumpy()
    block = amp.convert_hybrid_block(net, target_dtype=target)
    assert isinstance(block, gluon.SymbolBlock)
    got = block(x).asnumpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * np.abs(want).max())
    nodes = _nodes(amp.convert_symbol(net._cached_graph[1], target, data_names=["data"]))
    ops = [n["op"] for n in nodes]
    assert ops.count("Convolution") == 20
    convs = [n["name"] for n in nodes if n["op"] == "Convolution"]
    assert all(r.endswith(f"_amp_cast_{target}") for c in convs for r in _reads(nodes, c)[1:])
    fc = f"{net.prefix}dense0_"
    assert _reads(nodes, fc + "fwd")[1] == f"{fc}weight_amp_cast_{target}"
    assert [n["name"] for n in nodes if n["op"] == "amp_cast" and "float32" in n["name"]] == [
        fc + "fwd_output_amp_cast_float32"]


def _bound_dtypes(sym, **kwargs):
    """{argument: dtype name} of ``sym`` converted to bfloat16 with cast_optional_params."""
    conv = amp.convert_symbol(sym, target_dtype="bfloat16", cast_optional_params=True, **kwargs)
    exe = conv.simple_bind(mx.cpu(), **{n: (1, 2) for n in conv.list_arguments()})
    return {n: np.dtype(a.dtype).name for n, a in zip(conv.list_arguments(), exe.arg_arrays)}


def test_cast_optional_params_infer_unknown_inputs_from_casts():
    """MXNet 1.9.1's results (its AMPInferUnknown pass): inputs whose type the data do not
    decide take the dtype of the amp_cast reading them, or bfloat16 when an amp_multicast
    reads only variables; conflicting casts leave float32. __dtype__ attributes do not count."""
    bf16 = amp.bfloat16
    data = mx.sym.var("data")
    to_bf16, to_fp32 = (mx.sym.amp_cast(data, dtype=t) for t in (bf16, "float32"))
    assert _bound_dtypes(mx.sym.Group([to_bf16, to_bf16]), data_names=[]) == {"data": "bfloat16"}
    assert _bound_dtypes(mx.sym.Group([to_bf16, to_fp32]), data_names=[]) == {"data": "float32"}
    a, b = mx.sym.var("a", dtype="float32"), mx.sym.var("b", dtype=bf16)
    both = {"a": "bfloat16", "b": "bfloat16"}
    assert _bound_dtypes(mx.sym.amp_multicast(a, b, num_outputs=2)) == both
    group = mx.sym.Group([mx.sym.amp_multicast(a, b, num_outputs=2), mx.sym.amp_cast(a, dtype=bf16)])
    assert _bound_dtypes(group, target_dtype_ops=[], fp32_ops=[]) == both
    c = mx.sym.var("c")                          # no __dtype__: a data input, float32
    assert _bound_dtypes(mx.sym.amp_multicast(a, b, c, num_outputs=3), target_dtype_ops=[],
                         fp32_ops=[]) == {**both, "c": "float32"}
    nested = mx.sym.amp_multicast(a, mx.sym.elemwise_add(b, mx.sym.var("d", dtype=bf16)),
                                  num_outputs=2)
    assert _bound_dtypes(nested, target_dtype_ops=[], fp32_ops=[]) == \
        {"a": "float32", "b": "bfloat16", "d": "bfloat16"}


def test_convert_hybrid_block_needs_a_run_block():
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Dense(3))
    with pytest.raises(RuntimeError, match="call block.hybridize\\(\\) and run a forward pass"):
        amp.convert_hybrid_block(net)


def test_convert_bucketing_module():
    def sym_gen(n):
        data = mx.sym.var("data")
        fc = mx.sym.FullyConnected(mx.sym.reshape(data, shape=(-1, n)), num_hidden=3, name="fc")
        return mx.sym.softmax(fc, name="sm"), ("data",), None
    mod = mx.mod.BucketingModule(sym_gen, default_bucket_key=4)
    mod.bind(data_shapes=[("data", (2, 4))], for_training=False)
    mod.init_params(mx.init.Uniform(0.5))
    batch = mx.io.DataBatch([mx.nd.random.uniform(shape=(2, 4))], bucket_key=4,
                            provide_data=[mx.io.DataDesc("data", (2, 4))])
    mod.forward(batch, is_train=False)
    want = mod.get_outputs()[0].asnumpy()
    conv = amp.convert_bucketing_module(mod)
    assert "fc_weight_amp_cast_float16" in conv._buckets[4].symbol.tojson(remove_amp_cast=False)
    conv.bind(data_shapes=[("data", (2, 4))], for_training=False)
    conv.forward(batch, is_train=False)
    np.testing.assert_allclose(conv.get_outputs()[0].asnumpy(), want, rtol=5e-3, atol=1e-3)


def _params(*grads):
    """Real Parameters whose gradients hold ``grads``."""
    out = []
    for i, g in enumerate(grads):
        p = gluon.Parameter(f"w{i}", shape=(len(g),), dtype="float16")
        p.initialize()
        p.grad()[:] = mx.nd.array(g, dtype="float16")
        out.append(p)
    return out


def test_loss_scaler_shrinks_on_overflow_and_grows_after_a_clean_run():
    scaler = amp.LossScaler()
    assert scaler.loss_scale == 2.0 ** 16
    finite = _params([1, 2, 3])
    inf = _params([1, np.inf], [1, 2, 3])
    assert scaler.has_overflow(inf) is True
    assert scaler.has_overflow(finite) is False and scaler.loss_scale == 2.0 ** 15
    small = amp.LossScaler(init_scale=4.0, max_loss_scale=8.0, scale_seq_len=3)
    for _ in range(3):
        small.has_overflow(finite)
    assert small.loss_scale == 4.0
    small.has_overflow(finite)
    assert small.loss_scale == 8.0
    for _ in range(4):
        small.has_overflow(finite)
    assert small.loss_scale == 8.0               # capped at max_loss_scale


def test_init_trainer_and_scale_loss_need_init_and_a_trainer():
    net = gluon.nn.Dense(2)
    net.initialize()
    trainer = gluon.Trainer(net.collect_params(), "sgd")
    with pytest.raises(MXNetError, match="the trainer has no loss scaler; call "
                                         "amp.init_trainer"):
        with amp.scale_loss(mx.nd.ones(1), trainer):
            pass


def test_float16_training_with_loss_scaling_reaches_float32_accuracy():
    out = subprocess.run([sys.executable, str(HERE / "amp_train_digits.py"), "float16"],
                         capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    acc32, acc16, dtype, scale, kept = out.stdout.split()
    assert float(acc32) > 0.9 and float(acc16) >= float(acc32) - 0.03
    assert dtype == "float16"                    # the network really computed in float16
    assert float(scale) < 2 ** 16                # overflows were caught and the scale shrank
    assert kept == "True"                        # a step with an inf gradient changed nothing


def test_amp_initialized_flag_follows_init():
    """MXNet's module flag ``amp._amp_initialized`` (GluonNLP reads it), in a child process."""
    code = ("from mxnext.contrib.amp import amp; before = amp._amp_initialized; amp.init(); "
            "print(before, amp._amp_initialized)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr
