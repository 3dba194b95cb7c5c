"""The graph rewrite behind ``amp.convert_symbol`` (MXNet's ``ReducePrecision`` pass and
``MXReducePrecisionSymbol``): a copy of the graph with ``amp_cast`` / ``amp_multicast``
nodes in front of the ops that run in low precision, in float32 or in the widest type of
their inputs, then ``__dtype__`` attributes on the model's parameters from type inference.

Nodes are visited in topological order; ``lp`` and ``fp32`` remember which (node, output)
entries are known to be in the target type or in float32, so a cast is made once per
entry and shared by every reader.
"""

from __future__ import annotations

import numpy as np

from ..._runtime.base import DTYPE_TO_FLAG, MXNetError, as_dtype
from ..._runtime.graph import IndexedGraph, NodeEntry, make_node
from ..._runtime.graph.infer import infer_types
from ...symbol import _create

__all__ = ["reduce_precision"]

_FP32 = np.dtype(np.float32)


class _Pass:
    def __init__(self, target, target_ops, fp32_ops, widest_ops, conditional, excluded,
                 data_names, cast_optional_params):
        self.target, self.target_name = target, target.name
        self.target_ops, self.fp32_ops, self.widest_ops = target_ops, fp32_ops, widest_ops
        self.conditional, self.excluded = conditional, excluded
        self.data_names, self.cast_optional = data_names, cast_optional_params
        self.mirror = {}            # old node -> new node
        self.lp, self.fp32 = {}, {}  # (old node, index) -> new entry in that type

    def mirrored(self, e) -> NodeEntry:
        return NodeEntry(self.mirror[e.node], e.index, e.version)

    def suffix(self, e) -> str:
        if e.node.op is None:
            return ""
        names = e.node.op.get_attr("FListOutputNames")
        return f"_{names(e.node.params)[e.index]}" if names is not None else f"_{e.index}"

    def cast(self, e, dtype_name, table) -> NodeEntry:
        """``e`` cast to ``dtype_name`` (recorded in ``table``, shared by later readers)."""
        name = f"{e.node.name}{self.suffix(e)}_amp_cast_{dtype_name}"
        node = make_node("amp_cast", [self.mirrored(e)], {"dtype": dtype_name}, name)
        table[(e.node, e.index)] = out = NodeEntry(node, 0, e.version)
        return out

    def record_outputs(self, node, new, types):
        for i, t in enumerate(types):
            if t == self.target:
                self.lp[(node, i)] = NodeEntry(new, i, 0)
            elif t == _FP32:
                self.fp32[(node, i)] = NodeEntry(new, i, 0)

    def infer_outputs(self, node, first_type):
        """The op's input and output types when its input 0 has ``first_type`` (None where
        the op cannot tell); MXNetError when its type rule refuses."""
        ins = [None] * len(node.inputs)
        outs = [None] * node.num_outputs()
        rule = node.op.get_attr("FInferType")
        if rule is None:
            return ins, outs
        ins[0] = first_type
        ins, outs = rule(node.params, ins, outs)
        return ([None if t is None else np.dtype(t) for t in ins],
                [None if t is None else np.dtype(t) for t in outs])

    def is_conditional_fp32(self, node) -> bool:
        conds = self.conditional.get(node.op.name)
        if not conds or node.name in self.excluded:
            return False
        d = _create.node_dict(node)
        return any(d.get(param) in values for param, values in conds.items())

    # -- the four kinds of node (and the rest) ---------------------------------------------
    def visit(self, node):
        new = _create.clone(node, [])
        op = node.op
        kind = None if op is None else op.name
        mutable = set() if op is None else set(op.mutate_inputs(node.params))
        if (op is not None and kind in self.fp32_ops) or node.name in self.excluded:
            self.to_fp32(node, new, mutable=())
        elif op is not None and kind in self.target_ops:
            self.to_target(node, new, mutable)
        elif op is not None and kind in self.widest_ops:
            self.to_widest(node, new, mutable)
        elif op is not None and self.is_conditional_fp32(node):
            self.to_fp32(node, new, mutable)
        else:
            self.keep(node, new)
        self.mirror[node] = new

    def to_fp32(self, node, new, mutable):
        self.record_outputs(node, new, [_FP32] * node.num_outputs())
        for i, e in enumerate(node.inputs):
            key = (e.node, e.index)
            if key in self.fp32:
                new.inputs.append(self.fp32[key])
            elif e.node.op is None or i in mutable:
                new.inputs.append(self.mirrored(e))     # variables are float32 already
            else:
                new.inputs.append(self.cast(e, "float32", self.fp32))

    def to_target(self, node, new, mutable):
        ins, outs = self.infer_outputs(node, self.target)
        self.record_outputs(node, new, outs)
        for i, e in enumerate(node.inputs):
            key = (e.node, e.index)
            is_param = e.node.op is None and e.node.name not in self.data_names
            if key in self.lp:
                new.inputs.append(self.lp[key])
            elif ((self.cast_optional and is_param) or i in mutable
                  or ins[i] not in (None, self.target)):
                new.inputs.append(self.mirrored(e))
                if self.cast_optional and is_param:
                    self.lp[key] = self.mirrored(e)
            else:
                new.inputs.append(self.cast(e, self.target_name, self.lp))

    def to_widest(self, node, new, mutable):
        if not node.inputs:
            raise MXNetError(f"amp.convert_symbol: node {node.name!r} (op {node.op.name!r}) "
                             f"has no inputs; the symbol was built wrongly")
        if mutable:
            raise MXNetError(f"amp.convert_symbol: node {node.name!r} (op {node.op.name!r}) "
                             f"mutates inputs {sorted(mutable)}; a widest-type op cannot")
        keys = [(e.node, e.index) for e in node.inputs]
        if not all(k in self.lp or k in self.fp32 for k in keys):
            first = node.inputs[0]
            multi = make_node("amp_multicast", [self.mirrored(e) for e in node.inputs],
                              {"num_outputs": len(keys)},
                              f"{first.node.name}{self.suffix(first)}_amp_multicast")
            new.inputs.extend(NodeEntry(multi, i, e.version) for i, e in enumerate(node.inputs))
            return
        wide = _FP32 if any(k in self.fp32 for k in keys) else self.target
        self.record_outputs(node, new, [wide] * node.num_outputs())
        table, name = (self.fp32, "float32") if wide == _FP32 else (self.lp, self.target_name)
        for e, k in zip(node.inputs, keys):
            new.inputs.append(table[k] if k in table else self.cast(e, name, table))

    def keep(self, node, new):
        if node.inputs:
            first = (node.inputs[0].node, node.inputs[0].index)
            known = self.target if first in self.lp else _FP32 if first in self.fp32 else None
            if known is not None:
                try:
                    self.record_outputs(node, new, self.infer_outputs(node, known)[1])
                except MXNetError:
                    pass                     # the op's rule refuses: its output types stay unknown
        new.inputs.extend(self.mirrored(e) for e in node.inputs)

    def outputs(self, heads):
        out = []
        for e in heads:
            key = (e.node, e.index)
            out.append(self.fp32[key] if key in self.fp32 else self.cast(e, "float32", self.fp32))
        return out


