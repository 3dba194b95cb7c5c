"""The ``Symbol`` class (``mx.sym.Symbol``): a list of output entries over the graph IR.

A symbol holds ``_outputs``, entries (node, output index, version) of ``graph.Node``
objects, the same IR autograd records and the executor runs. Every walk over the graph
goes through ``graph.IndexedGraph``, whose order is NNVM's, so argument lists, internals
and JSON node order are MXNet's. The class is its structure, attributes, composition,
inference and serialization (this file) plus two mixins: ``Arithmetic`` (``_arith.py``:
operators) and ``OpMethods`` (``_methods.py``: methods that are ops); the executor's
``BindMethods`` adds ``bind``, ``simple_bind`` and ``eval``.
"""

from __future__ import annotations

import os
import warnings

import numpy as np

from .._atomic_write import write_atomic
from .._runtime.base import MXNetError, NotImplementedForSymbol
from .._runtime.graph import infer as _infer
from ._bind import BindMethods
from .._runtime.graph import IndexedGraph, Node, NodeEntry
from ..util import is_np_shape
from . import _create, _json
from ._arith import Arithmetic
from ._methods import OpMethods

__all__ = ["Symbol"]

_REPLACED_HIDDEN = {f"__{k}__": k for k in _create.HIDDEN_KEYS}


