"""MXNet 1.9.1's ``QuantizeGraph`` pass: a float graph rewritten into quantized ops.

Each marked node becomes its quantized twin (``quantized_<name>``) reading quantized
inputs first, then a (min, max) pair per quantized input. A float input gets a
``_contrib_quantize_v2`` node (``<node>_quantize``, or ``<node>_<output>_quantize`` when it
comes from an op; ``_contrib_quantize_asym`` where ``FNeedAsymQuantizeInput`` asks), shared
by every reader; an op whose quantized form outputs int32
(``FNeedRequantize``) is followed by ``_contrib_requantize`` (``requantize_<name>``); a float
node reading a quantized one gets ``_contrib_dequantize`` (``<name>_dequantize``), as does
each quantized graph output. Offline parameters are then read from variables
``<param>_quantize``, ``<param>_quantize_min`` and ``<param>_quantize_max``.
"""

from __future__ import annotations

from ..._runtime.graph import IndexedGraph, NodeEntry, make_node, variable
from ...symbol import _create
from ._marking import mark

_CALIB_INPUT = {"_contrib_quantize_v2": [0], "_contrib_requantize": [0],
                "_contrib_quantize_asym": [0]}
"""MXNet's FNeedCalibrateInput of its own quantize ops, used where the op does not set it."""


def _ask(op, key, attrs, *args, default=None):
    """``op``'s protocol attribute ``key`` applied to ``attrs`` (a constant is returned)."""
    rule = op.get_attr(key)
    if rule is None:
        return default
    return rule(attrs, *args) if callable(rule) else rule


def _visible(node) -> int:
    return 1 if node.op is None else node.op.num_visible_outputs(node.params)


def _op_node(opname, name, inputs, **params):
    node = make_node(opname, inputs, params, name)
    _create.spell(node, params)
    return node


def output_name(node, index) -> str:
    """MXNet's name of output ``index`` of ``node`` (``fc_output``; a variable's own name)."""
    if node.op is None:
        return node.name
    return f"{node.name}_{node.op.list_output_names(node.params)[index]}"


