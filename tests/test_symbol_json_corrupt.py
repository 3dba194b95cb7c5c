"""Corrupted ``-symbol.json`` files: every failure is an MXNetError naming the file, and the
node where the file has one; what loads is a usable graph."""

import json
import pathlib
import random
import re

import pytest

import mxnext as mx
from mxnext.base import MXNetError

LENET = pathlib.Path(__file__).parent / "fixtures" / "mxnet-1.9.1" / "lenet-symbol.json"
BAD_VALUES = [None, 1, -1, 1.5, True, "x", "null", [], {}, [1], {"a": 1}]
BAD_ENTRIES = [[99, 0, 0], [-1, 0, 0], [0, 5, 0], [0, -1, 0], [0], ["0", 0, 0], [0, 0, 0, 0],
               [0.5, 0, 0], [True, 0, 0], [0, None, 0], [0, 0, "v"], [18, 1, 0]]


def _edited(src, edit):
    doc = json.loads(src)
    edit(doc)
    return json.dumps(doc, indent=2).encode()


def _set(*path, value):
    def edit(doc):
        for key in path[:-1]:
            doc = doc[key]
        doc[path[-1]] = value
    return edit


def _drop(*path):
    def edit(doc):
        for key in path[:-1]:
            doc = doc[key]
        doc.pop(path[-1], None)
    return edit


