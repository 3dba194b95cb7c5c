"""MXNet's symbol JSON (``-symbol.json``): writing it as MXNet 1.9 does, reading it from
any MXNet 1.x (and the 0.8 format before it).

Layout: ``nodes`` in graph order, each ``{"op", "name", "attrs", "inputs"[, "control_deps"]}``
(``op`` is ``"null"`` for a variable; ``attrs`` holds an op's parameters as MXNet strings,
only those set, and every other attribute, sorted; ``inputs`` are ``[node, output,
version]``), ``arg_nodes`` (the variables), ``node_row_ptr`` (where each node's outputs
start), ``heads`` (the outputs) and ``attrs`` (``mxnet_version``; ``is_np_shape`` under
``np_shape``). The text is laid out byte for byte as dmlc's JSON writer does.

Reading upgrades older files as MXNet does (``legacy_json_util.cc``): nodes may carry
``param`` and ``attr`` instead of ``attrs``; before 1.9.1, hidden keys (``lr_mult``,
``ctx_group`` ...) become ``__lr_mult__`` ... (``weight_lr_mult`` on an op moves to its
``weight`` variable); before 0.9.0 the auxiliary-state inputs were not stored and get
variables; before 0.9.4 ops' ``FSetInputVarAttrOnCompose`` rules run on their variables;
before 0.9.5 ``argmax``/``argmin`` with ``axis=-1`` meant no axis. A file written without
``np_shape`` and read under it has its variables' ``__shape__`` converted (a 0 dimension is
unknown there, -1 here).
"""

from __future__ import annotations

import json

from .._runtime import registry as _registry
from .._runtime.base import MXNetError, OpNotFound
from .._runtime.graph import IndexedGraph, Node, NodeEntry
from ..util import is_np_shape
from . import _create
from ._json_check import check_doc, where

__all__ = ["dumps", "load", "loads", "without_amp_casts", "MXNET_VERSION"]

MXNET_VERSION = 10901
"""The version mxnext writes and reads as current: MXNet 1.9.1's JSON."""

_ESCAPES = str.maketrans({"\r": "\\r", "\n": "\\n", "\\": "\\\\", "\t": "\\t", '"': '\\"'})
_AMP_CASTS = ("amp_cast", "amp_multicast")


# -- writing -----------------------------------------------------------------------------
def dumps(outputs) -> str:
    attrs = {"mxnet_version": f'["int", {MXNET_VERSION}]'}
    if is_np_shape():
        attrs["is_np_shape"] = '["int", 1]'
    return _object([*_graph_fields(outputs, 0), ("attrs", _map(dict(sorted(attrs.items())), 1))],
                   0)


def _graph_fields(outputs, depth) -> list:
    """``nodes``, ``arg_nodes``, ``node_row_ptr`` and ``heads`` of the graph of ``outputs``,
    laid out for an object at ``depth``."""
    g = IndexedGraph(outputs)
    nodes, row_ptr = [], [0]
    for node in g.nodes:
        nodes.append(_node(g, node, depth + 2))
        row_ptr.append(row_ptr[-1] + node.num_outputs())
    return [("nodes", _array(nodes, depth + 1, multi=True)),
            ("arg_nodes", _array([str(i) for i in g.input_ids], depth + 1)),
            ("node_row_ptr", _array([str(n) for n in row_ptr], depth + 1)),
            ("heads", _array([_entry(g, e) for e in outputs], depth + 1))]


def _node(g, node, depth) -> str:
    """One node's object; a control-flow node's body graphs go in ``subgraphs``, as nnvm
    writes them (without the top level's ``attrs``)."""
    fields = [("op", _str("null" if node.op is None else node.op.name)),
              ("name", _str(node.name))]
    d = _create.node_dict(node)
    if d:
        fields.append(("attrs", _map({k: _str(v) for k, v in sorted(d.items())}, depth + 1)))
    fields.append(("inputs", _array([_entry(g, e) for e in node.inputs], depth + 1)))
    if node._control_deps:
        fields.append(("control_deps",
                       _array([str(g.node_id(c)) for c in node._control_deps], depth + 1)))
    subs = None if node.op is None or "subgraphs" not in _fields(node.op) else \
        node.params.subgraphs
    if subs is not None:
        fields.append(("subgraphs", _array(
            [_object(_graph_fields(s, depth + 2), depth + 2) for s in subs.graphs],
            depth + 1, multi=True)))
    return _object(fields, depth)


