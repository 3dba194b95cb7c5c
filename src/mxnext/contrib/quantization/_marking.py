"""Which float nodes of a graph become quantized ones (MXNet's ``MarkQuantizedNodes``).

The core never imports the quantized ops' plugin: a quantized op says which float op it
replaces through its own ``FQuantizes`` attribute, and may refine that with
``FQuantizable(attrs) -> bool`` (or ``"must"`` / ``"support"``). MXNet marks convolution,
fully connected and RNN nodes as ones that must be quantized and every other quantizable
node as one that may be: ``smart`` mode quantizes the latter only between two of the former
(reachable both from a quantized input and to a quantized output), ``full`` mode always.
"""

from __future__ import annotations

from collections import deque

from ..._runtime import registry
from ..._runtime.base import MXNetError
from ..._runtime.graph import IndexedGraph, Node
from ...symbol import _create

MUST_QUANTIZE = frozenset({"Convolution", "FullyConnected", "RNN"})
"""Float ops whose FQuantizable is kMust in MXNet 1.9.1 (the others default to kSupport)."""

_FROM_INPUT, _FROM_OUTPUT = 1, 2


def quantized_forms() -> dict:
    """{float op name: its quantized OpDef}, from every op's ``FQuantizes``."""
    forms = {}
    for opdef in registry.list_ops():
        target = opdef.get_attr("FQuantizes")
        if target is not None:
            forms[target] = opdef
    return forms


def _kind(node, qop, attrs) -> str | None:
    """"must", "support" or None for a float ``node`` that ``qop`` could replace."""
    rule = qop.get_attr("FQuantizable")
    verdict = True if rule is None else rule(attrs)
    if verdict in ("must", "support"):
        return verdict
    if not verdict or verdict == "none":
        return None
    return "must" if node.op.name in MUST_QUANTIZE else "support"


def _runnable(node, qop, attrs) -> bool:
    """False where ``qop`` needs an input quantized asymmetrically and no plugin provides
    ``_contrib_quantize_asym`` (MXNet likewise leaves a node whose quantized op it cannot
    run float)."""
    rule = qop.get_attr("FNeedAsymQuantizeInput")
    if rule is None or "_contrib_quantize_asym" in registry.names():
        return True
    return not any(rule(attrs, i) for i in range(len(node.inputs)))


def quantized_node(node, qop, attrs) -> Node:
    """The quantized twin of ``node`` (no inputs yet): ``quantized_<name>``, same parameters."""
    params = {k: v for k, v in attrs.items() if not _create._is_dunder(k)}
    twin = Node(qop, qop.parse_params(params), (), "quantized_" + node.name,
                {k: v for k, v in attrs.items() if _create._is_dunder(k)})
    _create.spell(twin, params)
    return twin


def mark(outputs, excluded_names, excluded_ops, mode) -> dict:
    """{id(float node): its quantized twin} for the nodes to quantize under ``mode``."""
    if mode not in ("full", "smart"):
        raise MXNetError(f"_quantize_symbol: quantize_mode must be 'full' or 'smart', got "
                         f"{mode!r}")
    forms = quantized_forms()
    twins, kinds, consumers = {}, {}, {}
    nodes = IndexedGraph(outputs).nodes
    for node in nodes:
        for e in node.inputs:
            consumers.setdefault(id(e.node), []).append(node)
        qop = None if node.op is None else forms.get(node.op.name)
        if qop is None or node.name in excluded_names or node.op.name in excluded_ops:
            continue
        attrs = _create.node_dict(node)
        kind = _kind(node, qop, attrs)
        if kind is not None and _runnable(node, qop, attrs):
            twins[id(node)] = quantized_node(node, qop, attrs)
            kinds[id(node)] = kind
    if mode == "smart":
        _keep_between_musts(nodes, twins, kinds, consumers)
    return twins


def _keep_between_musts(nodes, twins, kinds, consumers) -> None:
    """Drop the "support" nodes not both fed by and feeding a "must" node's chain."""
    musts = [n for n in nodes if kinds.get(id(n)) == "must"]
    marks = {k: 0 for k, v in kinds.items() if v == "support"}
    _flood(musts, lambda n: [e.node for e in n.inputs], marks, _FROM_INPUT)
    _flood(musts, lambda n: consumers.get(id(n), []), marks, _FROM_OUTPUT)
    for key, bits in marks.items():
        if bits != _FROM_INPUT | _FROM_OUTPUT:
            del twins[key]


def _flood(starts, step, marks, bit) -> None:
    """Set ``bit`` on every "support" node reached from ``starts`` through such nodes."""
    queue = deque(starts)
    while queue:
        for nxt in step(queue.popleft()):
            if id(nxt) in marks:
                marks[id(nxt)] |= bit
                queue.append(nxt)