def corruptions(src: bytes):
    """(label, bytes) of many corruptions of the symbol JSON ``src``."""
    rnd = random.Random(31)
    n = len(src)
    for k in range(1, 40):
        yield f"truncated at {n * k // 40}", src[:n * k // 40]
    for k in range(80):
        pos, byte = rnd.randrange(n), rnd.choice(b'{}[]",:0123456789-ex \n\\')
        yield f"byte {pos} -> {chr(byte)!r}", src[:pos] + bytes([byte]) + src[pos + 1:]
    for bad in (b"\xff", b"\xc3\x28", b"\xe2\x82", b"\x80", b"\xf0\x9f\x98") * 4:
        pos = rnd.randrange(n)
        yield f"{bad!r} at {pos}", src[:pos] + bad + src[pos:]
    edits = []
    for i in (0, 1, 3, 20):
        for key in ("op", "name", "attrs", "inputs", "control_deps", "param", "attr"):
            edits += [(f"nodes[{i}].{key}={v!r}", _set("nodes", i, key, value=v))
                      for v in BAD_VALUES]
            edits.append((f"nodes[{i}] without {key}", _drop("nodes", i, key)))
        edits.append((f"nodes[{i}]=None", _set("nodes", i, value=None)))
    for v in BAD_VALUES + BAD_ENTRIES:
        edits.append((f"nodes[3].inputs[0]={v!r}", _set("nodes", 3, "inputs", 0, value=v)))
        edits.append((f"heads[0]={v!r}", _set("heads", 0, value=v)))
    for key in ("nodes", "heads", "arg_nodes", "attrs"):
        edits += [(f"{key}={v!r}", _set(key, value=v)) for v in BAD_VALUES + [[99], [3]]]
        edits.append((f"without {key}", _drop(key)))
    for v in BAD_VALUES + [["int"], ["int", "x"], ["float", 10901]]:
        edits.append((f"mxnet_version={v!r}", _set("attrs", "mxnet_version", value=v)))
    for v in BAD_VALUES + ["(5,", "(x, 5)", "()", "(0, 5)"]:
        edits.append((f"conv1 kernel={v!r}", _set("nodes", 3, "attrs", "kernel", value=v)))
    for key, v in [("__shape__", "(x, 5)"), ("__shape__", "(5,"), ("__dtype__", "x"),
                   ("__dtype__", "99"), ("__shape__", 5)]:
        edits.append((f"data {key}={v!r}", _set("nodes", 0, "attrs", value={key: v})))
    for label, edit in edits:
        yield label, _edited(src, edit)


def _use(sym):
    sym.list_arguments()
    sym.list_auxiliary_states()
    sym.infer_shape(data=(1, 1, 28, 28))
    sym.infer_type(data="float32")
    sym.attr_dict()
    mx.sym.load_json(sym.tojson())


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_every_corruption_of_a_saved_lenet_fails_as_an_mxnet_error_naming_the_file(tmp_path):
    path = tmp_path / "lenet-symbol.json"
    escaped, unnamed, count = [], [], 0
    for label, data in corruptions(LENET.read_bytes()):
        count += 1
        path.write_bytes(data)
        try:
            sym = mx.sym.load(str(path))
        except MXNetError as exc:
            if not str(exc).startswith(f"{path}: "):
                unnamed.append(f"{label}: {exc}")
            continue
        except Exception as exc:        # noqa: BLE001 (what the test looks for)
            escaped.append(f"{label}: load: {type(exc).__name__}: {exc}")
            continue
        try:
            _use(sym)
        except MXNetError:
            pass
        except Exception as exc:        # noqa: BLE001
            escaped.append(f"{label}: use: {type(exc).__name__}: {exc}")
    assert count > 400
    assert not escaped, "\n".join(escaped)
    assert not unnamed, "\n".join(unnamed)


def _lenet_with(edit):
    return _edited(LENET.read_bytes(), edit).decode()


@pytest.mark.parametrize("edit, message", [
    (_set("nodes", 3, "name", value=None),
     "node #3: 'name' must be a string, got NoneType None"),
    (_set("nodes", 4, "inputs", 0, value=[3, 2, 0]),
     "node 'activation0' (#4): inputs: entry [3, 2, 0] reads output 2 of node 'conv1' (#3), "
     "which has 1 output"),
    (_set("nodes", 4, "inputs", 0, value=[30, 0, 0]),
     "node 'activation0' (#4): inputs refers to node 30, but there are 21 nodes"),
    (_set("nodes", 3, "attrs", "num_filter", value=6),
     "node 'conv1' (#3): attrs['num_filter'] must be a string, got int 6"),
    (_drop("nodes", 4, "inputs"), "node 'activation0' (#4) has no 'inputs'"),
    (_set("nodes", 4, "inputs", value=[]),
     "node 'activation0' (#4) (Activation) has 0 inputs; Activation takes 1"),
    (_set("nodes", 0, "attrs", value={"__shape__": "(x, 5)"}),
     "node 'data' (#0): variable 'data': attribute __shape__='(x, 5)' is not a shape"),
    (_set("nodes", 3, "op", value=["Convolution"]),
     "node 'conv1' (#3): 'op' must be a string, got list ['Convolution']"),
    (_set("attrs", "mxnet_version", value=["int", "10901"]),
     "the graph's 'mxnet_version' must be [\"int\", <integer>], got list ['int', '10901']"),
])
def test_a_malformed_node_is_named_by_number_and_name(edit, message, tmp_path):
    text = _lenet_with(edit)
    with pytest.raises(MXNetError, match=f"^symbol JSON: {re.escape(message)}"):
        mx.sym.load_json(text)
    path = tmp_path / "bad-symbol.json"
    path.write_text(text)
    with pytest.raises(MXNetError, match=f"^{re.escape(str(path))}: symbol JSON: "
                                         f"{re.escape(message)}"):
        mx.sym.load(path)


def test_invalid_utf8_names_the_file_and_the_byte(tmp_path):
    path = tmp_path / "bad-symbol.json"
    path.write_bytes(LENET.read_bytes()[:100] + b"\xff" + LENET.read_bytes()[100:])
    with pytest.raises(MXNetError, match=rf"^{re.escape(str(path))}: not MXNet symbol JSON: "
                                         r"byte 100 is not UTF-8"):
        mx.sym.load(str(path))


def test_a_variable_named_null_keeps_its_name():
    sym = mx.sym.load_json(_lenet_with(_set("nodes", 0, "name", value="null")))
    assert sym.list_arguments()[0] == "null"
    assert sym.get_internals().list_outputs()[0] == "null"


def test_checkpoint_and_symbol_block_loads_name_the_file(tmp_path):
    prefix = str(tmp_path / "net")
    pathlib.Path(f"{prefix}-symbol.json").write_text(
        _lenet_with(_set("heads", 0, value=[20, 1, 0])))
    message = (rf"^{re.escape(prefix)}-symbol\.json: symbol JSON: heads: entry \[20, 1, 0\] "
               rf"reads output 1 of node 'softmax' \(#20\), which has 1 output$")
    with pytest.raises(MXNetError, match=message):
        mx.model.load_checkpoint(prefix, 0)
    with pytest.raises(MXNetError, match=message):
        mx.gluon.SymbolBlock.imports(f"{prefix}-symbol.json", ["data"])