def _entry(g, e) -> str:
    return f"[{g.node_id(e.node)}, {e.index}, {e.version}]"


def _str(s) -> str:
    return f'"{str(s).translate(_ESCAPES)}"'


def _object(fields, depth, multi=True) -> str:
    items = [f'"{k}": {v}' for k, v in fields]
    if not multi:
        return "{" + ", ".join(items) + "}"
    inner = "  " * (depth + 1)
    return "{\n" + ", \n".join(inner + i for i in items) + "\n" + "  " * depth + "}"


def _map(d, depth) -> str:
    """A string map: on one line unless it has more than one key (dmlc's rule)."""
    return _object(list(d.items()), depth, multi=len(d) > 1)


def _array(items, depth, multi=None) -> str:
    """An array: on one line unless it has more than 10 items or holds objects."""
    if not (multi or len(items) > 10):
        return "[" + ", ".join(items) + "]"
    inner = "  " * (depth + 1)
    return "[\n" + ", \n".join(inner + i for i in items) + "\n" + "  " * depth + "]"


def without_amp_casts(outputs):
    """``outputs`` over a copy of the graph in which ``amp_cast`` / ``amp_multicast`` nodes
    are bypassed (each output reads the matching input); ``outputs`` itself when the graph
    has none."""
    nodes = IndexedGraph(outputs).nodes
    if not any(n.op is not None and n.op.name in _AMP_CASTS for n in nodes):
        return outputs
    new = {}

    def source(e):
        node = e.node
        if node.op is not None and node.op.name in _AMP_CASTS:
            return source(node.inputs[e.index])
        return NodeEntry(new[id(node)], e.index, e.version)
    for node in nodes:
        if node.op is None or node.op.name not in _AMP_CASTS:
            new[id(node)] = _create.clone(node, [source(e) for e in node.inputs])
    return [source(e) for e in outputs]


# -- reading -----------------------------------------------------------------------------
def loads(text: str) -> list:
    """The output entries of the graph in MXNet JSON ``text``; ``MXNetError`` naming the
    node (number and name) when the document is malformed."""
    try:
        doc = json.loads(text)
    except ValueError as exc:
        raise MXNetError(f"not MXNet symbol JSON: {exc}") from None
    check_doc(doc)
    graph_attrs = doc.get("attrs", {})
    np_shapes = is_np_shape() and graph_attrs.get("is_np_shape", [None, 0])[1] != 1
    return _graph(doc, _version(graph_attrs), np_shapes)


def _graph(doc, version, np_shapes) -> list:
    """The heads of one graph document (the file's, or a node's body graph in
    ``subgraphs``, read with the file's version)."""
    raw_nodes = doc["nodes"]
    nodes = [_new_node(raw_nodes, i) for i in range(len(raw_nodes))]
    for i, (node, raw) in enumerate(zip(nodes, raw_nodes)):
        node.inputs = [NodeEntry(nodes[e[0]], e[1], e[2] if len(e) == 3 else 0)
                       for e in raw["inputs"]]
        node.control_deps.extend(nodes[j] for j in raw.get("control_deps", []))
        if raw.get("subgraphs"):
            node.info["subgraphs"] = _subgraphs(node, raw_nodes, i, version, np_shapes)
    _check_acyclic(nodes)
    for i in doc.get("arg_nodes", []):
        if nodes[i].op is not None:
            raise MXNetError(f"symbol JSON: arg_nodes lists node {i} "
                             f"({nodes[i].name!r}), which is not a variable")
    for i, node in enumerate(nodes):    # file order: an op after its inputs, as MXNet writes
        _finish(node, version, where(raw_nodes, i))
        if np_shapes and node.op is None and node._attrs and "__shape__" in node._attrs:
            node._attrs["__shape__"] = _numpy_shape(node._attrs["__shape__"])
    number = {id(node): i for i, node in enumerate(nodes)}
    for i, node in enumerate(nodes):
        _check_inputs(node, where(raw_nodes, i), raw_nodes, number)
    heads = [NodeEntry(nodes[e[0]], e[1], e[2] if len(e) == 3 else 0) for e in doc["heads"]]
    _check_outputs_read(heads, "heads", raw_nodes, number)
    return heads