class Symbol(Arithmetic, OpMethods, BindMethods):
    """A symbolic graph: one or more outputs of operators over variables."""

    __module__ = "mxnext.symbol.symbol"   # its public home, as MXNet's
    __slots__ = ("_outputs",)

    def __init__(self, outputs):
        self._outputs = list(outputs)

    # -- structure -------------------------------------------------------------------------
    def __len__(self):
        return len(self._outputs)

    def __iter__(self):
        return (Symbol([e]) for e in self._outputs)

    def __getitem__(self, index):
        """The output at ``index`` (an int, an output name, or a slice: a group)."""
        if isinstance(index, slice):
            return Group([self[i] for i in range(*index.indices(len(self)))])
        if isinstance(index, str):
            names = self.list_outputs()
            hits = [i for i, n in enumerate(names) if n == index]
            if not hits:
                raise ValueError(f"Symbol has no output named {index!r}; outputs: "
                                 f"{', '.join(names)}")
            if len(hits) > 1:
                raise ValueError(f"Symbol has {len(hits)} outputs named {index!r}")
            index = hits[0]
        if not isinstance(index, (int, np.integer)):
            raise TypeError(f"Symbol indices are output positions (int), names (str) or "
                            f"slices, not {type(index).__name__}")
        if not -len(self) <= index < len(self):
            raise IndexError(f"Symbol output index {index} out of range ({len(self)} outputs)")
        return Symbol([self._outputs[index]])

    @property
    def name(self):
        """The name of the node every output comes from; None for a group of several."""
        node = self._single_node()
        return None if node is None else node.name

    def _single_node(self):
        first = self._outputs[0].node if self._outputs else None
        for e in self._outputs:
            if e.node is not first:
                return None
        return first

    def __repr__(self):
        name = self.name
        if name is None:
            return f"<Symbol group [{', '.join(s.name for s in self)}]>"
        return f"<Symbol {name}>"

    # -- attributes ------------------------------------------------------------------------
    def attr(self, key):
        """Attribute ``key`` of a non-grouped symbol (None when absent). ``name``,
        ``op_name`` and ``_value_index`` are MXNet's computed keys; ``lr_mult`` etc. also
        find ``__lr_mult__``."""
        node = self._single_node()
        if node is None:
            return None
        if key == "name":
            return node.name
        if key == "op_name":
            return "null" if node.op is None else node.op.name
        if key == "_value_index":
            return ", ".join(str(e.index) for e in self._outputs)
        d = _create.node_dict(node)
        if key in d:
            return d[key]
        return d.get(f"__{key}__") if key in _create.HIDDEN_KEYS else None

    def list_attr(self, recursive=False):
        """The attributes of the (first) output's node, parameters included."""
        if recursive:
            raise DeprecationWarning("Symbol.list_attr(recursive=True) is deprecated; use "
                                     "attr_dict() instead")
        return _with_plain_hidden(_create.node_dict(self._outputs[0].node))

    def attr_dict(self):
        """``{node name: its attributes}`` for every node with attributes."""
        out = {}
        for node in IndexedGraph(self._outputs).nodes:
            d = _create.node_dict(node)
            if d:
                out.setdefault(node.name, {}).update(_with_plain_hidden(d))
        return out

    def _set_attr(self, **kwargs):
        """Set string attributes on a non-grouped symbol's node (an op's parameters too)."""
        node = self._single_node()
        if node is None:
            raise MXNetError("Symbol._set_attr works only on a non-grouped symbol")
        for key, value in kwargs.items():
            if not isinstance(value, str):
                raise ValueError(f"Symbol._set_attr: attribute {key!r} must be a string, got "
                                 f"{type(value).__name__} {value!r}")
        _create.set_node_attrs(node, kwargs)

    # -- the graph -------------------------------------------------------------------------
    def get_internals(self):
        """A group of every node's outputs (variables included), in graph order."""
        entries = []
        for node in IndexedGraph(self._outputs).nodes:
            if node.op is None:
                entries.append(NodeEntry(node, 0, _create.var_version(node)))
            else:
                entries += [NodeEntry(node, i, 0)
                            for i in range(node.op.num_visible_outputs(node.params))]
        return Symbol(entries)

    def get_children(self):
        """A group of the inputs of the output nodes; None when they have none."""
        seen, entries = set(), []
        for e in self._outputs:
            if id(e.node) not in seen:
                seen.add(id(e.node))
                entries += e.node.inputs
        return Symbol(entries) if entries else None

    def list_arguments(self):
        """Names of the variables that are arguments (not auxiliary states), in order."""
        g = IndexedGraph(self._outputs)
        return [g.nodes[i].name for i in g.arg_ids]

    def list_auxiliary_states(self):
        """Names of the variables ops mutate (BatchNorm's moving statistics), in order."""
        g = IndexedGraph(self._outputs)
        return [g.nodes[i].name for i in g.aux_ids]

    def list_inputs(self):
        """Names of every variable: arguments and auxiliary states, in graph order."""
        g = IndexedGraph(self._outputs)
        return [g.nodes[i].name for i in g.input_ids]

    def list_outputs(self):
        """Output names: a variable's name, else ``<node>_<output name>`` (``fc1_output``)."""
        names = []
        for e in self._outputs:
            node = e.node
            if node.op is None:
                names.append(node.name)
                continue
            out = node.op.list_output_names(node.params)[e.index]
            names.append(f"{node.name}_{out}" if node.name else out)
        return names

    # -- composition -----------------------------------------------------------------------
    def __call__(self, *args, **kwargs):
        """A copy with variables replaced by symbols: ``net(data=other)``."""
        s = self.__copy__()
        s._compose(*args, **kwargs)
        return s

    def _compose(self, *args, name=None, **kwargs):
        """Replace, in place, the variables named in ``kwargs`` by those symbols (and rename
        the output node to ``name``). Positional inputs only compose an op with no inputs."""
        if args and kwargs:
            raise TypeError("compose takes input symbols either positionally or by keyword, "
                            "not both")
        for key, value in [*enumerate(args), *kwargs.items()]:
            if not isinstance(value, Symbol):
                raise TypeError(f"compose: input {key!r} must be a Symbol, got "
                                f"{type(value).__name__}")
        node = self._single_node()
        if node is not None and node.op is not None and not node.inputs \
                and not node._control_deps:
            if name:
                node.name = name
            _create.compose(node, list(args), kwargs, name or node.name)
            return
        if args:
            raise MXNetError("compose: a composed symbol takes its new inputs by keyword "
                             "(variable name=symbol), not positionally")
        _replace_variables(self, kwargs)
        if name:
            self._outputs[0].node.name = name

    def _gen_atomic_symbol(self):
        """The op of this symbol's output node, with its parameters and attributes but no
        inputs (MXNet's atomic symbol: compose it to use it)."""
        node = self._single_node()
        if node is None or node.op is None:
            raise MXNetError("_gen_atomic_symbol: the symbol must be the outputs of one "
                             "operator")
        atom = Node(node.op, node.params, (), node.name, node._attrs)
        return Symbol([NodeEntry(atom, i, 0)
                       for i in range(node.op.num_visible_outputs(node.params))])

    def __copy__(self):
        return Symbol(_copy_graph(self._outputs))

    def __deepcopy__(self, memo):
        return self.__copy__()

    # -- inference -------------------------------------------------------------------------
    def infer_shape(self, *args, **kwargs):
        """(argument shapes, output shapes, auxiliary shapes) given some argument shapes,
        positionally (``list_arguments()`` order, None for unknown) or by name; (None, None,
        None) with a warning when they do not decide every shape."""
        return self._infer_all("shape", args, kwargs)

    def infer_shape_partial(self, *args, **kwargs):
        """As ``infer_shape``, but returns what is known (unknown: ``()``, or None under
        ``np_shape``)."""
        return self._infer("shape", args, kwargs)[0]

    def infer_type(self, *args, **kwargs):
        """(argument dtypes, output dtypes, auxiliary dtypes) as numpy types given some
        argument dtypes; (None, None, None) with a warning when they do not decide all."""
        return self._infer_all("type", args, kwargs)

    def infer_type_partial(self, *args, **kwargs):
        """As ``infer_type``, but returns what is known (None where unknown)."""
        return self._infer("type", args, kwargs)[0]

    def _infer_all(self, what, args, kwargs):
        res, complete = self._infer(what, args, kwargs)
        if complete:
            return res
        _warn_unknown(what, self, res, stacklevel=4)
        return None, None, None

    def _infer(self, what, args, kwargs):
        if args and kwargs:
            raise ValueError(f"infer_{what}: give known {what}s positionally or by name, not "
                             f"both")
        check = _check_shape if what == "shape" else _check_dtype
        for key, value in [*enumerate(args), *kwargs.items()]:
            if value is not None:
                check(key, value)
        g = IndexedGraph(self._outputs)
        known = (_infer.match_positional(g, args, f"infer_{what}") if args
                 else _infer.match_names(g, kwargs, f"infer_{what}"))
        if what == "shape":
            values = _infer.infer_shapes(g, known)
            complete = all(map(_infer.shape_known, values))
            empty = None if is_np_shape() else ()
            values = [empty if v is None else v for v in values]
        else:
            values = _infer.infer_types(g, known)
            complete = all(v is not None for v in values)
            values = [None if v is None else v.type for v in values]
        return _infer.split(g, values), complete

    # -- serialization ---------------------------------------------------------------------
    def tojson(self, remove_amp_cast=True):
        """The graph in MXNet's JSON format (what ``mx.sym.load_json`` reads)."""
        outputs = _json.without_amp_casts(self._outputs) if remove_amp_cast else self._outputs
        return _json.dumps(outputs)

    def save(self, fname, remove_amp_cast=True):
        """Write ``tojson()`` to ``fname`` (atomically)."""
        if not isinstance(fname, (str, os.PathLike)):
            raise TypeError(f"Symbol.save: fname must be a path, got {type(fname).__name__}")
        write_atomic(fname, self.tojson(remove_amp_cast))

    def get_backend_symbol(self, backend):
        """MXNet's subgraph partitioning by ``backend`` (MKLDNN, MKLDNN_QUANTIZE, ...): mxnext
        has no partitioning backends, so the name is refused with an error naming it."""
        raise MXNetError(f"get_backend_symbol: backend={backend!r} is not supported; mxnext "
                         f"has no subgraph partitioning backends")

    def optimize_for(self, backend, *args, **kwargs):
        """As ``get_backend_symbol``: every partitioning ``backend`` is refused."""
        raise MXNetError(f"optimize_for: backend={backend!r} is not supported; mxnext has no "
                         f"subgraph partitioning backends")

    def __getstate__(self):
        return {"handle": self.tojson()}

    def __setstate__(self, state):
        self._outputs = _json.loads(state["handle"]) if state.get("handle") else []

    # -- NDArray-only methods --------------------------------------------------------------
    def as_nd_ndarray(self):
        return self

    def __bool__(self):
        raise NotImplementedForSymbol(self.__bool__, "bool")

    def wait_to_read(self):
        raise NotImplementedForSymbol(self.wait_to_read, None)

    def asnumpy(self):
        raise NotImplementedForSymbol(self.asnumpy, None)

    def asscalar(self):
        raise NotImplementedForSymbol(self.asscalar, None)

    def copy(self):
        raise NotImplementedForSymbol(self.copy, None)

    def as_in_context(self, *args):
        raise NotImplementedForSymbol(self.as_in_context, None)

    def detach(self):
        raise NotImplementedForSymbol(self.detach, None)

    def backward(self, *args, **kwargs):
        raise NotImplementedForSymbol(self.backward, None)


