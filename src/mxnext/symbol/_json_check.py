"""The shape of a parsed ``-symbol.json`` document, checked before a node is built.

What nnvm's JSON reader declares is required here too: an object with ``nodes`` (objects
with a string ``op``, a string ``name`` and ``inputs``) and ``heads``; ``arg_nodes``,
``attrs`` and a node's ``attrs`` / ``attr`` / ``param`` / ``control_deps`` are optional.
Every error is an ``MXNetError`` naming what is wrong and where (``node #3 'conv1'``).
"""

from __future__ import annotations

from .._runtime.base import MXNetError

__all__ = ["check_doc", "where"]


def where(raw_nodes, i) -> str:
    """``node 'name' (#i)`` (``node #i`` while its name is not a string)."""
    name = raw_nodes[i].get("name") if isinstance(raw_nodes[i], dict) else None
    return f"node {name!r} (#{i})" if isinstance(name, str) else f"node #{i}"


def check_doc(doc) -> None:
    """Raise ``MXNetError`` unless ``doc`` has the layout of MXNet symbol JSON."""
    if not isinstance(doc, dict):
        raise MXNetError(f"not MXNet symbol JSON: the document is a {type(doc).__name__}, "
                         f"not an object")
    for key in ("nodes", "heads"):
        if key not in doc:
            raise MXNetError(f"not MXNet symbol JSON: the document has no {key!r} (its keys: "
                             f"{sorted(doc)})")
        if not isinstance(doc[key], list):
            _fail(key, "a list", doc[key])
    nodes = doc["nodes"]
    for i, raw in enumerate(nodes):
        _check_node(nodes, i, raw)
    if not isinstance(doc.get("arg_nodes", []), list):
        _fail("arg_nodes", "a list of node numbers", doc["arg_nodes"])
    for i in doc.get("arg_nodes", []):
        _node_number(nodes, i, "arg_nodes")
    for e in doc["heads"]:
        _entry(nodes, e, "heads")
    attrs = doc.get("attrs", {})
    if not isinstance(attrs, dict):
        _fail("the graph's 'attrs'", "an object", attrs)
    for key in ("mxnet_version", "is_np_shape"):
        v = attrs.get(key, ["int", 0])
        if not (isinstance(v, list) and len(v) == 2 and v[0] == "int" and _is_int(v[1])):
            _fail(f"the graph's {key!r}", '["int", <integer>]', v)


def _check_node(nodes, i, raw) -> None:
    if not isinstance(raw, dict):
        _fail(f"node #{i}", "an object", raw)
    here = where(nodes, i)
    for key in ("op", "name", "inputs"):
        if key not in raw:
            raise MXNetError(f"symbol JSON: {here} has no {key!r}")
    for key in ("op", "name"):
        if not isinstance(raw[key], str):
            _fail(f"{here}: {key!r}", "a string", raw[key])
    for key in ("param", "attr", "attrs"):
        d = raw.get(key)
        if d is None:
            continue
        if not isinstance(d, dict):
            _fail(f"{here}: {key!r}", "an object of strings", d)
        for k, v in d.items():
            if not isinstance(v, str):
                _fail(f"{here}: {key}[{k!r}]", "a string", v)
    if not isinstance(raw["inputs"], list):
        _fail(f"{here}: 'inputs'", "a list of [node, index, version]", raw["inputs"])
    if raw["op"] == "null" and raw["inputs"]:
        raise MXNetError(f"symbol JSON: {here} is a variable (op 'null') but has inputs "
                         f"{raw['inputs']!r}")
    for e in raw["inputs"]:
        _entry(nodes, e, f"{here}: inputs")
    deps = raw.get("control_deps", [])
    if not isinstance(deps, list):
        _fail(f"{here}: 'control_deps'", "a list of node numbers", deps)
    for d in deps:
        _node_number(nodes, d, f"{here}: control_deps")


def _entry(nodes, e, at) -> None:
    if not (isinstance(e, list) and len(e) in (2, 3) and all(map(_is_int, e))
            and min(e) >= 0):
        raise MXNetError(f"symbol JSON: {at}: entry {e!r} is not [node, index, version] "
                         f"(integers >= 0)")
    _node_number(nodes, e[0], at)


def _node_number(nodes, i, at) -> None:
    if not _is_int(i) or not 0 <= i < len(nodes):
        raise MXNetError(f"symbol JSON: {at} refers to node {i!r}, but there are "
                         f"{len(nodes)} nodes")


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _fail(what, expected, got):
    shown = repr(got)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise MXNetError(f"symbol JSON: {what} must be {expected}, got {type(got).__name__} "
                     f"{shown}")
