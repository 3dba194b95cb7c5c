"""MXNet's ``mx.viz``: a layer table of a symbol (``print_summary``) and a Graphviz drawing
of its graph (``plot_network``).

Both read the symbol's JSON, as MXNet's do, so they print and draw what MXNet does for the
same network: one row or box per operator (and the first variable), output shapes without
the batch axis when input shapes are given, parameter counts of Convolution,
FullyConnected, BatchNorm and Embedding layers. ``plot_network`` returns a
``graphviz.Digraph`` (the ``graphviz`` package); rendering it needs Graphviz's ``dot``.
"""

from __future__ import annotations

import json
import re
import warnings

__all__ = ["print_summary", "plot_network"]

_COLORS = ("#8dd3c7", "#fb8072", "#ffffb3", "#bebada", "#80b1d3", "#fdb462", "#b3de69",
           "#fccde5")
_WEIGHT_SUFFIXES = ("_weight", "_bias", "_beta", "_gamma", "_moving_var", "_moving_mean",
                    "_running_var", "_running_mean")


def _dims(text):
    """The numbers in a tuple attribute such as ``"(5, 5)"``, as strings."""
    return re.findall(r"\d+", text)


def _check(symbol):
    from .symbol import Symbol
    if not isinstance(symbol, Symbol):
        raise TypeError(f"expected a Symbol, got {type(symbol).__name__}")


def _output_values(symbol, known, infer):
    """``{output name of every internal: value}`` from ``infer`` (shape or type)."""
    internals = symbol.get_internals()
    _, outs, _ = getattr(internals, infer)(**known)
    if outs is None:
        raise ValueError(f"the given input {infer[6:]}s do not decide every {infer[6:]}")
    return dict(zip(internals.list_outputs(), outs))


def print_summary(symbol, shape=None, line_length=120, positions=(.44, .64, .74, 1.)):
    """Print a table of ``symbol``'s layers: name (op), output shape (with ``shape``, a dict
    of input shapes), parameter count and the layers it reads."""
    _check(symbol)
    shapes = _output_values(symbol, shape, "infer_shape") if shape is not None else None
    conf = json.loads(symbol.tojson())
    nodes = conf["nodes"]
    heads = set(conf["heads"][0])        # MXNet reads the first head entry's numbers
    if positions[-1] <= 1:
        positions = [int(line_length * p) for p in positions]

    def row(fields):
        line = ""
        for field, end in zip(fields, positions):
            line = (line + str(field))[:end]
            line += " " * (end - len(line))
        print(line)

    def channels(key):
        """The first non-batch dimension of output ``key``, 0 when not known."""
        s = shapes.get(key) if shapes is not None else None
        return int(s[1]) if s is not None and len(s) > 1 else 0

    def layer(node, out_shape):
        op, attrs = node["op"], node.get("attrs", {})
        previous, fan_in = [], 0
        if op != "null":
            for item in node["inputs"]:
                src = nodes[item[0]]
                if src["op"] != "null" or item[0] in heads:
                    previous.append(src["name"])
                    fan_in += channels(src["name"] + ("_output" if src["op"] != "null" else ""))
        params = 0
        if op == "Convolution":
            params = fan_in * int(attrs["num_filter"]) // int(attrs.get("num_group", "1"))
            for k in _dims(attrs["kernel"]):
                params *= int(k)
            if attrs.get("no_bias") != "True":
                params += int(attrs["num_filter"])
        elif op == "FullyConnected":
            bias = 0 if attrs.get("no_bias") == "True" else 1
            params = (fan_in + bias) * int(attrs["num_hidden"])
        elif op == "BatchNorm" and shapes is not None:
            params = 2 * int(shapes[node["name"] + "_output"][1])
        elif op == "Embedding":
            params = int(attrs["input_dim"]) * int(attrs["output_dim"])
        row([f"{node['name']}({op})", "x".join(map(str, out_shape)), params,
             previous[0] if previous else ""])
        for name in previous[1:]:
            row(["", "", "", name])
        return params

    print("_" * line_length)
    row(["Layer (type)", "Output Shape", "Param #", "Previous Layer"])
    print("=" * line_length)
    total = 0
    for i, node in enumerate(nodes):
        if node["op"] == "null" and i > 0:
            continue
        out_shape = []
        if shapes is not None and (node["op"] != "null" or i in heads):
            key = node["name"] + ("_output" if node["op"] != "null" else "")
            if key in shapes:
                out_shape = shapes[key][1:]
        total += layer(node, out_shape)
        print(("=" if i == len(nodes) - 1 else "_") * line_length)
    print(f"Total params: {total}")
    print("_" * line_length)


def _stride(attrs):
    return "x".join(_dims(attrs["stride"])) if "stride" in attrs else "1"