def reduce_precision(heads, target, target_ops, fp32_ops, widest_ops, conditional, excluded,
                     data_names, cast_optional_params):
    """The output entries of the rewritten graph of ``heads``; ``conditional`` is
    ``{op: {param: [values]}}``. Its variables get ``__dtype__`` attributes as MXNet sets
    them: every model parameter (an input not in ``data_names``) its inferred type, float32
    where inference cannot tell."""
    p = _Pass(np.dtype(target), set(target_ops), set(fp32_ops), set(widest_ops), conditional,
              set(excluded), set(data_names), cast_optional_params)
    for node in IndexedGraph(heads).nodes:
        p.visit(node)
    out = p.outputs(heads)
    _set_param_dtypes(out, set(data_names), np.dtype(target) if cast_optional_params else None)
    return out


def _set_param_dtypes(heads, data_names, optional_target):
    """As MXNet: types are inferred from the data (float32) alone, not from ``__dtype__``
    attributes; with ``cast_optional_params`` (``optional_target``: the target dtype) the
    cast nodes then decide the unknown ones (``_infer_unknown``). The model parameters get
    ``__dtype__`` (float32 where still unknown); with none, only the inputs that had one."""
    g = IndexedGraph(heads)
    known = {g.entry_id(nid): _FP32 for nid in g.input_ids
             if g.nodes[nid].name in data_names}
    types = infer_types(g, known, var_dtypes=False)
    if optional_target is not None:
        types = _infer_unknown(g, types, optional_target)
    params = [nid for nid in g.input_ids if g.nodes[nid].name not in data_names]
    for nid in params or [i for i in g.input_ids if "__dtype__" in g.nodes[i].attrs]:
        t = types[g.entry_id(nid)]
        g.nodes[nid].attrs["__dtype__"] = str(DTYPE_TO_FLAG[t] if t is not None else 0)


def _infer_unknown(g, types, target):
    """MXNet's ``AMPInferUnknown``: a variable of unknown type read by an ``amp_cast`` takes
    its dtype, and the variables read by an ``amp_multicast`` whose inputs are all variables
    take ``target``; a variable given two different dtypes this way keeps its inferred type."""
    result, given = list(types), {}

    def give(e, dtype):
        eid = g.entry_id(g.node_id(e.node), e.index)
        if e.node.name not in given:
            if result[eid] is None:
                given[e.node.name] = result[eid] = dtype
        elif given[e.node.name] != dtype:
            result[eid] = types[eid]

    for node in g.nodes:
        name = node.op.name if node.op is not None else None
        if name == "amp_cast":
            for e in (e for e in node.inputs if e.node.op is None):
                give(e, as_dtype(node.params.dtype))
        elif name == "amp_multicast" and all(e.node.op is None for e in node.inputs):
            for e in node.inputs:
                give(e, target)
    return result
