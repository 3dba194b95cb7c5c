"""mx.contrib.quant's graph pass against MXNet 1.9.1: the symbols ``_quantize_symbol``,
``_calibrate_quantized_sym`` and ``quantize_model`` write for small graphs, node for node
(fixtures/quantize_graph/ref.json, written by make_ref.py there)."""

import json
from pathlib import Path

import numpy as np
import pytest

import mxnext as mx
from mxnext._runtime import registry

quant = mx.contrib.quant
REF = json.loads((Path(__file__).parent / "fixtures/quantize_graph/ref.json").read_text())
CALIB_KEYS = ("min_calib_range", "max_calib_range")


def _needs_quantized_ops(qjson):
    """Skip unless every quantized op MXNet used is here and declares ``FQuantizes``."""
    for node in json.loads(qjson)["nodes"]:
        op = node["op"]
        if op.startswith("_contrib_quantized_"):
            if op not in registry.names() or not registry.get(op).has_attr("FQuantizes"):
                pytest.skip(f"{op} with FQuantizes is not installed (ops-tensor's quantized ops)")


def _graph(text):
    """(nodes as (op, name, attrs without calibration ranges, inputs), heads, ranges)."""
    doc = json.loads(text)
    nodes, ranges = [], {}
    for n in doc["nodes"]:
        attrs = dict(n.get("attrs", {}))
        got = [float(attrs.pop(k)) for k in CALIB_KEYS if k in attrs]
        if got:
            ranges[n["name"]] = got
        nodes.append((n["op"], n["name"], attrs, n["inputs"]))
    return nodes, doc["heads"], ranges


def _same_graph(got, want, rtol=1e-6):
    g_nodes, g_heads, g_ranges = _graph(got)
    w_nodes, w_heads, w_ranges = _graph(want)
    assert g_nodes == w_nodes
    assert g_heads == w_heads
    assert g_ranges.keys() == w_ranges.keys()
    for name, r in w_ranges.items():
        np.testing.assert_allclose(g_ranges[name], r, rtol=rtol, err_msg=name)


@pytest.mark.parametrize("case", sorted(REF["rewrite"]))
def test_quantize_symbol_as_mxnet(case):
    ref = REF["rewrite"][case]
    _needs_quantized_ops(ref["qsym"])
    sym = mx.sym.load_json(ref["sym"])
    qsym, calib = quant._quantize_symbol(sym, mx.cpu(), **ref["kwargs"])
    _same_graph(qsym.tojson(), ref["qsym"])
    assert calib == ref["calib"]
    again = mx.sym.load_json(ref["qsym"])       # MXNet's quantized symbol loads here
    _same_graph(again.tojson(), ref["qsym"])


def test_calibrate_quantized_sym_as_mxnet():
    ref = REF["calibrate"]
    _needs_quantized_ops(ref["qsym"])
    qsym = mx.sym.load_json(ref["qsym"])
    th = {k: tuple(v) for k, v in ref["th_dict"].items()}
    got = quant._calibrate_quantized_sym(qsym, th)
    _same_graph(got.tojson(), ref["calibrated"])
    assert "min_calib_range" not in qsym.tojson()          # the input is left alone
    assert quant._calibrate_quantized_sym(qsym, {}) is qsym


def _model_params():
    ref = REF["model"]
    return {k: mx.nd.array(np.array(v, np.float32)) for k, v in ref["params"].items()}


@pytest.mark.parametrize("run", range(len(REF["model"]["runs"])))
def test_quantize_model_as_mxnet(run):
    ref = REF["model"]
    want = ref["runs"][run]
    _needs_quantized_ops(want["qsym"])
    data = np.array(ref["data"], np.float32)
    qsym, qargs, aux = quant.quantize_model(
        mx.sym.load_json(ref["sym"]), _model_params(), {}, label_names=None,
        calib_mode=want["mode"], calib_data=mx.io.NDArrayIter(data, batch_size=5),
        num_calib_examples=15, quantized_dtype=want["dtype"], quantize_mode="full")
    # entropy: MXNet's oneDNN FullyConnected sums in another order (outputs 1 ulp apart), which
    # moves a few histogram counts and the KL-optimal edge by a bin or two of 8001
    _same_graph(qsym.tojson(), want["qsym"], rtol=1e-3 if want["mode"] == "entropy" else 1e-6)
    assert aux == {}
    assert sorted(qargs) == sorted(ref["qargs"])
    for name, (dtype, value) in ref["qargs"].items():
        assert qargs[name].dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(qargs[name].asnumpy(), np.array(value, dtype), name)


