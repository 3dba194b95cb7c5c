"""Symbol JSON: files, round trips, control dependencies, np_shape, the upgrades of older
MXNet files, and malformed input (MXNet's own files: test_symbol_mxnet.py)."""

import json
import re

import pytest

import mxnext as mx
from mxnext.base import MXNetError, OpNotFound, ParamError
from mxnext.graph import Node, NodeEntry


def _net():
    data = mx.sym.var("data", shape=(4, 5))
    fc = mx.sym.FullyConnected(data, num_hidden=3, name="fc", lr_mult=2)
    return mx.sym.Group([mx.sym.BatchNorm(fc, name="bn"), fc])


def _doc(nodes, heads, version=None, **extra):
    doc = {"nodes": nodes, "arg_nodes": [i for i, n in enumerate(nodes) if n["op"] == "null"],
           "heads": heads, **extra}
    if version is not None:
        doc["attrs"] = {"mxnet_version": ["int", version]}
    return json.dumps(doc)


def test_save_and_load_round_trip(tmp_path):
    net = _net()
    path = tmp_path / "net-symbol.json"
    net.save(str(path))
    assert path.read_text() == net.tojson()
    for loaded in (mx.sym.load(str(path)), mx.sym.load(path), mx.sym.load_json(net.tojson()),
                   mx.sym.fromjson(net.tojson())):
        assert loaded.tojson() == net.tojson()
        assert loaded.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
        assert loaded.infer_shape()[1] == [(4, 3), (4, 3)]
        assert loaded.attr_dict() == net.attr_dict()
    with pytest.raises(TypeError, match="fname must be a path"):
        net.save(3)
    with pytest.raises(TypeError, match="JSON string"):
        mx.sym.load_json(b"{}")


def test_control_dependencies_are_written_and_read():
    a = Node(None, None, (), "a")
    first = Node(mx.ops.get("relu"), None, [NodeEntry(a, 0, 0)], "first")
    second = Node(mx.ops.get("sigmoid"), None, [NodeEntry(a, 0, 0)], "second")
    second.control_deps.append(first)
    sym = mx.sym.Symbol([NodeEntry(second, 0, 0)])
    doc = json.loads(sym.tojson())
    assert [n["name"] for n in doc["nodes"]] == ["a", "first", "second"]
    assert doc["nodes"][2]["control_deps"] == [1]
    loaded = mx.sym.load_json(sym.tojson())
    assert [d.name for d in loaded._outputs[0].node.control_deps] == ["first"]
    assert loaded.tojson() == sym.tojson()


def test_np_shape_files():
    x = mx.sym.Group([mx.sym.var("x", shape=(0, 3)), mx.sym.var("z", shape=())])
    legacy = x.tojson()
    with mx.np_shape(True):
        text = x.tojson()
        assert text.endswith('"attrs": {\n    "is_np_shape": ["int", 1], \n    '
                             '"mxnet_version": ["int", 10901]\n  }\n}')
        assert mx.sym.load_json(text).attr_dict() == x.attr_dict()
        # a legacy file read under np_shape: 0 dims are unknown (-1), () is no shape
        assert mx.sym.load_json(legacy).attr_dict() == {"x": {"__shape__": "[-1,3]"},
                                                        "z": {"__shape__": "None"}}
        assert mx.sym.load_json(legacy).infer_shape_partial()[0] == [(-1, 3), None]


