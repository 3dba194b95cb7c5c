"""Walks an MXNet graph in order and writes its ONNX graph through the converter table."""

from __future__ import annotations

import json

import numpy as np

from .._runtime.base import MXNetError, ParamError
from .._runtime.graph import IndexedGraph
from .._runtime.graph import infer as _infer
from ._table import CONVERTERS, parse_attr

__all__ = ["Builder", "OpNode", "convert_graph", "data_inputs"]


class OpNode:
    """One MXNet op node as its converter sees it."""

    def __init__(self, op, name, attrs, inputs, outputs, in_shapes, in_dtypes, out_shapes,
                 out_dtypes):
        self.op, self.name, self.attrs = op, name, attrs
        self.inputs, self.outputs = inputs, outputs
        self.in_shapes, self.in_dtypes = in_shapes, in_dtypes
        self.out_shapes, self.out_dtypes = out_shapes, out_dtypes

    def attr(self, key, default=None):
        text = self.attrs.get(key)
        return default if text is None else parse_attr(text)

    @property
    def x(self) -> str:
        return self.inputs[0]

    @property
    def out(self) -> str:
        return self.outputs[0]

    def fail(self, what: str) -> MXNetError:
        return MXNetError(f"mx.onnx.export_model: op {self.op!r} (node {self.name!r}): {what}")


class Builder:
    """Collects ONNX nodes and initializers for one opset."""

    def __init__(self, onnx, opset: int, reserved=()):
        self.onnx, self.opset = onnx, opset
        self.nodes, self.initializers = [], []
        self._taken: set = set(reserved)     # names fresh() must not hand out

    def fresh(self, hint: str) -> str:
        name, k = hint, 0
        while name in self._taken:
            k += 1
            name = f"{hint}__{k}"
        self._taken.add(name)
        return name

    def add(self, op_type: str, inputs, outputs=1, **attrs):
        """Append a node; ``outputs`` is a list of names or a count of fresh ones. Returns
        the output name (one output) or the list of them."""
        outs = ([self.fresh(f"{op_type.lower()}") for _ in range(outputs)]
                if isinstance(outputs, int) else list(outputs))
        self._taken.update(outs)
        self.nodes.append(self.onnx.helper.make_node(op_type, list(inputs), outs,
                                                     name=self.fresh(f"{outs[0]}_{op_type}"),
                                                     **attrs))
        return outs[0] if len(outs) == 1 else outs

    def const(self, value, dtype=None, hint: str = "const") -> str:
        """An initializer holding ``value`` (as ``dtype``); returns its name."""
        array = np.asarray(value, dtype=dtype)
        name = self.fresh(hint)
        self.initializers.append(self.onnx.numpy_helper.from_array(array, name))
        return name

    def ints(self, values) -> str:
        return self.const(list(values), np.int64, "ints")

    def reduce(self, op_type: str, x: str, axes, keepdims: bool, out=1):
        """A Reduce* node over ``axes`` (None: all), axes as attribute or input by opset."""
        attrs = {"keepdims": int(keepdims)}
        inputs = [x]
        if axes is not None:
            if op_type == "ReduceSum" or self.opset >= 18:
                inputs.append(self.ints(axes))
            else:
                attrs["axes"] = list(axes)
        return self.add(op_type, inputs, [out] if isinstance(out, str) else out, **attrs)

    def unsqueeze(self, x: str, axes, out=1):
        return self.add("Unsqueeze", [x, self.ints(axes)], [out] if isinstance(out, str) else out)

    def squeeze(self, x: str, axes, out=1):
        inputs = [x] if axes is None else [x, self.ints(axes)]
        return self.add("Squeeze", inputs, [out] if isinstance(out, str) else out)

    def cast(self, x: str, dtype, out=1):
        to = self.onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        return self.add("Cast", [x], [out] if isinstance(out, str) else out, to=to)


def _entry_names(nodes, row_ptr):
    """The ONNX tensor name of every MXNet output entry (node names made unique first)."""
    names, seen = [], set()
    for nid, node in enumerate(nodes):
        base = node["name"] if node["name"] not in seen else f"idx_{nid}_{node['name']}"
        seen.add(base)
        count = row_ptr[nid + 1] - row_ptr[nid]
        names += [base] + [f"{base}_output{i}" for i in range(1, count)]
    return names