def test_quantized_head_also_read_by_a_float_node_loads():
    """MXNet 1.9.1 gives this head a dequantize reading the other dequantize's missing
    outputs; here both readers share the one dequantize."""
    _needs_quantized_ops(REF["rewrite"]["branches_smart"]["qsym"])
    data = mx.sym.Variable("data")
    c1 = mx.sym.Convolution(data, kernel=(1, 1), num_filter=2, name="c1")
    c2 = mx.sym.Convolution(c1, kernel=(1, 1), num_filter=2, name="c2")
    sym = mx.sym.Group([mx.sym.Flatten(c2, name="flat"), mx.sym.sigmoid(c1, name="sig"), c2])
    qsym, _ = quant._quantize_symbol(sym, mx.cpu(), quantize_mode="smart")
    nodes, heads, _ = _graph(qsym.tojson())
    deq = [i for i, n in enumerate(nodes) if n[1] == "c2_dequantize"]
    assert len(deq) == 1 and nodes[deq[0]][3][0][0] == _index(nodes, "requantize_c2")
    assert heads[2] == [deq[0], 0, 0] and nodes[heads[0][0]][3] == [[deq[0], 0, 0]]
    mx.sym.load_json(qsym.tojson())


def _index(nodes, name):
    return next(i for i, n in enumerate(nodes) if n[1] == name)


@pytest.mark.parametrize("run", range(len(REF["model"]["runs"])))
def test_mxnet_quantized_model_runs(run):
    """MXNet's quantize_model output (its symbol JSON and int8 parameters) runs here and gives
    MXNet's outputs, except two that MXNet gets 5+ int8 steps off the float model (its
    oneDNN int8 FullyConnected saturates some sums on a CPU without VNNI); without entropy
    clipping, every output is within two steps of the float model's here."""
    ref = REF["model"]
    want = ref["runs"][run]
    _needs_quantized_ops(want["qsym"])
    data = mx.nd.array(np.array(ref["data"][:5], np.float32))
    qargs = {k: mx.nd.array(np.array(v, dtype), dtype=dtype)
             for k, (dtype, v) in ref["qargs"].items()}
    mod = mx.mod.Module(mx.sym.load_json(want["qsym"]), label_names=None)
    mod.bind(data_shapes=[("data", (5, 6))], for_training=False)
    mod.set_params(qargs, {})
    mod.forward(mx.io.DataBatch([data]), is_train=False)
    got = mod.get_outputs()[0].asnumpy()
    fp32 = mx.sym.load_json(ref["sym"]).bind(
        mx.cpu(), {"data": data, **_model_params()}).forward()[0].asnumpy()
    theirs = np.array(want["out"], np.float32)
    step = np.abs(fp32).max() / 127
    naive = np.array(ref["runs"][0]["out"], np.float32)     # no clipping: off only there
    off = np.abs(naive - fp32) > 5 * step
    assert off.sum() <= 2
    np.testing.assert_allclose(got[~off], theirs[~off], rtol=1e-6)
    if want["mode"] != "entropy":                           # entropy clips on purpose
        np.testing.assert_allclose(got, fp32, rtol=0, atol=2 * step)


def test_quantize_params_keeps_and_quantizes():
    w = mx.nd.array([[-2.0, 1.0], [0.5, 4.0]])
    qsym = mx.sym.FullyConnected(mx.sym.Variable("data"), mx.sym.Variable("fc_weight_quantize"),
                                 mx.sym.Variable("other"), num_hidden=2, name="fc")
    qsym = mx.sym.Group([qsym, mx.sym.Variable("relu_output_min"),
                         mx.sym.Variable("relu_output_max"), mx.sym.Variable("x_min")])
    got = quant._quantize_params(qsym, {"fc_weight": w, "other": w},
                                 {"relu_output": (-1.5, 2.5)})
    assert sorted(got) == ["fc_weight_quantize", "fc_weight_quantize_max",
                           "fc_weight_quantize_min", "other", "relu_output_max",
                           "relu_output_min"]
    assert got["fc_weight_quantize"].dtype == np.int8
    assert got["fc_weight_quantize"].asnumpy().tolist() == [[-64, 32], [16, 127]]
    assert got["fc_weight_quantize_max"].asnumpy().tolist() == [4.0]
    assert got["other"] is w
    assert got["relu_output_min"].asnumpy().tolist() == [-1.5]
    assert got["relu_output_max"].asnumpy().tolist() == [2.5]