def test_old_node_layout_and_upgrades():
    """MXNet 0.8-style nodes: ``param`` and ``attr`` instead of ``attrs``, two-number
    entries, hidden keys without underscores, and argmax's old axis=-1."""
    nodes = [
        {"op": "null", "param": {}, "name": "x", "inputs": [], "backward_source_id": -1,
         "attr": {"ctx_group": "g1", "lr_mult": "0.5"}},
        {"op": "null", "name": "fc_weight", "inputs": [], "attr": {"weight_lr_mult": "3"}},
        {"op": "FullyConnected", "param": {"num_hidden": "4", "no_bias": "True"},
         "name": "fc", "inputs": [[0, 0], [1, 0]],
         "attr": {"weight_lr_mult": "1.5", "wd_mult": "0.1", "num_hidden": "5"}},
        {"op": "argmax", "param": {"axis": "-1"}, "name": "am", "inputs": [[2, 0]]}]
    sym = mx.sym.load_json(_doc(nodes, [[3, 0]]))
    attrs = sym.attr_dict()
    assert attrs["x"] == {"__ctx_group__": "g1", "ctx_group": "g1", "__lr_mult__": "0.5",
                          "lr_mult": "0.5"}
    # an op's weight_lr_mult goes to its weight variable (a variable's own stays as it is)
    assert attrs["fc_weight"] == {"weight_lr_mult": "3", "__lr_mult__": "1.5",
                                  "lr_mult": "1.5"}
    assert attrs["fc"] == {"num_hidden": "5", "no_bias": "True", "__wd_mult__": "0.1",
                           "wd_mult": "0.1"}                   # attr wins over param
    assert "am" not in attrs                                   # axis=-1 meant "no axis"
    assert sym.infer_shape(x=(2, 6))[1] == [(1,)]              # over all axes, not the last
    current = mx.sym.load_json(_doc([nodes[0], {"op": "argmax", "name": "am",
                                                "attrs": {"axis": "-1"}, "inputs": [[0, 0, 0]]}],
                                    [[1, 0, 0]], version=10901))
    assert current.attr_dict() == {"x": {"ctx_group": "g1", "lr_mult": "0.5"},
                                   "am": {"axis": "-1"}}       # current files: no upgrade


def test_version_0_8_files_get_their_auxiliary_states():
    nodes = [{"op": "null", "name": "data", "inputs": []},
             {"op": "null", "name": "g", "inputs": []},
             {"op": "null", "name": "b", "inputs": []},
             {"op": "BatchNorm", "name": "bn", "param": {"eps": "0.001"},
              "attr": {"ctx_group": "s"}, "inputs": [[0, 0], [1, 0], [2, 0]]}]
    sym = mx.sym.load_json(_doc(nodes, [[3, 0]]))
    assert sym.list_auxiliary_states() == ["bn_moving_mean", "bn_moving_var"]
    assert sym.attr_dict()["bn_moving_var"] == {"eps": "0.001", "__ctx_group__": "s",
                                                "ctx_group": "s", "__init__": '["one", {}]'}
    assert json.loads(sym.tojson())["nodes"][-1]["inputs"][3:] == [[3, 0, 0], [4, 0, 0]]


def test_amp_casts_are_left_out_of_saved_json():
    x, y = mx.sym.var("x"), mx.sym.var("y")
    cast = mx.sym.amp_cast(x, dtype="float16", name="c")
    multi = mx.sym.amp_multicast(cast, y, num_outputs=2, name="m")
    net = mx.sym.elemwise_add(multi[0], multi[1], name="add")
    kept = [n["op"] for n in json.loads(net.tojson(remove_amp_cast=False))["nodes"]]
    assert kept == ["null", "amp_cast", "null", "amp_multicast", "elemwise_add"]
    doc = json.loads(net.tojson())
    assert [n["name"] for n in doc["nodes"]] == ["x", "y", "add"]
    assert doc["nodes"][2]["inputs"] == [[0, 0, 0], [1, 0, 0]]
    assert net.list_arguments() == ["x", "y"] and len(json.loads(net.tojson(False))["nodes"]) == 5


