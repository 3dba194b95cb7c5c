"""Making graph nodes for ``mx.sym``: op nodes with their names, attributes and inputs
(NNVM's ``CreateFunctor`` + ``Compose``), variables, and the generated ``mx.sym.<op>``
functions.

An op symbol is named by the current ``NameManager`` from a hint, the lowercased name of
the function called. Its attributes are the current ``AttrScope``'s and ``attr=``'s; keys
MXNet hides (``lr_mult``, ``ctx_group`` ...) become ``__lr_mult__`` ... Inputs not given
become new variables named ``<name>_<input name>`` (``fc1_weight``) carrying a copy of the
op's attributes, as MXNet's do. A variable an op mutates (``FMutateInputs``: BatchNorm's
moving statistics) gets its version counter bumped, which MXNet's JSON records; an op's
``FSetInputVarAttrOnCompose`` rule may set attributes on its input variables (``__init__``).

This module sits below the ``Symbol`` class, which tells it its class (``use_symbol_class``).
"""

from __future__ import annotations

import weakref

from .. import attribute, name as _name
from .._runtime import registry as _registry
from .._runtime.opfunc import SYMBOL, make_op_function
from .._runtime.base import MXNetError
from .._runtime.graph import Node, NodeEntry, variable

__all__ = ["HIDDEN_KEYS", "apply", "create", "make_variable", "node_dict", "spell",
           "set_node_attrs", "var_version", "clone", "compose", "update_versions", "op_function",
           "op_attribute", "forget", "use_symbol_class"]

HIDDEN_KEYS = ("ctx_group", "lr_mult", "wd_mult", "force_mirroring", "mirror_stage")
"""Attribute keys MXNet stores as ``__key__`` (kHiddenKeys)."""

_Symbol = None                                 # the Symbol class (use_symbol_class)
_versions: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # variable -> version
_spelled: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()    # op node -> (params, dict)
_PLAIN = (str, int, float, bool, tuple, list)
_functions: dict = {}


def use_symbol_class(cls) -> None:
    global _Symbol
    _Symbol = cls


def var_version(node) -> int:
    """How many ops have mutated variable ``node`` so far (NNVM's VariableParam.version)."""
    return _versions.get(node, 0)


def clone(node, inputs) -> Node:
    """A copy of ``node`` reading ``inputs``, with its attributes, parameter spelling and
    (for a variable) version."""
    copy = Node(node.op, node.params, inputs, node.name, node._attrs)
    for table in (_versions, _spelled):
        state = table.get(node)
        if state is not None:
            table[copy] = state
    return copy


# -- attributes --------------------------------------------------------------------------
def node_dict(node) -> dict:
    """MXNet's ``attrs.dict`` of ``node``: an op's parameters (those set, as they were
    spelled) and its other attributes; a variable's attributes."""
    if node.op is None or node.params is None:
        return dict(node._attrs) if node._attrs else {}
    spelled = _spelled.get(node)
    if spelled is not None and spelled[0] is node.params:
        d = dict(spelled[1])
    else:
        d = node.params.to_mxnet_dict()
    if node._attrs:
        d.update(node._attrs)
    return d


def spell(node, given) -> None:
    """Remember the parameters ``given`` to op ``node`` as MXNet keeps them: ``str(value)``
    of plain Python values (``"2"``, ``"[3, 3]"``), others (dtypes) as parsed."""
    if node.params is None:
        return
    d = node.params.to_mxnet_dict()
    d.update((k, str(v)) for k, v in given.items() if k in d and type(v) in _PLAIN)
    _spelled[node] = (node.params, d)


def _hidden_key(key, exact):
    """``key`` as stored: ``__lr_mult__`` for ``lr_mult`` (any key starting with a hidden key
    when not ``exact``, as op creation does); ``weight_lr_mult`` style keys are refused."""
    for k in HIDDEN_KEYS:
        pos = key.rfind(k)
        if pos == 0 and (not exact or len(k) == len(key)):
            return f"__{key}__"
        if pos > 0 and pos + len(k) == len(key):
            raise MXNetError(f"setting variable attributes with {key!r} is not supported "
                             f"(MXNet deprecated it): use w = Variable(..., {k}=...) and pass "
                             f"{key[:pos - 1]}=w")
    return key


def set_node_attrs(node, attrs: dict) -> None:
    """``Symbol._set_attr`` on one node: ``name`` renames it, an op's parameter re-parses its
    parameters, anything else is an attribute (values are strings)."""
    attrs = {_hidden_key(k, exact=True): v for k, v in attrs.items()}
    if "name" in attrs:
        node.name = attrs.pop("name")
    if node.op is None:
        node.attrs.update(attrs)
        return
    params = {k: v for k, v in attrs.items() if not _is_dunder(k)}
    if params:
        merged = {k: v for k, v in node_dict(node).items() if not _is_dunder(k)}
        merged.update(params)
        node.params = node.op.parse_params(merged)
        spell(node, merged)
    node.attrs.update({k: v for k, v in attrs.items() if _is_dunder(k)})


def _is_dunder(key) -> bool:
    return len(key) > 4 and key.startswith("__") and key.endswith("__")


# -- variables ---------------------------------------------------------------------------
def make_variable(name, attrs) -> Node:
    """A variable node named ``name`` with ``attrs`` (hidden keys stored as MXNet does)."""
    if not isinstance(name, str):
        raise TypeError(f"Variable: name must be a string, got {type(name).__name__}")
    return variable(name, {_hidden_key(k, exact=True): v for k, v in attrs.items()})