def Group(symbols):
    """One symbol whose outputs are those of ``symbols``, in order."""
    if not symbols or any(not isinstance(s, Symbol) for s in symbols):
        raise TypeError("Group expects a non-empty list of Symbols")
    return Symbol([e for s in symbols for e in s._outputs])


_create.use_symbol_class(Symbol)


# -- helpers -------------------------------------------------------------------------------
def _with_plain_hidden(d):
    """``d`` plus ``lr_mult`` for ``__lr_mult__`` etc., as MXNet lists them."""
    extra = {_REPLACED_HIDDEN[k]: v for k, v in d.items() if k in _REPLACED_HIDDEN}
    if extra:
        d.update(extra)
    return d


def _copy_graph(outputs):
    """New nodes for every node ``outputs`` depend on (variables too), wired alike."""
    new = {}
    for node in IndexedGraph(outputs).nodes:
        copy = _create.clone(node, [NodeEntry(new[id(e.node)], e.index, e.version)
                                    for e in node.inputs])
        if node._control_deps:
            copy.control_deps.extend(new[id(d)] for d in node._control_deps)
        new[id(node)] = copy
    return [NodeEntry(new[id(e.node)], e.index, e.version) for e in outputs]


def _replace_variables(sym, kwargs):
    """NNVM's general composition: inputs reading a variable named in ``kwargs`` read that
    symbol's output instead (outputs too); an unknown name is an error."""
    nodes = IndexedGraph(sym._outputs).nodes
    names = {n.name for n in nodes if n.op is None}
    for key, value in kwargs.items():
        if key not in names:
            candidates = "".join(f"\n\t[{i}]{n.name}" for i, n in
                                 enumerate(n for n in nodes if n.op is None))
            raise MXNetError(f"compose: keyword argument name {key!r} not found; candidate "
                             f"arguments:{candidates}")
        if len(value._outputs) != 1:
            raise MXNetError(f"compose: input {key!r} is a group of {len(value._outputs)} "
                             f"outputs; a single output is required")
    with_new = {k: v._outputs[0] for k, v in kwargs.items()}
    for node in nodes:
        if node.op is None:
            continue
        hit = False
        for i, e in enumerate(node.inputs):
            if e.node.op is None and e.node.name in with_new:
                node.inputs[i], hit = with_new[e.node.name], True
        if hit:
            _create.update_versions(node)
    sym._outputs = [with_new.get(e.node.name, e) if e.node.op is None else e
                    for e in sym._outputs]


