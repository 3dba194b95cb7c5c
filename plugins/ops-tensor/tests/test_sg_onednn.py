"""MXNet 1.9.1's fused oneDNN files (``_sg_mkldnn_conv``, ``_sg_mkldnn_fully_connected``)
load and give MXNet's results: fixtures/sg_onednn, written by make_sg_onednn_ref.py."""

import json
import os

import mxnext as mx
import numpy as np
import pytest

HERE = os.path.join(os.path.dirname(__file__), "fixtures", "sg_onednn")
REF = np.load(os.path.join(HERE, "ref.npz"))
QUANTIZED = ("auto", "int8", "int8-uncalibrated", "grouped-auto", "acts-auto")


def prefix(name):
    return os.path.join(HERE, name)


def module_output(name, context=None):
    sym, args, auxs = mx.model.load_checkpoint(prefix(name), 0)
    mod = mx.mod.Module(sym, label_names=None, context=context or mx.cpu())
    mod.bind(data_shapes=[("data", REF["data"].shape)], for_training=False)
    mod.set_params(args, auxs)
    mod.forward(mx.io.DataBatch([mx.nd.array(REF["data"])]), is_train=False)
    return mod.get_outputs()[0].asnumpy()


def test_int8_file_runs_on_another_device(monkeypatch):
    """The kernels are numpy's: a device's arrays go to the host and back (testdev, the
    numpy-backed second device type, refuses host arrays written into its own)."""
    pytest.importorskip("mxnext_device_testdev")
    monkeypatch.setenv("MXNEXT_ONEDNN_ISA", "avx2")
    np.testing.assert_array_equal(module_output("auto", mx.Context("testdev", 0)), REF["auto"])


@pytest.mark.parametrize("name", QUANTIZED)
def test_int8_files_match_mxnet_bit_for_bit_as_avx2(name, monkeypatch):
    # the fixture's machine had AVX2 and no VNNI: its int8 sums are reproduced exactly
    monkeypatch.setenv("MXNEXT_ONEDNN_ISA", "avx2")
    np.testing.assert_array_equal(module_output(name), REF[name])


@pytest.mark.parametrize("name", QUANTIZED)
def test_int8_files_exact_sums_stay_near_mxnet(name, monkeypatch):
    # exact sums (a VNNI CPU's): quantization-level differences from the AVX2 results
    monkeypatch.delenv("MXNEXT_ONEDNN_ISA", raising=False)
    out = module_output(name)
    ref = REF[name.replace("auto", "float") if "-auto" in name else "float"]
    np.testing.assert_allclose(out, ref, atol=0.35 * np.abs(ref).max())
    assert not np.array_equal(out, REF[name]) or name == "int8-uncalibrated"


@pytest.mark.parametrize("name", ["float", "grouped-float", "acts-float"])
def test_float_fused_file_matches_mxnet(name):
    np.testing.assert_allclose(module_output(name), REF[name], rtol=1e-5, atol=1e-5)


def test_symbolblock_imports_int8_file(monkeypatch):
    monkeypatch.setenv("MXNEXT_ONEDNN_ISA", "avx2")
    net = mx.gluon.SymbolBlock.imports(prefix("auto") + "-symbol.json", ["data"],
                                       prefix("auto") + "-0000.params")
    np.testing.assert_array_equal(net(mx.nd.array(REF["data"])).asnumpy(), REF["auto"])


def test_json_round_trip_keeps_subgraphs(monkeypatch):
    monkeypatch.setenv("MXNEXT_ONEDNN_ISA", "avx2")
    sym = mx.sym.load(prefix("auto") + "-symbol.json")
    again = mx.sym.load_json(sym.tojson())
    doc = json.loads(again.tojson())
    fused = [n for n in doc["nodes"] if n["op"].startswith("_sg_mkldnn")]
    assert len(fused) == 5 and all(len(n["subgraphs"]) == 1 for n in fused)
    assert "subgraphs" not in fused[0]["attrs"]
    _, args, auxs = mx.model.load_checkpoint(prefix("auto"), 0)
    ex = again.bind(mx.cpu(), dict(args, data=mx.nd.array(REF["data"])), aux_states=auxs)
    np.testing.assert_array_equal(ex.forward()[0].asnumpy(), REF["auto"])


def test_unsupported_fused_activation_is_named():
    with open(prefix("float") + "-symbol.json") as f:
        text = f.read().replace('"act_type": "relu"', '"act_type": "softsign"', 1)
    with pytest.raises(mx.base.MXNetError, match="_sg_mkldnn_conv.*'softsign'"):
        mx.sym.load_json(text)


def test_older_attribute_names_are_read():
    # MXNet before 1.6 wrote with_relu / with_postsum_relu
    with open(prefix("float") + "-symbol.json") as f:
        text = f.read()
    old = text.replace('"with_act"', '"with_relu"').replace('"with_postsum_act"',
                                                            '"with_postsum_relu"')
    assert old != text
    _, args, auxs = mx.model.load_checkpoint(prefix("float"), 0)
    ex = mx.sym.load_json(old).bind(mx.cpu(), dict(args, data=mx.nd.array(REF["data"])),
                                    aux_states=auxs)
    np.testing.assert_allclose(ex.forward()[0].asnumpy(), REF["float"], rtol=1e-5, atol=1e-5)
