"""Shape and dtype inference over an ``IndexedGraph`` (MXNet's ``InferShape``/``InferType``).

Values are per entry (``graph.entry_id``): a shape is a tuple of ints or None (unknown), a
dtype a ``numpy.dtype`` or None. The caller's known values come first; a variable still
unknown takes its ``__shape__`` / ``__dtype__`` attribute. Then every op's ``FInferShape``
/ ``FInferType`` runs over the nodes, forwards and backwards in turn, until a sweep learns
nothing new, so ops fill in what they can in both directions (FullyConnected's weight from
the data and ``num_hidden``, an elementwise input from its output).

Outside ``np_shape`` semantics a dimension of 0 is unknown and so is the shape ``()``, as
in MXNet's legacy shapes: ``(0, 20)`` is a shape whose first dimension is not known yet
(under ``np_shape`` the unknown dimension is -1). Such partial shapes are passed to the
ops and merged dimension by dimension.

An op's rule that raises, or a value it infers that contradicts a known one, is a
``ShapeError`` / ``TypeInferError`` naming the node, its op, the input or output and both
values. With ``partial=False`` a value left unknown is an error too, naming the inputs to
give (or the outputs nothing decides).
"""

from __future__ import annotations

import weakref

import numpy as np

from ..base import FLAG_TO_DTYPE, MXNetError, as_dtype, ShapeError, TypeInferError, is_np_shape

__all__ = ["infer_shapes", "infer_types", "match_names", "match_positional", "split",
           "shape_known", "parse_shape", "merge_dims", "merge_dtype"]

_steps_cache: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


# -- public entry points ---------------------------------------------------------------------
def infer_shapes(graph, known=None, *, partial=True) -> list:
    """Every entry's shape (tuple, or None when unknown) given ``known`` shapes (a list per
    entry, or a dict ``{entry_id: shape}``)."""
    unknown = -1 if is_np_shape() else 0
    values = _start(graph, known, lambda s: _shape_value(s, unknown))
    for nid, eid, node in _steps(graph)[0]:
        if values[eid] is None and node._attrs:
            text = node._attrs.get("__shape__")
            if text is not None:
                values[eid] = _shape_value(parse_shape(text, node.name), unknown)
    _fixpoint(graph, values, "FInferShape", _ShapeRules(unknown))
    if not partial:
        _require_known(graph, values, "shape", ShapeError,
                       lambda s: s is not None and unknown not in s)
    return values


def infer_types(graph, known=None, *, partial=True, var_dtypes=True) -> list:
    """Every entry's dtype (``numpy.dtype``, or None when unknown) given ``known`` dtypes (a
    list per entry, or a dict ``{entry_id: dtype}``) and, with ``var_dtypes``, the variables'
    ``__dtype__`` attributes."""
    values = _start(graph, known, _dtype_value)
    for nid, eid, node in _steps(graph)[0] if var_dtypes else ():
        if values[eid] is None and node._attrs:
            text = node._attrs.get("__dtype__")
            if text is not None:
                values[eid] = _dtype_flag(text, node.name)
    _fixpoint(graph, values, "FInferType", _TypeRules())
    if not partial:
        _require_known(graph, values, "dtype", TypeInferError, lambda t: t is not None)
    return values


def match_names(graph, values: dict, what: str = "infer_shape") -> dict:
    """``{entry_id: value}`` for ``values`` given by variable name (arguments and auxiliary
    states); a name no variable has is an ``MXNetError`` listing the candidates."""
    by_name = {}
    for nid in graph.input_ids:
        by_name.setdefault(graph.nodes[nid].name, []).append(graph.entry_id(nid))
    out = {}
    for name, value in values.items():
        eids = by_name.get(name)
        if eids is None:
            candidates = "".join(f"\n\t[{i}]{graph.nodes[nid].name}"
                                 for i, nid in enumerate(graph.input_ids))
            raise MXNetError(f"{what}: keyword argument name {name!r} not found; candidate "
                             f"arguments:{candidates}")
        for eid in eids:
            out[eid] = value
    return out


def match_positional(graph, values, what: str = "infer_shape") -> dict:
    """``{entry_id: value}`` for ``values`` given in ``list_arguments()`` order (None: not
    given)."""
    arg_ids = graph.arg_ids
    if len(values) > len(arg_ids):
        raise MXNetError(f"{what}: {len(values)} values given but the symbol has "
                         f"{len(arg_ids)} arguments")
    return {graph.entry_id(nid): v for nid, v in zip(arg_ids, values) if v is not None}