class _Rewrite:
    """One run of the pass over ``outputs`` (MXNet's mirror maps kept by node identity)."""

    def __init__(self, twins, dtype):
        self.twins, self.dtype = twins, dtype
        self.mirror, self.source = {}, {}     # id(old) -> new node; id(new) -> old node
        self.quantized = {}                   # (id(old node), index) -> its quantize node

    def run(self, outputs):
        for node in IndexedGraph(outputs).nodes:
            new = self._quantize(node) if id(node) in self.twins else self._copy(node)
            self.mirror[id(node)] = new
            self.source[id(new)] = node
        return [self._head(e) for e in outputs]

    # -- a quantized node ---------------------------------------------------------------
    def _avoids_dequantize(self, node, index) -> bool:
        """Whether quantized ``node``'s output ``index`` is float already."""
        twin = self.twins.get(id(node))
        return twin is not None and bool(_ask(
            twin.op, "FAvoidDequantizeOutput", _create.node_dict(node), index, default=False))

    def _quantize(self, node):
        twin = self.twins[id(node)]
        attrs = _create.node_dict(node)
        n = len(node.inputs)
        keep = [bool(_ask(twin.op, "FAvoidQuantizeInput", attrs, i, default=False))
                for i in range(n)]
        asym = [bool(_ask(twin.op, "FNeedAsymQuantizeInput", attrs, i, default=False))
                for i in range(n)]
        twin.inputs = [self._data_input(*args) for args in zip(node.inputs, keep, asym)]
        for e, k in zip(node.inputs, keep):
            if not k:
                twin.inputs.extend(self._range_inputs(e))
        if not _ask(twin.op, "FNeedRequantize", _create.node_dict(twin), default=False):
            return twin
        return _op_node("_contrib_requantize", "requantize_" + node.name,
                        [NodeEntry(twin, i, 0) for i in range(3)], out_type=self.dtype)

    def _data_input(self, e, keep_float, asym):
        mirror = self.mirror[id(e.node)]
        if keep_float:
            return NodeEntry(mirror, e.index, e.version)
        if id(e.node) not in self.twins or self._avoids_dequantize(e.node, e.index):
            return NodeEntry(self._quantize_node(e, mirror, asym), 0, e.version)
        if mirror.op is not None and mirror.op.name == "_contrib_dequantize":
            return NodeEntry(mirror.inputs[0].node, e.index, e.version)
        return NodeEntry(mirror, e.index, e.version)

    def _quantize_node(self, e, mirror, asym):
        key = (id(e.node), e.index)
        q = self.quantized.get(key)
        if q is None:
            suffix = ""
            if mirror.op is not None:
                names = e.node.op.get_attr("FListOutputNames")
                suffix = "_" + (names(e.node.params)[e.index] if names else str(e.index))
            name, data = e.node.name + suffix + "_quantize", [NodeEntry(mirror, e.index,
                                                                          e.version)]
            q = (_op_node("_contrib_quantize_asym", name, data) if asym else
                 _op_node("_contrib_quantize_v2", name, data, out_type=self.dtype))
            self.quantized[key] = q
        return q

    def _range_inputs(self, e):
        q = self.quantized.get((id(e.node), e.index))
        if q is not None:
            return [NodeEntry(q, 1, 0), NodeEntry(q, 2, 0)]
        mirror = self.mirror[id(e.node)]
        if mirror.op is not None and mirror.op.name == "_contrib_dequantize":
            mirror = mirror.inputs[0].node
        first = _visible(mirror) - 2 + 2 * e.index
        return [NodeEntry(mirror, first, 0), NodeEntry(mirror, first + 1, 0)]

    # -- a float node ---------------------------------------------------------------------
    def _copy(self, node):
        return _create.clone(node, [self._float_input(e) for e in node.inputs])

    def _float_input(self, e):
        mirror = self.mirror[id(e.node)]
        if id(e.node) in self.twins and mirror.op.name != "_contrib_dequantize" and \
                not self._avoids_dequantize(e.node, e.index):
            deq = self._dequantize(e.node, NodeEntry(mirror, e.index, e.version),
                                   _visible(mirror) - 2 + 2 * e.index)
            self.mirror[id(e.node)] = deq
            self.source[id(deq)] = e.node
            return NodeEntry(deq, 0, 0)
        q = self.quantized.get((id(e.node), e.index))
        if q is not None:
            return NodeEntry(q.inputs[0].node, e.index, e.version)
        return NodeEntry(mirror, e.index, e.version)

    @staticmethod
    def _dequantize(old, data, first):
        mirror = data.node
        return _op_node("_contrib_dequantize", old.name + "_dequantize",
                        [data, NodeEntry(mirror, first, 0), NodeEntry(mirror, first + 1, 0)])

    def _head(self, e):
        """A graph output; a quantized one is dequantized (reusing the dequantize a float
        reader got, where MXNet dequantizes that dequantize's outputs into a broken graph)."""
        mirror = self.mirror[id(e.node)]
        if id(e.node) not in self.twins or mirror.op.name == "_contrib_dequantize" or \
                self._avoids_dequantize(e.node, e.index):
            return NodeEntry(mirror, e.index, e.version)
        first = _visible(e.node) + 2 * e.index
        return NodeEntry(self._dequantize(e.node, NodeEntry(mirror, e.index, e.version), first),
                         0, 0)

    # -- calibration names ------------------------------------------------------------------
    def calib_nodes(self, outputs) -> list:
        """The float outputs whose ranges calibration must find (MXNet's ``calib_nodes``)."""
        names = []
        for node in IndexedGraph(outputs).nodes:
            if node.op is None:
                continue
            attrs = _create.node_dict(node)
            idx = _ask(node.op, "FNeedCalibrateInput", attrs,
                       default=_CALIB_INPUT.get(node.op.name))
            if idx is not None:
                names.extend(self._calib_input(node, i) for i in idx)
                continue
            for i in _ask(node.op, "FNeedCalibrateOutput", attrs, default=()):
                old = self.source.get(id(node), node)
                names.append(output_name(old, i))
        return names

    def _calib_input(self, node, i):
        e = node.inputs[i]
        if id(node) in self.source:
            return output_name(self.source[id(node)], e.index)
        if e.node.op is None:
            return e.node.name
        old = self.source.get(id(e.node))
        if old is None:
            raise ValueError(f"_quantize_symbol: cannot find the float node calibrating "
                             f"{node.name!r}")
        return output_name(old, e.index)


def offline(outputs, params) -> list:
    """``outputs`` with each ``_contrib_quantize_v2`` of a variable in ``params`` replaced by
    variables ``<name>``, ``<name>_min`` and ``<name>_max`` (its three outputs)."""
    made = {}
    for node in IndexedGraph(outputs).nodes:
        for i, e in enumerate(node.inputs):
            q = e.node
            if q.op is None or q.op.name != "_contrib_quantize_v2":
                continue
            src = q.inputs[0].node
            if src.op is None and src.name in params:
                key = (id(q), e.index)
                if key not in made:
                    made[key] = variable(q.name + ("", "_min", "_max")[e.index])
                node.inputs[i] = NodeEntry(made[key], 0, 0)
    return outputs


def quantize_graph(outputs, excluded_names, excluded_ops, offline_params, dtype, mode):
    """(new outputs, calibration names) of MXNet's QuantizeGraph pass over ``outputs``."""
    twins = mark(outputs, set(excluded_names), set(excluded_ops), mode)
    rewrite = _Rewrite(twins, dtype)
    new = rewrite.run(outputs)
    if offline_params:
        new = offline(new, set(offline_params))
    return new, rewrite.calib_nodes(new)