def _subgraphs(node, raw_nodes, i, version, np_shapes) -> list:
    """The heads of each body graph of node ``i`` (a control-flow op's)."""
    here = f"symbol JSON: {where(raw_nodes, i)} ({raw_nodes[i]['op']})"
    if node.op is None or "subgraphs" not in _fields(node.op):
        raise MXNetError(f"{here} has subgraphs, but its op takes no body graphs")
    try:
        for sub in raw_nodes[i]["subgraphs"]:
            check_doc(sub)
        return [_graph(sub, version, np_shapes) for sub in raw_nodes[i]["subgraphs"]]
    except MXNetError as exc:
        raise MXNetError(f"{here}, in its subgraphs: {exc}") from None


def _check_inputs(node, here, raw_nodes, number) -> None:
    """An op has as many inputs as it takes, each an output its node has."""
    if node.op is None:
        return
    want = node.op.num_inputs(node.params)
    if want >= 0 and len(node.inputs) != want:
        raise MXNetError(f"symbol JSON: {here} ({node.op.name}) has {len(node.inputs)} "
                         f"inputs; {node.op.name} takes {want}")
    _check_outputs_read(node.inputs, f"{here}: inputs", raw_nodes, number)


def _check_outputs_read(entries, at, raw_nodes, number) -> None:
    for e in entries:
        i = number.get(id(e.node))      # None: a variable an upgrade added, read at 0
        n = e.node.num_outputs()
        if i is not None and e.index >= n:
            raise MXNetError(f"symbol JSON: {at}: entry {[i, e.index, e.version]} reads "
                             f"output {e.index} of {where(raw_nodes, i)}, which has {n} "
                             f"output{'s' if n != 1 else ''}")


def _check_acyclic(nodes) -> None:
    """Refuse a graph whose inputs or control dependencies lead back to a node (MXNet writes
    every node after them); every pass after loading assumes there is no such loop."""
    number = {id(node): i for i, node in enumerate(nodes)}
    done, on_path = set(), set()
    for root in nodes:
        if id(root) in done:
            continue
        path, todo = [root], [iter(_reads(root))]     # the nodes being visited, and what is
        on_path.add(id(root))                         # left of each one's reads
        while todo:
            dep = next(todo[-1], None)
            if dep is None:
                on_path.discard(id(path[-1]))
                done.add(id(path.pop()))
                todo.pop()
            elif id(dep) in on_path:
                loop = path[[id(node) for node in path].index(id(dep)):] + [dep]
                raise MXNetError(
                    f"symbol JSON: node {dep.name!r} (#{number[id(dep)]}) depends on itself: "
                    + " reads ".join(repr(node.name) for node in loop)
                    + "; a symbol graph must be acyclic")
            elif id(dep) not in done:
                path.append(dep)
                on_path.add(id(dep))
                todo.append(iter(_reads(dep)))


def _reads(node):
    return [e.node for e in node.inputs] + list(node.control_deps)


def load(fname) -> list:
    """``loads`` of file ``fname``; an error names the file (its type kept)."""
    with open(fname, "rb") as f:
        data = f.read()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MXNetError(f"{fname}: not MXNet symbol JSON: byte {exc.start} is not UTF-8 "
                         f"({exc.reason})") from None
    try:
        return loads(text)
    except MXNetError as exc:
        exc.args = (f"{fname}: {exc}", *exc.args[1:])
        raise


def _numpy_shape(text) -> str:
    """A legacy ``__shape__`` read under ``np_shape``: () is unknown, a 0 dimension is -1."""
    from .._runtime.graph.infer import parse_shape
    shape = parse_shape(text)
    if not shape:
        return "None"
    return "[" + ",".join(str(d if d else -1) for d in shape) + "]"


def _version(attrs) -> int:
    if "mxnet_version" in attrs:
        return attrs["mxnet_version"][1]
    return 800                      # files before 0.9 carry no version: MXNet's 0.8.0