def test_quantize_symbol_rejects_bad_arguments():
    sym = mx.sym.Flatten(mx.sym.Variable("data"), name="flat")
    with pytest.raises(mx.MXNetError, match="quantize_mode must be 'full' or 'smart', got 'half'"):
        quant._quantize_symbol(sym, mx.cpu(), quantize_mode="half")
    with pytest.raises(mx.MXNetError, match="quantized_dtype must be one of .* got 'int4'"):
        quant._quantize_symbol(sym, mx.cpu(), quantized_dtype="int4")
    with pytest.raises(AssertionError, match="excluded_symbols must be a list"):
        quant._quantize_symbol(sym, mx.cpu(), excluded_symbols="flat")


def _small_net():
    from mxnext import gluon
    net = gluon.nn.HybridSequential()
    net.add(gluon.nn.Conv2D(4, 3, activation="relu"), gluon.nn.MaxPool2D(),
            gluon.nn.Flatten(), gluon.nn.Dense(5))
    net.initialize(mx.init.Xavier())
    return net


def _ops(block):
    doc = json.loads(block(mx.sym.var("data")).tojson())
    return [n["op"] for n in doc["nodes"] if n["op"] != "null"]


@pytest.mark.parametrize("mode", ["none", "naive", "entropy"])
def test_quantize_net_v2(mode):
    _needs_quantized_ops(REF["calibrate"]["qsym"])
    mx.random.seed(3)
    net = _small_net()
    x = mx.nd.random.uniform(shape=(8, 3, 10, 10))
    want = net(x).asnumpy()
    loader = mx.gluon.data.DataLoader(
        mx.gluon.data.ArrayDataset(x, mx.nd.zeros((8, 1))), batch_size=4)  # labels dropped
    kw = ({"data_shapes": [mx.io.DataDesc("data", x.shape)]} if mode == "none" else
          {"calib_data": loader, "num_calib_examples": 8})
    qnet = quant.quantize_net_v2(net, quantized_dtype="int8", calib_mode=mode, **kw)
    assert isinstance(qnet, mx.gluon.SymbolBlock)
    ops = _ops(qnet)
    assert "_contrib_quantized_fully_connected" in ops and "_contrib_quantized_conv" in ops
    calibrated = "min_calib_range" in qnet(mx.sym.var("data")).tojson()
    assert calibrated == (mode != "none")
    err = np.abs(qnet(x).asnumpy() - want) / np.abs(want).max()
    assert np.quantile(err, 0.9) < 0.03
    if mode != "entropy":                   # entropy clips the widest values on purpose
        assert err.max() < 0.05


def test_quantize_net_excludes_layers_by_match():
    _needs_quantized_ops(REF["calibrate"]["qsym"])
    net = _small_net()
    with pytest.warns(UserWarning, match="please use quantize_net_v2"):
        qnet = quant.quantize_net(net, quantized_dtype="int8", exclude_layers_match=["dense"],
                                  data_shapes=[mx.io.DataDesc("data", (2, 3, 10, 10))])
    ops = _ops(qnet)
    assert "FullyConnected" in ops and "_contrib_quantized_fully_connected" not in ops
    assert "_contrib_quantized_conv" in ops
    with pytest.raises(ValueError, match="data_shapes required"):
        quant.quantize_net_v2(net)


def test_quantize_node_names_follow_the_producers_output_names():
    """``<producer>_<output name>_quantize`` where the producer's op names its outputs,
    ``<producer>_<index>_quantize`` where it does not, as MXNet 1.9.1 names them."""
    _needs_quantized_ops(REF["calibrate"]["qsym"])
    for op, ref in REF["input_names"].items():
        qsym, _ = quant._quantize_symbol(mx.sym.load_json(ref["sym"]), mx.cpu(),
                                         quantize_mode="full", excluded_operators=[op])
        got = [n[1] for n in _graph(qsym.tojson())[0] if n[0] == "_contrib_quantize_v2"]
        assert got == ref["names"], op


@pytest.fixture
def float_output_mul():
    """_contrib_quantized_elemwise_mul made to declare its output float (as MXNet's quantized
    RNN does, FAvoidDequantizeOutput) for one test."""
    _needs_quantized_ops(REF["calibrate"]["qsym"])
    op = registry.get("_contrib_quantized_elemwise_mul")
    if not op.has_attr("FQuantizes") or op.has_attr("FAvoidDequantizeOutput"):
        pytest.skip("needs a quantized elemwise_mul without FAvoidDequantizeOutput")
    op.set_attr("FAvoidDequantizeOutput", lambda attrs, index: True, provider="test")
    yield
    del op.attrs["FAvoidDequantizeOutput"], op._values["FAvoidDequantizeOutput"]


