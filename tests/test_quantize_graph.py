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


def _same_graph(got, want):
    g_nodes, g_heads, g_ranges = _graph(got)
    w_nodes, w_heads, w_ranges = _graph(want)
    assert g_nodes == w_nodes
    assert g_heads == w_heads
    assert g_ranges.keys() == w_ranges.keys()
    for name, r in w_ranges.items():
        np.testing.assert_allclose(g_ranges[name], r, rtol=1e-6, err_msg=name)


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
    _same_graph(qsym.tojson(), want["qsym"])
    assert aux == {}
    assert sorted(qargs) == sorted(ref["qargs"])
    for name, (dtype, value) in ref["qargs"].items():
        assert qargs[name].dtype == np.dtype(dtype), name
        np.testing.assert_array_equal(qargs[name].asnumpy(), np.array(value, dtype), name)


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