@pytest.mark.parametrize("text, error, message", [
    ("not json", MXNetError, "not MXNet symbol JSON"),
    ('{"nodes": []}', MXNetError, "not MXNet symbol JSON"),
    (_doc([{"op": "NoSuchOp", "name": "n", "inputs": []}], [[0, 0, 0]]), OpNotFound,
     "Failed loading node 'n' of type 'NoSuchOp'"),
    (_doc([{"op": "null", "name": "x", "inputs": []}], [[3, 0, 0]]), MXNetError,
     "heads refers to node 3"),
    (_doc([{"op": "null", "name": "x", "inputs": []}], [[0]]), MXNetError,
     "not \\[node, index, version\\]"),
    (_doc([{"op": "null", "name": "x", "inputs": []},
           {"op": "relu", "name": "r", "inputs": [[0, 0, 0]], "subgraphs": [{}]}], [[1, 0, 0]]),
     MXNetError, "subgraphs"),
    (json.dumps({"nodes": [{"op": "null", "name": "x", "inputs": []},
                           {"op": "relu", "name": "r", "inputs": [[0, 0, 0]]}],
                 "arg_nodes": [1], "heads": [[1, 0, 0]]}), MXNetError, "not a variable"),
    (_doc([{"op": "null", "name": "x", "inputs": []},
           {"op": "Activation", "name": "r", "attrs": {"act_type": "relu", "mood": "x"},
            "inputs": [[0, 0, 0]]}], [[1, 0, 0]], version=10901), ParamError,
     "node 'r'.*unknown parameter 'mood'"),
])
def test_malformed_json(text, error, message):
    with pytest.raises(error, match=message):
        mx.sym.load_json(text)


# Hand-written cycles: "a" reads "b", which is written after it and reads "a"; and a node that
# is its own input. Loaded as they were, both inferred shapes and failed only at bind.
LOOP = _doc([{"op": "null", "name": "data", "inputs": []},
             {"op": "relu", "name": "a", "inputs": [[2, 0, 0]]},
             {"op": "elemwise_add", "name": "b", "inputs": [[0, 0, 0], [1, 0, 0]]}],
            [[2, 0, 0]], version=10901)
SELF_LOOP = _doc([{"op": "null", "name": "data", "inputs": []},
                  {"op": "elemwise_add", "name": "s", "inputs": [[0, 0, 0], [1, 0, 0]]}],
                 [[1, 0, 0]], version=10901)
CONTROL_LOOP = _doc([{"op": "null", "name": "data", "inputs": []},
                     {"op": "relu", "name": "r", "inputs": [[0, 0, 0]], "control_deps": [2]},
                     {"op": "relu", "name": "q", "inputs": [[1, 0, 0]]}],
                    [[2, 0, 0]], version=10901)


@pytest.mark.parametrize("text, message", [
    (LOOP, "node 'a' (#1) depends on itself: 'a' reads 'b' reads 'a'"),
    (SELF_LOOP, "node 's' (#1) depends on itself: 's' reads 's'"),
    (CONTROL_LOOP, "node 'r' (#1) depends on itself: 'r' reads 'q' reads 'r'"),
])
def test_a_cyclic_graph_is_refused_at_load_naming_a_node_on_the_cycle(text, message, tmp_path):
    with pytest.raises(MXNetError, match=rf"^symbol JSON: {re.escape(message)}; a symbol graph "
                                         rf"must be acyclic$"):
        mx.sym.load_json(text)
    path = tmp_path / "loop-symbol.json"
    path.write_text(text)
    with pytest.raises(MXNetError, match=rf"^{re.escape(str(path))}: symbol JSON: "
                                         rf"{re.escape(message)}"):
        mx.sym.load(path)


def test_inputs_written_after_their_reader_load_when_there_is_no_cycle():
    net = mx.sym.load_json(_doc([{"op": "relu", "name": "r", "inputs": [[2, 0, 0]]},
                                 {"op": "relu", "name": "q", "inputs": [[0, 0, 0]]},
                                 {"op": "null", "name": "data", "inputs": []}],
                                [[1, 0, 0]], version=10901))
    assert net.list_arguments() == ["data"]
    out = net.eval(mx.cpu(), data=mx.nd.array([-1.0, 2.0]))[0]
    assert out.asnumpy().tolist() == [0.0, 2.0]


def test_load_errors_name_the_file_and_keep_their_type(tmp_path):
    path = tmp_path / "bad-symbol.json"
    path.write_text(_doc([{"op": "NoSuchOp", "name": "n", "inputs": []}], [[0, 0, 0]]))
    with pytest.raises(OpNotFound, match=rf"^{re.escape(str(path))}: Failed loading node 'n'"):
        mx.sym.load(str(path))