def test_float_output_is_neither_dequantized_nor_reused_quantized(float_output_mul):
    data = mx.sym.Variable("data")
    mul = mx.sym.elemwise_mul(data, data, name="mul")
    sym = mx.sym.Group([mx.sym.sigmoid(mul, name="sig"), mx.sym.Flatten(mul, name="flat"), mul])
    qsym, _ = quant._quantize_symbol(sym, mx.cpu(), quantize_mode="full")
    nodes, heads, _ = _graph(qsym.tojson())
    ops = {n[1]: n for n in nodes}
    assert "mul_dequantize" not in ops
    out = _index(nodes, "requantize_mul")                    # its int32 sums still requantized
    assert ops["sig"][3] == [[out, 0, 0]]                    # read as it is
    assert heads[2] == [out, 0, 0]
    again = ops["mul_0_quantize"]                            # quantized again for flat
    assert again[0] == "_contrib_quantize_v2" and again[3] == [[out, 0, 0]]
    m = _index(nodes, "mul_0_quantize")
    assert ops["quantized_flat"][3] == [[m, 0, 0], [m, 1, 0], [m, 2, 0]]


def test_lstm_stays_float_without_quantize_asym(monkeypatch):
    """With no plugin providing _contrib_quantize_asym, a node whose quantized op needs it
    stays float."""
    if "_contrib_quantized_rnn" not in registry.names():
        pytest.skip("needs _contrib_quantized_rnn (ops-tensor)")
    names = registry.names
    monkeypatch.setattr(registry, "names",
                        lambda: [n for n in names() if n != "_contrib_quantize_asym"])
    qsym, calib = quant._quantize_symbol(_lstm(), mx.cpu(), quantize_mode="full")
    assert [n[0] for n in _graph(qsym.tojson())[0] if n[0] != "null"] == ["RNN"]
    assert calib == []


def _lstm(fc=False):
    return mx.sym.load_json(REF["lstm"]["fc"]["sym"] if fc else
                            REF["rewrite"]["lstm_full"]["sym"])


def test_lstm_read_by_quantized_fc():
    """As MXNet's graph, but the FC reads rnn_output_quantize's range from its outputs 1 and 2
    (MXNet wires outputs -1 and 0 there: its symbol does not bind)."""
    ref = REF["lstm"]["fc"]
    _needs_quantized_ops(ref["qsym"])
    qsym, calib = quant._quantize_symbol(_lstm(fc=True), mx.cpu(), **ref["kwargs"])
    got, want = json.loads(qsym.tojson()), json.loads(ref["qsym"])
    fc = _index(_graph(ref["qsym"])[0], "quantized_fc")
    q = _index(_graph(ref["qsym"])[0], "rnn_output_quantize")
    assert want["nodes"][fc]["inputs"][3:5] == [[q, 2 ** 32 - 1, 0], [q, 0, 0]]
    want["nodes"][fc]["inputs"][3:5] = [[q, 1, 0], [q, 2, 0]]
    _same_graph(qsym.tojson(), json.dumps(want))
    assert calib == ref["calib"]


def _lstm_model(fc):
    ref = REF["lstm"]
    params = {k: mx.nd.array(np.array(v, np.float32)) for k, v in ref["params"].items()
              if fc or not k.startswith("fc")}
    data = np.array(ref["data"], np.float32)
    sym = _lstm(fc)
    got = quant.quantize_model(sym, params, {}, label_names=None, calib_mode="naive",
                               calib_data=mx.io.NDArrayIter(data, batch_size=3),
                               quantized_dtype="auto", quantize_mode="full")
    return sym, params, data, got


@pytest.mark.parametrize("fc", [False, True])
def test_quantized_lstm_model(fc):
    """quantize_model of an LSTM (alone: MXNet's symbol, calibrated quantize_asym and all)
    runs and stays within a uint8 step or two of the float model."""
    ref = REF["lstm"]
    _needs_quantized_ops(ref["qsym"])
    sym, params, data, (qsym, qargs, aux) = _lstm_model(fc)
    if not fc:
        _same_graph(qsym.tojson(), ref["qsym"])
        assert sorted(qargs) == ref["qargs"] and aux == {}
    mod = mx.mod.Module(qsym, label_names=None)
    mod.bind(data_shapes=[("data", (3, 2, 4))], for_training=False)
    mod.set_params(qargs, {})
    x = mx.nd.array(data[:3])
    mod.forward(mx.io.DataBatch([x]), is_train=False)
    got = mod.get_outputs()[0].asnumpy()
    want = sym.bind(mx.cpu(), {"data": x, **params}).forward()[0].asnumpy()
    step = (data.max() - data.min()) / 255                  # the LSTM's uint8 step
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=0, atol=(2 if fc else 1) * step)
