"""The graph IR shared by autograd, Symbol and the executor (NNVM's Node/NodeEntry).

A ``Node`` is an operator application (or a variable when ``op`` is None)
with parsed parameters and inputs given as ``NodeEntry(node, index,
version)``. Gradient rules (``FGradient``) build new nodes with
``make_node``; they never run anything.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Node", "NodeEntry", "entry", "make_node", "variable", "outputs_of"]


class NodeEntry(NamedTuple):
    node: "Node"
    index: int = 0
    version: int = 0


def entry(node, index=0) -> NodeEntry:
    """``NodeEntry(node, index, 0)`` without the named tuple's Python-level ``__new__``."""
    return _tuple_new(NodeEntry, (node, index, 0))


_tuple_new = tuple.__new__


class Node:
    """One operator application or a variable (``op is None``)."""

    __slots__ = ("op", "params", "inputs", "name", "_attrs", "_control_deps", "info",
                 "__weakref__")

    def __init__(self, op, params, inputs, name=None, attrs=None):
        self.op = op                  # OpDef, or None for a variable
        self.params = params          # the op's parsed parameter model instance (or None)
        self.inputs = list(inputs)    # list[NodeEntry]
        self.name = name or ""
        self._attrs = dict(attrs) if attrs else None
        self._control_deps = None
        self.info = None              # per-frontend scratch (autograd keeps saved values here)

    @classmethod
    def _new(cls, op, params, inputs):
        """A nameless node taking ownership of the list ``inputs`` (autograd's hot path)."""
        n = object.__new__(cls)
        n.op, n.params, n.inputs, n.name = op, params, inputs, ""
        n._attrs = n._control_deps = n.info = None
        return n

    @property
    def attrs(self) -> dict:
        """Free-form string attributes (``__shape__``, ``lr_mult`` ...)."""
        if self._attrs is None:
            self._attrs = {}
        return self._attrs

    @property
    def control_deps(self) -> list:
        if self._control_deps is None:
            self._control_deps = []
        return self._control_deps

    @property
    def is_variable(self) -> bool:
        return self.op is None

    def num_outputs(self) -> int:
        return 1 if self.op is None else self.op.num_outputs(self.params)

    def __repr__(self):
        kind = "var" if self.op is None else self.op.name
        return f"<Node {kind} {self.name!r}>"


def make_node(op, inputs, params=None, name=None, attrs=None) -> Node:
    """Build a node applying ``op`` (an OpDef or a registered name) to ``inputs``.

    ``params`` may be a parsed model instance, a kwargs dict (parsed by the op,
    MXNet strings accepted) or None for the op's defaults.
    """
    from . import registry
    opdef = registry.get(op) if isinstance(op, str) else op
    if params is None or isinstance(params, dict):
        params = opdef.parse_params(params or {})
    return Node(opdef, params, inputs, name, attrs)


def variable(name, attrs=None) -> Node:
    return Node(None, None, (), name, attrs)


def outputs_of(node: Node) -> list[NodeEntry]:
    return [NodeEntry(node, i, 0) for i in range(node.num_outputs())]
