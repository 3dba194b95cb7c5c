"""MXNet's symbolic control flow: ``mx.sym.contrib.foreach``, ``while_loop`` and ``cond``.

Each calls the user's functions once, on fresh variables, inside ``AttrScope(
__subgraph_name__=<unique name>)``, and makes one ``_foreach`` / ``_while_loop`` / ``_cond``
node holding the resulting body graphs. An input of a body node made outside that scope
(an outer symbol or parameter the function closes over) is cut: the body reads a new
variable named after that output instead, and the outer symbol becomes an extra input of
the node, as MXNet's ``MXSymbolCutSubgraph`` does. Graph and variable names, input order
and the ``*_locs`` parameters follow MXNet 1.9, so the JSON files match.
"""

from __future__ import annotations

from .. import attribute
from .._runtime import registry as _registry
from .._runtime.base import MXNetError
from .._runtime.graph import IndexedGraph, NodeEntry, variable
from . import _create
from ._symbol import Group, Symbol

__all__ = ["foreach", "while_loop", "cond", "ControlFlowError"]


class ControlFlowError(MXNetError, AssertionError):
    """What MXNet asserts about a control-flow call's arguments and body."""

_ATTR = "__subgraph_name__"


# -- nested structures ----------------------------------------------------------------------
def _flatten(args, what):
    """(flat list of Symbols, format); a multi-output Symbol counts its outputs."""
    if isinstance(args, Symbol):
        n = len(args)
        return [args], n if n > 1 else 0
    if not isinstance(args, (list, tuple)):
        raise ControlFlowError(f"{what} must be (nested) list of Symbol, but got {args!r} "
                               f"of type {type(args)}")
    flat, fmts = [], []
    for a in args:
        items, fmt = _flatten(a, what)
        flat += items
        fmts.append(fmt)
    return flat, fmts


def _regroup(args, fmt):
    if isinstance(fmt, int):
        return (args[0], args[1:]) if fmt == 0 else (args[:fmt], args[fmt:])
    out = []
    for f in fmt:
        item, args = _regroup(args, f)
        out.append(item)
    return out, args


def _check(items, what):
    if not all(isinstance(s, Symbol) for s in items):
        raise ControlFlowError(what)


# -- building body graphs -------------------------------------------------------------------
def _unique_graph_name(name):
    outer = attribute.current()._attr.get(_ATTR, "")
    if outer:
        name = f"{outer}${name}"
    names = attribute.AttrScope._subgraph_names      # MXNet's counts, which tests reset
    names[name] += 1
    return f"{name}{names[name] - 1}"


def _uniq_name(sym):
    """MXNet's name for the body variable standing for ``sym``: ``<name>-<output index>``."""
    return f"{sym.name}-{sym._outputs[0].index}"


def _inside(node, name):
    return bool(node._attrs) and node._attrs.get(_ATTR) == name


def _body_group(outputs, name, states=()):
    """The body graph of ``outputs`` then ``states``: an ``identity`` over each that is a
    variable or was made outside the body, and (foreach's rule) over each state named as
    one of ``outputs``."""
    everything = list(outputs) + list(states)
    inputs = set(Group(everything).list_inputs()) if everything else set()
    out_names = {o.name for o in outputs}
    flat = []
    with attribute.AttrScope(**{_ATTR: name}):
        for k, o in enumerate(everything):
            if o.name in inputs or not _inside(o._outputs[0].node, name) or (
                    k >= len(outputs) and o.name in out_names):
                o = _create.apply("identity", "identity", [o])
            flat.append(o)
    return Group(flat)


def _cut(graph, name):
    """Replace each input of a body node that comes from outside the body by a variable
    named after that output; ``{variable name: the outer Symbol}``."""
    out_node = graph._outputs[0].node
    if not _inside(out_node, name):
        return {}
    made, outer = {}, {}
    for node in IndexedGraph(graph._outputs).nodes:
        if not _inside(node, name):
            continue
        for k, e in enumerate(node.inputs):
            if _inside(e.node, name):
                continue
            key = (e.node, e.index)
            if key not in made:
                src = Symbol([NodeEntry(e.node, e.index, 0)])
                made[key] = variable(src.list_outputs()[0])
                outer[made[key].name] = src
            node.inputs[k] = NodeEntry(made[key], 0, 0)
    return outer


def _graph_vars(graph):
    """``{name: variable Symbol}`` of the body's input variables."""
    g = IndexedGraph(graph._outputs)
    return {g.nodes[i].name: Symbol([NodeEntry(g.nodes[i], 0, 0)]) for i in g.input_ids}


def _copy_var(sym):
    node = sym._outputs[0].node
    return Symbol([NodeEntry(variable(node.name, node._attrs), 0, 0)])