def _convolution(op, name, attrs):
    kernel = "x".join(_dims(attrs["kernel"]))
    return f"Convolution\n{kernel}/{_stride(attrs)}, {attrs['num_filter']}", 1


def _activation(op, name, attrs):
    kind = attrs.get("act_type", "Leaky") if op == "LeakyReLU" else attrs["act_type"]
    return f"{op}\n{kind}", 2


def _pooling(op, name, attrs):
    kernel = "x".join(_dims(attrs["kernel"])) if "kernel" in attrs else "[]"
    return f"Pooling\n{attrs['pool_type']}, {kernel}/{_stride(attrs)}", 4


def _colored(color):
    return lambda op, name, attrs: (name, color)


_plain = _colored(7)
# op -> (op, node name, attrs) -> (box label, index into _COLORS); ops not here: _plain
_LOOKS = {
    "Convolution": _convolution,
    "FullyConnected": lambda op, name, attrs: (f"FullyConnected\n{attrs['num_hidden']}", 1),
    "BatchNorm": _colored(3),
    "Activation": _activation,
    "LeakyReLU": _activation,
    "Pooling": _pooling,
    "Concat": _colored(5),
    "Flatten": _colored(5),
    "Reshape": _colored(5),
    "Softmax": _colored(6),
    "Custom": lambda op, name, attrs: (attrs["op_type"], 7),
}


def plot_network(symbol, title="plot", save_format="pdf", shape=None, dtype=None,
                 node_attrs=None, hide_weights=True):
    """A ``graphviz.Digraph`` of ``symbol``'s graph: an oval per input, a colored box per op
    (labelled with its kernel, stride, filters or units where it has them), edges labelled
    with shapes (``shape``: dict of input shapes) and dtypes (``dtype``). Inputs named like
    weights (``*_weight``, ``*_bias``, ``*_gamma`` ...) are left out when ``hide_weights``."""
    try:
        from graphviz import Digraph
    except ImportError:
        raise ImportError("plot_network needs the graphviz package (pip install graphviz); "
                          "rendering also needs Graphviz's dot program") from None
    _check(symbol)
    shapes = _output_values(symbol, shape, "infer_shape") if shape is not None else None
    types = _output_values(symbol, dtype, "infer_type") if dtype is not None else None
    nodes = json.loads(symbol.tojson())["nodes"]
    _warn_repeated_names(nodes)
    style = {"shape": "box", "fixedsize": "true", "width": "1.3", "height": "0.8034",
             "style": "filled"}
    style.update(node_attrs or {})
    dot = Digraph(name=title, format=save_format)
    hidden = _draw_nodes(dot, nodes, style, hide_weights)
    _draw_edges(dot, nodes, hidden, shapes, types)
    return dot


def _warn_repeated_names(nodes):
    names = [n["name"] for n in nodes]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if repeated:
        warnings.warn("There are multiple variables with the same name in your graph, this "
                      "may result in cyclic graph. Repeated names: " + ",".join(repeated),
                      RuntimeWarning, stacklevel=3)


def _draw_nodes(dot, nodes, style, hide_weights):
    """A node per op and per input not named like a weight; the weights' names when
    ``hide_weights`` (their edges are left out too)."""
    hidden = set()
    for node in nodes:
        op, name, attrs = node["op"], node["name"], node.get("attrs", {})
        look = dict(style)
        if op == "null":
            if name.endswith(_WEIGHT_SUFFIXES):
                if hide_weights:
                    hidden.add(name)
                continue                  # not drawn; shown as a bare edge end otherwise
            look["shape"], label, color = "oval", name, 0
        else:
            label, color = _LOOKS.get(op, _plain)(op, name, attrs)
        look["fillcolor"] = _COLORS[color]
        dot.node(name=name, label=label, **look)
    return hidden


def _draw_edges(dot, nodes, hidden, shapes, types):
    """An edge from each op to each of its inputs not hidden, labelled with the input's
    shape (without the batch axis) and dtype where known."""
    for node in nodes:
        if node["op"] == "null":
            continue
        inputs = node["inputs"][:1] if node["op"] == "_contrib_BilinearResize2D" else \
            node["inputs"]
        for item in inputs:
            src = nodes[item[0]]
            if src["name"] in hidden:
                continue
            key = src["name"]
            if src["op"] != "null":       # MXNet labels a multi-output input by its last
                key += "_output"
                count = src.get("attrs", {}).get("num_outputs")
                if count is not None:
                    key += str(int(count) - 1)
            label = "" if shapes is None else "x".join(map(str, shapes[key][1:]))
            if types is not None:
                label += f"({types[key].__name__})"
            dot.edge(tail_name=node["name"], head_name=src["name"], label=label,
                     dir="back", arrowtail="open")
