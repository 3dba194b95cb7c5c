"""MXNet's control-flow functions of ``mx.nd.contrib``, run imperatively as MXNet runs them:
``foreach`` loops over axis 0 of its data, ``while_loop`` while its condition holds, ``cond``
picks a branch; each calls the user's functions with NDArrays (recorded by autograd as any
other op calls) and stacks the per-step outputs."""

from __future__ import annotations

import numpy as np

from .._runtime import registry
from . import op
from ._copies import filled
from .ndarray import NDArray

__all__ = ["foreach", "while_loop", "cond"]
registry.require("mx.nd.contrib control flow", "stack", "Concat", "expand_dims")


def _flatten(args, what: str):
    """``(list of NDArrays, format)``: the nested lists/tuples of ``args`` flattened."""
    if isinstance(args, NDArray):
        return [args], 0
    if not isinstance(args, (list, tuple)):
        raise TypeError(f"{what}: expected an NDArray or a (nested) list of NDArrays, "
                        f"got {type(args).__name__}")
    flat, fmt = [], []
    for a in args:
        items, f = _flatten(a, what)
        flat += items
        fmt.append(f)
    return flat, fmt


def _regroup(flat: list, fmt):
    """The nested structure ``fmt`` (from ``_flatten``) rebuilt from ``flat``."""
    if isinstance(fmt, int):
        return flat[0], flat[1:]
    out = []
    for f in fmt:
        item, flat = _regroup(flat, f)
        out.append(item)
    return out, flat


def _scalar(value, type_, what: str):
    if isinstance(value, NDArray):
        if value.size != 1:
            raise ValueError(f"{what}: expected one element, got an NDArray of shape "
                             f"{value.shape}")
        value = value.asscalar()
    return type_(value)


def foreach(body, data, init_states):
    """Run ``body(item, states) -> (outputs, new_states)`` over axis 0 of ``data`` (an
    NDArray, or a list of NDArrays stepped together); returns ``(outputs stacked on a new
    axis 0, final states)``, each in the structure ``body`` returned."""
    flat_data, _ = _flatten(data, "foreach: data")
    _flatten(init_states, "foreach: init_states")
    steps = {d.shape[0] for d in flat_data}
    if len(steps) != 1:
        raise ValueError(f"foreach: the arrays of data differ in length along axis 0: "
                         f"{[d.shape for d in flat_data]}")
    states, outputs, fmt = init_states, [], None
    for i in range(steps.pop()):
        item = data[i] if isinstance(data, NDArray) else [d[i] for d in flat_data]
        outs, states = body(item, states)
        outs, fmt = _flatten(outs, "foreach: the outputs of body")
        outputs.append(outs)
    if fmt is None:
        return [], states
    stacked = [op.stack(*column, axis=0) for column in zip(*outputs)]
    return _regroup(stacked, fmt)[0], states


def while_loop(cond, func, loop_vars, max_iterations=None):
    """While ``cond(*loop_vars)`` is true and fewer than ``max_iterations`` steps ran:
    ``step_output, loop_vars = func(*loop_vars)``. Returns ``(step outputs stacked on axis 0,
    padded with zeros to max_iterations rows, final loop_vars)``."""
    if max_iterations is None:
        raise ValueError("while_loop: max_iterations must be given")
    max_iterations = _scalar(max_iterations, int, "while_loop: max_iterations")
    single = isinstance(loop_vars, NDArray)
    loop_vars = [loop_vars] if single else list(loop_vars)
    if not loop_vars:
        raise ValueError("while_loop: loop_vars must hold at least one NDArray")
    outputs, fmt = [], None
    while len(outputs) < max_iterations and _scalar(cond(*loop_vars), bool,
                                                    "while_loop: the value of cond"):
        step, new_vars = func(*loop_vars)
        new_vars = [new_vars] if isinstance(new_vars, NDArray) else list(new_vars or [])
        if len(new_vars) != len(loop_vars):
            raise ValueError(f"while_loop: func returned {len(new_vars)} loop variables, "
                             f"expected {len(loop_vars)}")
        loop_vars = new_vars
        step, fmt = _flatten([] if step is None else step, "while_loop: the outputs of func")
        if outputs and len(step) != len(outputs[0]):
            raise ValueError(f"while_loop: func returned {len(step)} outputs at step "
                             f"{len(outputs)}, {len(outputs[0])} before")
        outputs.append(step)
    stacked = []
    for column in zip(*outputs):
        rows = [x.expand_dims(axis=0) for x in column]
        if len(rows) < max_iterations:
            first = column[0]
            rows.append(filled((max_iterations - len(rows), *first.shape),
                               np.dtype(first.dtype), first.context, 0))
        stacked.append(op.concat(*rows, dim=0))
    if fmt is not None:
        stacked = _regroup(stacked, fmt)[0]
    return stacked, loop_vars[0] if single else loop_vars


def cond(pred, then_func, else_func):
    """``then_func()`` if ``pred`` (an NDArray of one element, or a Python value) is true, else
    ``else_func()``."""
    return then_func() if _scalar(pred, bool, "cond: pred") else else_func()