def _make(op, inputs, graphs, **params):
    """The op's node over ``inputs`` holding ``graphs``; its outputs as a Symbol."""
    params["num_args"] = len(inputs) + len(graphs)
    return _create.create(_registry.get(op), list(inputs),
                          dict(params, subgraphs=[g._outputs for g in graphs]), None, op)


# -- foreach --------------------------------------------------------------------------------
def foreach(body, data, init_states, name="foreach"):
    """``body(data_t, states) -> (outputs_t, new_states)`` over axis 0 of ``data`` (a Symbol
    or a nested list of them, stepped together); returns ``(outputs stacked on axis 0,
    final states)`` in the structures ``body`` returned."""
    flat_data, data_fmt = _flatten(data, "foreach input")
    _check(flat_data, "data should be a symbol or a nested list of symbols")
    flat_init, init_fmt = _flatten(init_states, "foreach states")
    _check(flat_init, "init_states should be a symbol or a nested list of symbols")
    name = _unique_graph_name(name)
    with attribute.AttrScope(**{_ATTR: name}):
        items = _regroup([_var(s) for s in flat_data], data_fmt)[0]
        states = _regroup([_var(s) for s in flat_init], init_fmt)[0]
        outs, new_states = body(items, states)
    outs, out_fmt = _flatten(outs, "foreach output")
    new_states, state_fmt = _flatten(new_states, "foreach loop_vars")
    if init_fmt != state_fmt:
        raise ControlFlowError("The input and output loop_vars have different format")
    _check(outs, "the output should be an NDArray or a nested list of NDArrays")
    _check(new_states, "the output states should be an NDArray or a nested list of NDArrays")
    graph = _body_group(outs, name, new_states)
    inputs, locs = _foreach_inputs(graph, name, flat_data, flat_init)
    n_out = len(outs) + len(new_states)
    ret = _make("_foreach", inputs, [graph], num_outputs=n_out, num_out_data=len(outs),
                in_state_locs=locs[1], in_data_locs=locs[0], remain_locs=locs[2])
    res_outs = _regroup([ret[i] for i in range(len(outs))], out_fmt)[0]
    res_states = _regroup([ret[len(outs) + i] for i in range(len(new_states))], state_fmt)[0]
    return res_outs, res_states


def _var(sym):
    return Symbol([NodeEntry(_create.make_variable(_uniq_name(sym),
                                                   attribute.current().get(None)), 0, 0)])


def _foreach_inputs(graph, name, flat_data, flat_init):
    """The node's inputs (data, states, then the other body inputs) and the body positions
    of each group."""
    outer = _cut(graph, name)
    by_name = _graph_vars(graph)
    names = graph.list_inputs()
    if len(set(names)) != len(names):
        raise ControlFlowError(f"The inputs of the subgraph don't have unique names: {names}")
    data_names = [_uniq_name(s) for s in flat_data]
    state_names = [_uniq_name(s) for s in flat_init]
    for wanted, what in ((data_names, "data"), (state_names, "state")):
        if any(n not in names for n in wanted):
            raise ControlFlowError(f"the {what} arrays have to be used in the loop body")
    inputs = list(flat_data) + list(flat_init)
    remain = []
    for i, n in enumerate(names):
        if n in outer:
            inputs.append(outer[n])
        elif n in data_names or n in state_names:
            continue
        else:
            inputs.append(_copy_var(by_name[n]))
        remain.append(i)
    return inputs, ([names.index(n) for n in data_names],
                    [names.index(n) for n in state_names], remain)


# -- while_loop -----------------------------------------------------------------------------
def while_loop(cond, func, loop_vars, max_iterations=None, name="while_loop"):
    """While ``cond(*loop_vars)`` holds, at most ``max_iterations`` times: ``step_output,
    loop_vars = func(*loop_vars)``. Returns ``(step outputs stacked on axis 0 and padded to
    max_iterations rows, final loop_vars)``."""
    flat_vars, vars_fmt = _flatten(loop_vars, "while loop_vars")
    _check(flat_vars, "loop_vars should be a symbol or a nested list of symbols")
    if max_iterations is None:
        raise ValueError("max_iterations should be specified")
    max_iterations = _python_int(max_iterations)
    if len(flat_vars) == 0:
        raise ValueError("loop_vars should contain at least one element")
    cond_g, n_data, _ = _loop_graph(loop_vars, _cond_wrapper(cond), name + "_cond")
    func_g, n_data, out_fmt = _loop_graph(loop_vars, _func_wrapper(func, flat_vars),
                                          name + "_func")
    inputs, (cond_locs, _), (func_locs, var_locs) = _loop_inputs(flat_vars, cond_g, func_g)
    for i, loc in enumerate(var_locs, 1):
        if loc == -1:
            raise ValueError(f"The {i}-th loop_var doesn't involve into the computation")
    n_out = len(func_g)
    ret = _make("_while_loop", inputs, [cond_g, func_g], max_iterations=max_iterations,
                cond_input_locs=cond_locs, func_input_locs=func_locs, func_var_locs=var_locs,
                num_out_data=n_data, num_outputs=n_out)
    outs = _regroup([ret[i] for i in range(n_data)], out_fmt)[0]
    final = _regroup([ret[i] for i in range(n_data, n_out)], vars_fmt)[0]
    return outs, final


