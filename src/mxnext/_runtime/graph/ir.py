"""The graph IR shared by autograd, Symbol and the executor (NNVM's Node/NodeEntry).

A ``Node`` is an operator application (or a variable when ``op`` is None)
with parsed parameters and inputs given as ``NodeEntry(node, index,
version)``. Gradient rules (``FGradient``) build new nodes with
``make_node``; they never run anything.
"""

from __future__ import annotations

import bisect
from typing import NamedTuple

__all__ = ["Node", "NodeEntry", "IndexedGraph", "entry", "make_node", "variable", "outputs_of"]


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
    from .. import registry
    opdef = registry.get(op) if isinstance(op, str) else op
    if params is None or isinstance(params, dict):
        params = opdef.parse_params(params or {})
    return Node(opdef, params, inputs, name, attrs)


def variable(name, attrs=None) -> Node:
    return Node(None, None, (), name, attrs)


def outputs_of(node: Node) -> list[NodeEntry]:
    return [NodeEntry(node, i, 0) for i in range(node.num_outputs())]


class IndexedGraph:
    """The nodes some output entries depend on, numbered (NNVM's ``IndexedGraph``).

    ``nodes`` are in NNVM's post-order DFS: from each output in turn, a node's inputs in
    order, then its control dependencies, each node after everything it reads; this order
    gives MXNet's argument order and JSON node order. Every node output has an entry id:
    ``entry_id(node_id, index)``. ``input_ids`` are the variable nodes in that order;
    ``mutable_ids`` those an op mutates (``FMutateInputs``: auxiliary states).
    """

    def __init__(self, outputs):
        self.nodes: list[Node] = []
        self._ids: dict = {}
        for head in outputs:
            self._visit(head.node)
        self.entry_start = []
        n = 0
        for node in self.nodes:
            self.entry_start.append(n)
            n += node.num_outputs()
        self.num_entries = n
        self.outputs = [self.entry_id(self._ids[e.node], e.index) for e in outputs]
        self.input_ids = [i for i, node in enumerate(self.nodes) if node.op is None]
        self.mutable_ids = set()
        for node in self.nodes:
            if node.op is not None:
                for k in node.op.mutate_inputs(node.params):
                    src = node.inputs[k].node
                    if src.op is None:
                        self.mutable_ids.add(self._ids[src])

    def _visit(self, root):
        if root in self._ids:
            return
        stack = [(root, 0)]
        self._ids[root] = None                # seen, not numbered yet
        while stack:
            node, k = stack[-1]
            reads = node.inputs
            deps = node._control_deps or ()
            if k == len(reads) + len(deps):
                stack.pop()
                self._ids[node] = len(self.nodes)
                self.nodes.append(node)
                continue
            stack[-1] = (node, k + 1)
            nxt = reads[k].node if k < len(reads) else deps[k - len(reads)]
            if nxt not in self._ids:
                self._ids[nxt] = None
                stack.append((nxt, 0))

    def node_id(self, node) -> int:
        return self._ids[node]

    def __contains__(self, node) -> bool:
        return node in self._ids

    def entry_id(self, node_id: int, index: int = 0) -> int:
        return self.entry_start[node_id] + index

    def entry_node(self, eid: int) -> int:
        """The id of the node whose output entry ``eid`` is."""
        return bisect.bisect_right(self.entry_start, eid) - 1

    def input_entries(self, node_id: int) -> list[int]:
        """Entry ids of node ``node_id``'s inputs."""
        return [self.entry_id(self._ids[e.node], e.index) for e in self.nodes[node_id].inputs]

    @property
    def arg_ids(self) -> list[int]:
        """Variables that are arguments (MXNet's ``list_arguments`` order)."""
        return [i for i in self.input_ids if i not in self.mutable_ids]

    @property
    def aux_ids(self) -> list[int]:
        """Variables that are auxiliary states (``list_auxiliary_states`` order)."""
        return [i for i in self.input_ids if i in self.mutable_ids]