def _check_shape(key, value):
    if not isinstance(value, tuple):
        raise TypeError(f"infer_shape: shapes must be tuples, but {key!r} is "
                        f"{type(value).__name__} {value!r}")


def _check_dtype(key, value):
    from .._runtime.base import DTYPE_TO_FLAG, as_dtype
    try:
        ok = as_dtype(value) in DTYPE_TO_FLAG
    except TypeError:
        ok = False
    if not ok:
        known = ", ".join(d.name for d in DTYPE_TO_FLAG)
        raise TypeError(f"infer_type: {key!r} is {value!r}, expected one of {known}")


def _warn_unknown(what, sym, res, stacklevel):
    """MXNet's warning when inference leaves something unknown: the arguments to give
    (or, when every argument is known, the outputs nothing decides)."""
    known = _infer.shape_known if what == "shape" else (lambda v: v is not None)
    args, outs, _ = res
    unknown = [f"{n}: {v}" for n, v in zip(sym.list_arguments(), args) if not known(v)] or \
        [f"{n}: {v}" for n, v in zip(sym.list_outputs(), outs) if not known(v)] or \
        ["(an internal entry)"]
    more = ["..."] if len(unknown) > 10 else []
    note = " (a 0 in a shape is an unknown dimension)" if what == "shape" else ""
    warnings.warn(f"Cannot decide the {what} of these arguments{note}; give them:\n\t"
                  + "\n\t".join(unknown[:10] + more), stacklevel=stacklevel)
