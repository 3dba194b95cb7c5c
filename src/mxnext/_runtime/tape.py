"""The autograd tape: recording state and the graph recorded op by op.

It sits below the NDArray layer, which records every op it runs here while
recording is on; ``mxnext.autograd`` (above NDArray) walks the recorded graph
backwards. A recorded op becomes a ``graph.Node`` whose ``info`` keeps only
the inputs and outputs its gradient rule reads, so other activations are
freed as soon as the program drops them.
"""

from __future__ import annotations

import threading

from . import recipe as _recipe
from .base import MXNetError
from .graph import Node, entry
from .opctx import as_req

__all__ = ["state", "Info", "record", "has_history", "mark_variables", "check_assignable",
           "FunctionOp"]


class _State(threading.local):
    recording = False
    training = False


state = _State()


class Info:
    """Saved values of a recorded node; for variables also the gradient buffer and req."""

    __slots__ = ("outputs", "inputs", "specs", "grad", "grad_req", "fresh", "state")

    def __init__(self, outputs, inputs=None, specs=None, grad=None, grad_req="null",
                 state=None):
        self.outputs = outputs      # saved outputs (None where not read); None once freed
        self.inputs = inputs        # saved inputs, the same way
        self.specs = specs          # (shape, dtype, ctx) of each output
        self.grad = grad
        self.grad_req = grad_req
        self.fresh = False          # a backward wrote ``grad`` since it was last consumed
        self.state = state          # a stateful op's state, which its backward uses


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Make NDArrays ``variables`` leaves whose gradients land in ``gradients``."""
    if isinstance(grad_reqs, str):
        grad_reqs = [grad_reqs] * len(variables)
    if not len(variables) == len(gradients) == len(grad_reqs):
        raise MXNetError(f"mark_variables: {len(variables)} variables, {len(gradients)} "
                         f"gradients and {len(grad_reqs)} grad_reqs must have the same length")
    for v, g, r in zip(variables, gradients, grad_reqs):
        as_req(r)
        node = Node(None, None, ())
        held = v if v.stype != "default" else v._view(v._shape)   # a sparse one has no view
        node.info = Info([held], grad=g, grad_req=r)
        v._ag = entry(node, 0)


INPLACE = ("Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
           "autograd.")


def check_assignable(arrays, inputs=()) -> None:
    """While recording, arrays already in a graph (variables included) must not be written;
    nor may an op write one of its own inputs when an input has history (MXNet's two
    checks, in its order)."""
    for a in arrays:
        e = a._ag
        if e is not None and e.node.info is not None and e.node.info.outputs is not None:
            raise MXNetError("Assigning to NDArrays that are already in a computational graph "
                             "will cause undefined behavior when evaluating gradients. Please "
                             "call backward first to clear the graph or do this outside of a "
                             "record section. Also note that you cannot use inplace operations "
                             "like +=, *=, relu(x, out=x), y[idx]=x, etc inside a record section.")
    if inputs:
        history = False
        for a in inputs:
            if a._ag is not None:
                history = True
        if history:
            for o in arrays:
                for a in inputs:
                    if a is o:
                        raise MXNetError(INPLACE)


def has_history(a) -> bool:
    """Whether NDArray ``a`` is in a live recorded graph (a variable, or the output of a
    recorded op whose graph no backward has consumed)."""
    e = a._ag
    return e is not None and e.node.info.outputs is not None


def record(op, params, inputs, outputs, saves=None, state=None) -> None:
    """Add an op application to the tape if any input has history. ``saves``: what
    ``_recipe.saves`` returns plus the outputs' (shape, dtype, ctx), when the caller has
    them cached (the invoke path); ``state``: a stateful op's state."""
    # Plain loops, no comprehensions: a comprehension is a frame on Python 3.11 and this runs
    # once per recorded op (bench/ndarray.py's MLP step records 37).
    entries = []
    history = False
    for a in inputs:
        e = a._ag
        if e is not None:
            if e.node.info.outputs is None:   # its graph was consumed by a backward without
                e = None                      # retain_graph: no history now, as in MXNet
            else:
                history = True
        entries.append(e)
    if not history:
        return
    if saves is None:
        saves = (*_recipe.saves(op, params, len(inputs)),
                 [(o._shape, o._dtype, o._ctx) for o in outputs])
    save_in, save_out, specs = saves
    saved_in = []
    for i, a in enumerate(inputs):
        if entries[i] is None:
            entries[i] = _constant()
        saved_in.append(a._alias() if save_in[i] else None)
    saved_out = []
    for o, s in zip(outputs, save_out):
        saved_out.append(o._alias() if s else None)
    node = Node._new(op, params, entries)
    node.info = Info(saved_out, saved_in, specs, state=state)
    for i, o in enumerate(outputs):
        o._ag = entry(node, i)


def _constant():
    """The graph entry of an input without history."""
    node = Node._new(None, None, [])
    node.info = Info(None)
    return entry(node, 0)


class FunctionOp:
    """Stands in for an OpDef on nodes recorded by ``Function``."""

    provider = "autograd.Function"

    def __init__(self, func, n_out, n_in, name=None, fresh_results=False):
        self.func = func
        self.name = name or type(func).__name__
        self.n_out = n_out
        self.n_in = n_in
        self.fresh_results = fresh_results    # backward returns new arrays nobody else holds

    def num_outputs(self, params):
        return self.n_out

    def mutate_inputs(self, params):
        return ()

    def get_attr(self, key, default=None):
        return default

    def run_backward(self, ogs):
        prev = state.recording
        state.recording = False              # MXNet runs it paused, in the current mode
        try:
            res = self.func.backward(*ogs)
        finally:
            state.recording = prev
        res = list(res) if isinstance(res, (list, tuple)) else [res]
        if len(res) != self.n_in:
            raise MXNetError(f"{self.name}.backward returned {len(res)} gradient(s) for "
                             f"{self.n_in} input(s)")
        return res