def split(graph, values) -> tuple[list, list, list]:
    """Per-entry ``values`` as (arguments, outputs, auxiliary states), each in MXNet's order."""
    return ([values[graph.entry_id(nid)] for nid in graph.arg_ids],
            [values[eid] for eid in graph.outputs],
            [values[graph.entry_id(nid)] for nid in graph.aux_ids])


def shape_known(shape) -> bool:
    """Whether ``shape`` is fully known under the current shape semantics."""
    if shape is None:
        return False
    return -1 not in shape if is_np_shape() else (len(shape) > 0 and 0 not in shape)


def parse_shape(text: str, where: str = "?") -> tuple:
    """A ``__shape__`` attribute (``"(2, 3)"``, ``"[2,3]"``, ``"(2,)"``, ``"5"``) as a tuple."""
    body = text.strip()
    if body in ("None", ""):
        return None
    if body[:1] in "([" and body[-1:] in ")]":
        body = body[1:-1]
    try:
        return tuple(int(p) for p in body.split(",") if p.strip() and p.strip() != "None")
    except ValueError:
        raise ShapeError(f"variable {where!r}: attribute __shape__={text!r} is not a shape "
                         f"like (2, 3)") from None


# -- the fixpoint ----------------------------------------------------------------------------
def _steps(graph):
    """(variables [(nid, eid, node)], ops [(nid, node, in_eids, out_eids, mirror)]), per
    graph; ``mirror``: see ``_mirror``."""
    steps = _steps_cache.get(graph)
    if steps is None:
        variables, ops = [], []
        for nid, node in enumerate(graph.nodes):
            start = graph.entry_start[nid]
            if node.op is None:
                variables.append((nid, start, node))
            else:
                ops.append((nid, node, graph.input_entries(nid),
                            list(range(start, start + node.num_outputs())),
                            _mirror(graph, nid, node)))
        steps = _steps_cache[graph] = (variables, ops)
    return steps


def _mirror(graph, nid, node):
    """For a backward op (``TIsBackward``, after its forward node by a control dependency):
    (output entry, forward input entry) pairs of the input gradients it makes, which have
    their forward input's shape and dtype; MXNet finds them by asking the forward op's
    ``FGradient`` which outputs of this op it returns. Used where the op has no rule."""
    deps = node._control_deps
    if not deps or not node.op.get_attr("TIsBackward"):
        return ()
    fwd = deps[0]
    rule = fwd.op.get_attr("FGradient") if fwd.op is not None else None
    if rule is None or fwd not in graph:
        return ()
    from . import Node, NodeEntry
    heads = [NodeEntry(Node(None, None, ()), i, 0) for i in range(fwd.num_outputs())]
    fwd_id = graph.node_id(fwd)
    fwd_ins = graph.input_entries(fwd_id)
    return [(graph.entry_id(nid, g.index), fwd_ins[i]) for i, g in enumerate(rule(fwd, heads))
            if g is not None and g.node.op is node.op]


def _start(graph, known, convert):
    values = [None] * graph.num_entries
    if known is None:
        return values
    items = known.items() if isinstance(known, dict) else enumerate(known)
    for eid, v in items:
        if v is not None:
            values[eid] = convert(v)
    return values


def _fixpoint(graph, values, key, rules):
    """Run ``key`` of every op node, forwards and backwards in turn, until a sweep changes
    nothing. A node whose entries are all known after its rule ran is not run again."""
    ops = _steps(graph)[1]
    finished = [False] * len(ops)
    known = rules.known
    forward, changed = True, True
    while changed:
        changed = False
        order = range(len(ops)) if forward else range(len(ops) - 1, -1, -1)
        for k in order:
            if finished[k]:
                continue
            nid, node, in_eids, out_eids, mirror = ops[k]
            fn = node.op.get_attr(key)
            if fn is None:                 # nothing to learn from this op but its mirror
                for out, src in mirror:
                    if values[out] is None and values[src] is not None:
                        values[out], changed = values[src], True
                finished[k] = all(known(values[out]) for out, _ in mirror)
                continue
            ins = [values[e] for e in in_eids]
            outs = [values[e] for e in out_eids]
            try:
                new_ins, new_outs = fn(node.params, ins, outs)
            except MXNetError as exc:
                msg = str(exc).removeprefix(f"Operator {node.op.name!r}: ")
                raise rules.error(f"Error in operator {node.name!r} ({node.op.name}): {msg}"
                                  f"{_inputs_note(graph, node, in_eids, values, rules)}") from exc
            done = True
            for kind, eids, news in (("input", in_eids, new_ins), ("output", out_eids, new_outs)):
                for pos, (e, new) in enumerate(zip(eids, news)):
                    old = values[e]      # (np.dtype("float64") == None holds: test None first)
                    if new is not None and (old is None or new != old):
                        new = _merged(graph, node, kind, pos, e, old, new, rules)
                        if old is None or new != old:
                            values[e], changed = new, True
                    done = done and known(values[e])
            finished[k] = done
        forward = not forward


