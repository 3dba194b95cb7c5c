"""mx.sym against MXNet 1.9.1 itself: the symbols of tests/fixtures/mxnet-1.9.1/symbol_nets.py
built here must give the answers MXNet gave for them (symbols-mxnet191.json, written by
make_symbols.py under MXNet 1.9.1) and, where the ops are registered alike, the same JSON
text; MXNet-written files (1.9.1, 1.2.0 and the 0.8 format) must load into the same graphs."""

import importlib.util
import json
import warnings
from pathlib import Path

import pytest

import mxnext as mx

FIX = Path(__file__).parent / "fixtures" / "mxnet-1.9.1"
_spec = importlib.util.spec_from_file_location("symbol_nets", FIX / "symbol_nets.py")
nets = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nets)
MXNET = json.loads((FIX / "symbols-mxnet191.json").read_text())


def _facts(sym, shapes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)    # infer_shape's "cannot decide" note
        return nets.facts(mx, sym, shapes)


def _without_init_hints(attrs):
    """MXNet's BatchNorm gives its moving statistics ``__init__`` hints on composition
    (FSetInputVarAttrOnCompose); ops-nn does not register that rule yet."""
    return {node: {k: v for k, v in d.items() if k != "__init__"} for node, d in attrs.items()
            if {k for k in d if k != "__init__"}}


@pytest.mark.parametrize("name", list(nets.SHAPES))
def test_symbols_answer_as_mxnet_does(name):
    sym = nets.build(mx, name)
    want = dict(MXNET["nets"][name])
    text = want.pop("json")
    got = _facts(sym, nets.SHAPES[name])
    if name == "batchnorm":
        got["attrs"] = _without_init_hints(got["attrs"])
        want["attrs"] = _without_init_hints(want["attrs"])
    assert got == want
    if name in nets.SAME_TEXT:
        assert sym.tojson() == text


@pytest.mark.parametrize("name", list(nets.SHAPES))
def test_json_mxnet_wrote_loads_into_the_same_symbol(name):
    want = dict(MXNET["nets"][name])
    loaded = mx.sym.load_json(want.pop("json"))
    got = _facts(loaded, nets.SHAPES[name])
    if name == "batchnorm":
        got["attrs"] = _without_init_hints(got["attrs"])
        want["attrs"] = _without_init_hints(want["attrs"])
    assert got == want


@pytest.mark.parametrize("fname, shapes", [("save_000800.json", {"data": (2, 10)}),
                                           ("model1-mxnet120-symbol.json",
                                            {"data": (1, 3, 32, 32)})])
def test_older_files_are_upgraded_as_mxnet_does(fname, shapes):
    want = dict(MXNET["files"][fname])
    resaved = json.loads(want.pop("json"))
    sym = mx.sym.load(str(FIX / fname))
    got = _facts(sym, shapes)
    got["attrs"] = _without_init_hints(got["attrs"])
    want["attrs"] = _without_init_hints(want["attrs"])
    assert got == want
    ours = json.loads(sym.tojson())
    for doc in (ours, resaved):
        doc.pop("node_row_ptr")         # MXNet's oneDNN Pooling has a hidden second output
        for node in doc["nodes"]:
            node.get("attrs", {}).pop("__init__", None)
            if not node.get("attrs", True):
                del node["attrs"]
    assert ours == resaved


def test_a_file_mxnet_wrote_is_written_back_byte_for_byte():
    text = (FIX / "mlp-symbol.json").read_text()
    sym = mx.sym.load(str(FIX / "mlp-symbol.json"))
    assert sym.tojson() == text
    assert sym.list_arguments() == ["data", "fc1_weight", "fc1_bias", "fc2_weight", "fc2_bias",
                                    "fc3_weight", "fc3_bias", "softmax_label"]
    arg, out, aux = sym.infer_shape(data=(4, 20))
    assert arg[1] == (64, 20) and out == [(4, 10)] and aux == []


def test_lenet_file_loads_and_infers():
    sym = mx.sym.load(str(FIX / "lenet-symbol.json"))
    assert sym.list_outputs() == ["softmax_output"]
    assert [n for n in sym.list_arguments() if n.startswith("conv")] == [
        "conv1_weight", "conv1_bias", "conv2_weight", "conv2_bias"]
    arg, out, _ = sym.infer_shape(data=(2, 1, 28, 28))
    assert dict(zip(sym.list_arguments(), arg))["fc1_weight"] == (32, 256)
    assert out == [(2, 10)]
    assert sym.get_internals()["pooling1_output"].infer_shape(data=(2, 1, 28, 28))[1] == [
        (2, 16, 4, 4)]