def _infer_all(g, known_shapes, known_dtypes):
    shapes = _infer.infer_shapes(g, _infer.match_names(g, known_shapes))
    dtypes = _infer.infer_types(g, _infer.match_names(g, known_dtypes))
    return shapes, [None if t is None else np.dtype(t.type) for t in dtypes]


def _convert_op(b, node, entry, names, shapes, dtypes):
    op, name = node["op"], node["name"]
    found = CONVERTERS.get(op)
    if found is None or found[0] > b.opset:
        supported = sum(1 for low, _ in CONVERTERS.values() if low <= b.opset)
        why = (f"has no ONNX converter ({supported} ops have one at opset {b.opset}: "
               f"mx.onnx.get_operator_support({b.opset}) lists them)" if found is None
               else f"converts from opset {found[0]} on, not at opset {b.opset}")
        raise MXNetError(f"mx.onnx.export_model: op {op!r} (node {name!r}) {why}")
    ins = [entry[i[0]] + i[1] for i in node["inputs"]]
    outs = list(range(entry[node["id"]], entry[node["id"] + 1]))
    n = OpNode(op, name, node.get("attrs", {}), [names[i] for i in ins],
               [names[i] for i in outs], [shapes[i] for i in ins], [dtypes[i] for i in ins],
               [shapes[i] for i in outs], [dtypes[i] for i in outs])
    found[1](b, n)


def _value_info(onnx, name, dtype, shape):
    return onnx.helper.make_tensor_value_info(
        name, onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)


def data_inputs(sym, params) -> list:
    """The inputs ``in_shapes`` describes, in order: those ``params`` does not hold, less
    the training label MXNet's JSON carries (the last op's name + ``_label``)."""
    ops = [node for node in json.loads(sym.tojson())["nodes"] if node["op"] != "null"]
    label = ops[-1]["name"] + "_label" if ops else None
    return [name for name in sym.list_inputs() if name not in params and name != label]


def convert_graph(onnx, sym, params, in_shapes, in_types, opset, dynamic_shapes):
    """The ONNX ``GraphProto`` of ``sym`` with ``params`` (name -> numpy array) as
    initializers; ``dynamic_shapes`` (or None) replaces ``in_shapes`` on the graph inputs."""
    doc = json.loads(sym.tojson())
    nodes, row_ptr = doc["nodes"], doc["node_row_ptr"]
    data = data_inputs(sym, params)
    if len(in_shapes) != len(data):
        raise ParamError(f"mx.onnx.export_model: in_shapes gives {len(in_shapes)} shapes but "
                         f"the model has {len(data)} data inputs {data}")
    variables = set(sym.list_inputs())
    used = {k: v for k, v in params.items() if k in variables}
    known = {**dict(zip(data, map(tuple, in_shapes))), **{k: v.shape for k, v in used.items()}}
    known_types = {**dict(zip(data, in_types)), **{k: v.dtype for k, v in used.items()}}
    shapes, dtypes = _infer_all(IndexedGraph(sym._outputs), known, known_types)
    names = _entry_names(nodes, row_ptr)
    b = Builder(onnx, opset, reserved=names)
    inputs = []
    for nid, node in enumerate(nodes):
        node["id"] = nid
        if node["op"] != "null":
            _convert_op(b, node, row_ptr, names, shapes, dtypes)
        elif node["name"] in params:
            array = params[node["name"]]
            b.initializers.append(onnx.numpy_helper.from_array(array, names[row_ptr[nid]]))
        elif node["name"] in data:
            i = data.index(node["name"])
            shape = in_shapes[i] if dynamic_shapes is None else dynamic_shapes[i]
            inputs.append(_value_info(onnx, names[row_ptr[nid]], in_types[i], shape))
    outputs = []
    for head in doc["heads"]:
        eid = row_ptr[head[0]] + head[1]
        shape = shapes[eid] if dynamic_shapes is None else [None] * len(shapes[eid])
        outputs.append(_value_info(onnx, names[eid], dtypes[eid], shape))
    # a parameter a converter replaced (BatchNorm's gamma under fix_gamma) is left out
    read = {name for node in b.nodes for name in node.input} | {o.name for o in outputs}
    initializers = [t for t in b.initializers if t.name in read]
    return onnx.helper.make_graph(b.nodes, "mxnext_converted_model", inputs, outputs,
                                  initializers)