def _merged(graph, node, kind, pos, eid, old, new, rules):
    merged = rules.merge(old, new)
    if merged is None:
        names = (node.op.list_input_names(node.params) if kind == "input"
                 else node.op.list_output_names(node.params))
        arg = names[pos] if pos < len(names) else str(pos)
        raise rules.error(
            f"Error in operator {node.name!r} ({node.op.name}): {kind} {arg!r} "
            f"({_entry_name(graph, eid)}) has {rules.what} {rules.fmt(old)}, but the operator "
            f"infers {rules.fmt(new)}")
    return merged


def _inputs_note(graph, node, in_eids, values, rules):
    names = node.op.list_input_names(node.params)
    parts = [f"{names[i] if i < len(names) else i} = {_entry_name(graph, e)} "
             f"{rules.fmt(values[e])}" for i, e in enumerate(in_eids)]
    return f"\n  inputs: {', '.join(parts)}" if parts else ""


def _entry_name(graph, eid) -> str:
    nid = graph.entry_node(eid)
    node = graph.nodes[nid]
    if node.op is None:
        return repr(node.name)
    names = node.op.list_output_names(node.params)
    index = eid - graph.entry_start[nid]
    return repr(f"{node.name}_{names[index]}" if node.name else names[index])


def _require_known(graph, values, what, error, known):
    missing = [graph.nodes[nid].name for nid in graph.input_ids
               if not known(values[graph.entry_id(nid)])]
    if missing:
        raise error(f"Cannot decide the {what}s of these inputs; give them: "
                    f"{', '.join(missing[:10])}{', ...' if len(missing) > 10 else ''}")
    outs = [_entry_name(graph, e) for e, v in enumerate(values) if not known(v)]
    if outs:
        raise error(f"Cannot decide the {what}s of these outputs (no operator infers them): "
                    f"{', '.join(outs[:10])}{', ...' if len(outs) > 10 else ''}")


# -- what shapes and dtypes differ in --------------------------------------------------------
def merge_dims(old, new, unknown):
    """Shape ``new`` merged into ``old`` (None: not known at all) dimension by dimension,
    ``unknown`` being the unknown dimension's value; None when they conflict."""
    new = tuple(map(int, new))
    if old is None:
        return new
    if len(old) != len(new):
        return None
    out = []
    for a, b in zip(old, new):
        if a != b and a != unknown and b != unknown:
            return None
        out.append(b if a == unknown else a)
    return tuple(out)


def merge_dtype(old, new):
    """Dtype ``new`` merged into ``old`` (None: unknown); None when they differ."""
    new = np.dtype(new)
    return new if old is None or old == new else None


class _ShapeRules:
    what, error = "shape", ShapeError

    def __init__(self, unknown):
        self.unknown = unknown

    def known(self, s):
        return s is not None and self.unknown not in s

    def merge(self, old, new):
        return merge_dims(old, new, self.unknown)

    @staticmethod
    def fmt(s):
        return "unknown" if s is None else str(s)


class _TypeRules:
    what, error = "dtype", TypeInferError

    @staticmethod
    def known(t):
        return t is not None

    merge = staticmethod(merge_dtype)

    @staticmethod
    def fmt(t):
        return "unknown" if t is None else np.dtype(t).name


def _shape_value(shape, unknown):
    """A caller's shape as the pass holds it: None when nothing is known."""
    if shape is None:
        return None
    shape = tuple(int(d) for d in shape)
    if unknown == 0 and not shape:         # legacy semantics: () is an unknown shape
        return None
    return shape


def _dtype_value(dtype):
    return None if dtype is None else as_dtype(dtype)


def _dtype_flag(text, where):
    try:
        return FLAG_TO_DTYPE[int(text)]
    except (ValueError, KeyError):
        known = ", ".join(f"{f}={d.name}" for f, d in FLAG_TO_DTYPE.items())
        raise TypeInferError(f"variable {where!r}: attribute __dtype__={text!r} is not a type "
                             f"flag mxnext knows ({known})") from None