# -- op nodes ----------------------------------------------------------------------------
def create(opdef, inputs, kwargs, name=None, hint=None):
    """The symbol of ``opdef`` applied to ``inputs`` (a list, or a dict by input name) with
    MXNet-style ``kwargs`` (parameters, ``attr``, hidden keys; Symbols among them are inputs
    by name), named ``name`` or automatically from ``hint``."""
    attr = attribute.current().get(kwargs.pop("attr", None))
    kwargs.update(attr)
    name = _name.current().get(name, hint or opdef.name.lower())
    by_name = dict(inputs) if isinstance(inputs, dict) else {}
    args = [] if isinstance(inputs, dict) else list(inputs)
    params, attrs = {}, {}
    for key, value in kwargs.items():
        if isinstance(value, _Symbol):
            by_name[key] = value
            continue
        key = _hidden_key(key, exact=False)
        if _is_dunder(key):
            attrs[key] = str(value)
        else:
            params[key] = value
    node = Node(opdef, opdef.parse_params(params), (), name, attrs)
    spell(node, params)
    compose(node, args, by_name, name)
    n_out = opdef.num_visible_outputs(node.params)
    return _Symbol([NodeEntry(node, i, 0) for i in range(n_out)])


def apply(opname, hint, inputs, **params):
    """``opname`` on Symbol ``inputs`` (positional), named from ``hint`` (operators and
    module functions: ``a + b`` is ``elemwise_add`` named ``_plus0``)."""
    return create(_registry.get(opname), inputs, params, None, hint)


def compose(node, args, kwargs, name) -> None:
    """Give op ``node`` (no inputs yet) its inputs: ``args`` in order, then ``kwargs`` by
    input name, then new variables for the rest (NNVM's atomic ``Symbol::Compose``)."""
    op, params = node.op, node.params
    n_req = op.num_inputs(params)
    arg_names = op.list_input_names(params)
    if len(args) > n_req:
        raise MXNetError(f"Operator {op.name!r} ({name}): takes {n_req} input(s) "
                         f"({', '.join(arg_names)}), got {len(args)}")
    for key, sym in [*enumerate(args), *kwargs.items()]:
        if not isinstance(sym, _Symbol):
            raise TypeError(f"Operator {op.name!r} ({name}): input {key!r} must be a Symbol, "
                            f"got {type(sym).__name__} {sym!r:.60}")
        if len(sym._outputs) != 1:
            raise MXNetError(f"Operator {op.name!r} ({name}): input {key!r} is a group of "
                             f"{len(sym._outputs)} outputs; a single output is required")
    inputs = [s._outputs[0] for s in args]
    unused = dict(kwargs)
    for i in range(len(args), n_req):
        sym = unused.pop(arg_names[i], None)
        if sym is not None:
            inputs.append(sym._outputs[0])
        else:
            auto = variable(f"{name}_{arg_names[i]}" if name else arg_names[i], node_dict(node))
            inputs.append(NodeEntry(auto, 0, 0))
    if unused:
        free = "".join(f"\n\t[{i}]{n}" for i, n in enumerate(arg_names[len(args):]))
        raise MXNetError(f"Operator {op.name!r} ({name}): keyword argument name "
                         f"{next(iter(unused))!r} not found; candidate arguments:{free}")
    node.inputs = inputs
    update_versions(node)
    set_var_attrs = op.get_attr("FSetInputVarAttrOnCompose")
    if set_var_attrs is not None:
        for i, e in enumerate(inputs):
            if e.node.op is None:
                set_var_attrs(params, e.node, i)


def update_versions(node) -> None:
    """Entries from variables read their current version; those the op mutates bump it."""
    inputs = node.inputs
    for i, e in enumerate(inputs):
        if e.node.op is None:
            inputs[i] = NodeEntry(e.node, e.index, _versions.get(e.node, 0))
    for i in node.op.mutate_inputs(node.params):
        e = inputs[i]
        if e.node.op is not None:
            raise MXNetError(f"Operator {node.op.name!r} ({node.name}): input {i} is mutated "
                             f"by the op, so it must be a variable, not the output of "
                             f"{e.node.name!r}")
        version = _versions[e.node] = _versions.get(e.node, 0) + 1
        inputs[i] = NodeEntry(e.node, e.index, version)


# -- the generated mx.sym functions ------------------------------------------------------
def op_function(name):
    """The ``mx.sym`` function of op ``name`` (or an alias), built on first use."""
    fn = _functions.get(name)
    if fn is None:
        fn = _functions[name] = _build(_registry.get(name), name)
    return fn


def op_attribute(module, name, prefix=""):
    """``__getattr__`` of the modules of generated op functions (``mx.sym``, ``mx.sym.op``,
    ``mx.sym._internal``, ``mx.sym.contrib`` with prefix ``_contrib_`` ...): op ``prefix +
    name``'s function under the name ``name``, kept in ``module``, or an AttributeError
    saying why there is none (OpNotFound is a KeyError: ``hasattr`` keeps working)."""
    if name.startswith("__"):
        raise AttributeError(name)
    try:
        fn = op_function(name) if not prefix else _build(_registry.get(prefix + name), name)
    except KeyError as exc:
        raise AttributeError(f"module {module.__name__!r} has no attribute {name!r}: "
                             f"{exc.args[0]}") from None
    setattr(module, name, fn)
    return fn


def _build(opdef, fname):
    """``opdef``'s function called ``fname``; its symbols are named from ``fname``."""
    hint = fname.lower()

    def call(op, inputs, kwargs, out, name):
        return create(op, inputs, kwargs, name, hint)
    return make_op_function(opdef, call, fname, SYMBOL)


def forget(opdef) -> None:
    """Drop the functions built for ``opdef``'s names (it was just (re)defined)."""
    for n in [opdef.name, *opdef.aliases]:
        _functions.pop(n, None)