def _new_node(raw_nodes, i) -> Node:
    """Node ``i`` with its op and raw string dict (``info`` holds it until ``_finish``)."""
    raw = raw_nodes[i]
    d = {}
    for key in ("param", "attr", "attrs"):      # MXNet's attrs and attr win over param
        d.update(raw.get(key) or {})
    op = None
    if raw["op"] != "null":
        try:
            op = _registry.get(raw["op"])
        except OpNotFound as exc:
            raise OpNotFound(f"Failed loading node {raw['name']!r} of type {raw['op']!r} "
                             f"(node #{i}): {exc}") from None
    node = Node(op, None, (), raw["name"])
    node.info = d
    return node


def _finish(node, version, here) -> None:
    """``_upgrade`` ``node``; an error names it (``here``) and its op."""
    try:
        _upgrade(node, version)
    except MXNetError as exc:
        op = f" ({node.op.name})" if node.op is not None else ""
        raise type(exc)(f"symbol JSON: {here}{op}: {exc}") from None


def _upgrade(node, version) -> None:
    """Upgrade ``node``'s raw dict from ``version`` and split it into parameters and
    attributes (an op may move keys onto its input variables, done before it)."""
    d = node.info
    node.info = None
    if version < MXNET_VERSION:
        d = _move_hidden_keys(node, d)
    if node.op is None:
        _check_variable_attrs(node.name, d)
        node._attrs = d or None
        return
    if version < 905 and node.op.name in ("argmax", "argmin") and d.get("axis") == "-1":
        del d["axis"]
    params = {k: v for k, v in d.items() if not _create._is_dunder(k)}
    node.params = node.op.parse_params(params)
    _create.spell(node, params)
    node._attrs = {k: v for k, v in d.items() if _create._is_dunder(k)} or None
    if version < 900:
        _add_missing_inputs(node, d)
    if version < 904:
        rule = node.op.get_attr("FSetInputVarAttrOnCompose")
        if rule is not None:
            for i, e in enumerate(node.inputs):
                if e.node.op is None:
                    rule(node.params, e.node, i)


def _check_variable_attrs(name, d) -> None:
    """A variable's ``__shape__`` and ``__dtype__`` parse (else inference fails later, and
    without the file's name)."""
    from .._runtime.graph.infer import _dtype_flag, parse_shape
    if "__shape__" in d:
        parse_shape(d["__shape__"], name)
    if "__dtype__" in d:
        _dtype_flag(d["__dtype__"], name)


def _move_hidden_keys(node, d) -> dict:
    """MXNet's ``UpgradeJSON_FixParsing``: ``lr_mult`` -> ``__lr_mult__``; on an op,
    ``weight_lr_mult`` -> ``__lr_mult__`` of its ``weight`` input variable."""
    out = {}
    for key, value in d.items():
        target, new_key = node, key
        for k in _create.HIDDEN_KEYS:
            pos = key.rfind(k)
            if pos == 0 and len(k) == len(key):
                new_key = f"__{k}__"
                break
            if pos > 1 and pos + len(k) == len(key) and node.op is not None:
                names = node.op.list_input_names(node.op.parse_params(
                    {n: v for n, v in d.items() if n in _fields(node.op)}))
                arg = key[:pos - 1]
                if arg in names and names.index(arg) < len(node.inputs) \
                        and node.inputs[names.index(arg)].node.op is None:
                    target, new_key = node.inputs[names.index(arg)].node, f"__{k}__"
                break
        if target is node:
            out[new_key] = value
        elif target.info is not None:
            target.info[new_key] = value
        else:
            target.attrs[new_key] = value
    return out


def _fields(op):
    return op.param_model.model_fields if op.param_model is not None else {}


def _add_missing_inputs(node, d) -> None:
    """MXNet 0.8 files left out auxiliary-state inputs: add variables for them, carrying the
    op's attributes."""
    n_req = node.op.num_inputs(node.params)
    if len(node.inputs) >= n_req:
        return
    names = node.op.list_input_names(node.params)
    for i in range(len(node.inputs), n_req):
        var = Node(None, None, (), f"{node.name}_{names[i]}" if node.name else names[i],
                   dict(d))
        node.inputs.append(NodeEntry(var, 0, 0))    # version 0, as MXNet's upgrade leaves it