def _python_int(value):
    if hasattr(value, "asscalar"):
        value = value.asscalar()
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError("Cannot convert max_iteration to python int") from None


def _cond_wrapper(cond):
    def wrapped(loop_vars):
        result = cond(*loop_vars)
        if not isinstance(result, Symbol):
            raise ValueError("Return of cond must be a Symbol")
        return [], [result], 0
    return wrapped


def _func_wrapper(func, flat_vars):
    def wrapped(loop_vars):
        step, new_vars = func(*loop_vars)
        step = [] if step is None else list(step) if isinstance(step, tuple) else step
        new_vars = [] if new_vars is None else \
            list(new_vars) if isinstance(new_vars, tuple) else new_vars
        step, out_fmt = _flatten(step, "while output")
        new_vars, _ = _flatten(new_vars, "while loop_vars")
        if len(flat_vars) != len(new_vars):
            raise ValueError("The number of loop_vars should be consistent during the loop")
        return step, new_vars, out_fmt
    return wrapped


def _loop_graph(loop_vars, wrapped, graph_name):
    """(body graph, number of step outputs, their format) of ``wrapped`` on new variables."""
    graph_name = _unique_graph_name(graph_name)
    with attribute.AttrScope(**{_ATTR: graph_name}):
        flat, fmt = _flatten(loop_vars, "while loop_vars")
        new_vars = _regroup([_var(s) for s in flat], fmt)[0]
        outputs, final, out_fmt = wrapped(new_vars)
    return _body_group(outputs + final, graph_name), len(outputs), out_fmt


def _loop_inputs(flat_vars, *graphs):
    """The node's inputs (each loop variable once, then each body's other inputs) and per
    body (positions of its inputs among them, its input position of each loop variable)."""
    by_uniq = {_uniq_name(s): i for i, s in enumerate(flat_vars)}
    inputs, var_at, locs = [], {}, []
    for graph in graphs:
        outer, own = _cut(graph, graph._outputs[0].node._attrs.get(_ATTR)), _graph_vars(graph)
        input_locs, var_locs = [], [-1] * len(flat_vars)
        for n in graph.list_inputs():
            if n in by_uniq:
                k = by_uniq[n]
                if k not in var_at:
                    var_at[k] = len(inputs)
                    inputs.append(flat_vars[k])
                input_locs.append(var_at[k])
                var_locs[k] = len(input_locs) - 1
                continue
            input_locs.append(len(inputs))
            inputs.append(outer[n] if n in outer else _copy_var(own[n]))
        locs.append((input_locs, var_locs))
    return inputs, *locs


# -- cond -----------------------------------------------------------------------------------
def cond(pred, then_func, else_func, name="cond"):
    """``then_func()`` where ``pred`` (a Symbol of one element) is true, else
    ``else_func()``; both must return the same number of outputs."""
    cond_g, n_cond, _ = _branch_graph(lambda: pred, name + "_pred")
    if n_cond != 1:
        raise ValueError("pred should always be a single output")
    then_g, n_then, then_fmt = _branch_graph(then_func, name + "_then")
    else_g, n_else, _ = _branch_graph(else_func, name + "_else")
    if n_then != n_else:
        raise ValueError("Number of outputs differs between then-branch and else-branch")
    inputs, locs = _branch_inputs(cond_g, then_g, else_g)
    ret = _make("_cond", inputs, [cond_g, then_g, else_g], cond_input_locs=locs[0],
                then_input_locs=locs[1], else_input_locs=locs[2], num_outputs=n_then)
    return _regroup([ret[i] for i in range(n_then)], then_fmt)[0]


def _branch_graph(func, graph_name):
    graph_name = _unique_graph_name(graph_name)
    with attribute.AttrScope(**{_ATTR: graph_name}):
        outputs, fmt = _flatten(func(), "cond outputs")
    return _body_group(outputs, graph_name), len(outputs), fmt


def _branch_inputs(*graphs):
    """The node's inputs (an outer variable read by several branches once) and each
    branch's positions of its inputs among them."""
    inputs, locs = [], []
    for graph in graphs:
        outer, own = _cut(graph, graph._outputs[0].node._attrs.get(_ATTR)), _graph_vars(graph)
        known = {s.name: k for k, s in enumerate(inputs)}
        here = []
        for n in graph.list_inputs():
            if n not in known:
                known[n] = len(inputs)
                inputs.append(outer[n] if n in outer else _copy_var(own[n]))
            here.append(known[n])
        locs.append(here)
    return inputs, locs
