"""Imperative automatic differentiation (MXNet's ``mx.autograd``).

While recording, the NDArray layer puts every op whose inputs have history on
the tape (``mxnext._runtime.tape``); ``backward``/``grad`` (``ndarray/_backward.py``)
walk it in reverse through each op's ``FGradient`` rule. This module is the
public face: recording scopes, variables, and ``Function`` for gradients
written in Python.
"""

from __future__ import annotations

from ._runtime import registry
from ._runtime import tape as _tape
from ._runtime.base import MXNetError
from ._runtime.tape import FunctionOp as _FunctionOp
from ._runtime.tape import state as _state
from .ndarray import NDArray
from .ndarray._backward import backward, grad

__all__ = ["record", "pause", "train_mode", "predict_mode", "is_recording", "is_training",
           "set_recording", "set_training", "mark_variables", "backward", "grad", "Function",
           "get_symbol"]


# -- scopes ---------------------------------------------------------------------------
def set_recording(is_recording: bool) -> bool:
    """Set recording on/off for this thread; returns the previous state."""
    prev, _state.recording = _state.recording, bool(is_recording)
    return prev


def set_training(train_mode: bool) -> bool:
    """Set train/predict mode for this thread; returns the previous state."""
    prev, _state.training = _state.training, bool(train_mode)
    return prev


def is_recording() -> bool:
    return _state.recording


def is_training() -> bool:
    return _state.training


class _Scope:
    def __init__(self, recording, training):
        self._rec, self._train = recording, training
        self._old = None

    def __enter__(self):
        self._old = (_state.recording, _state.training)
        if self._rec is not None:
            _state.recording = self._rec
        if self._train is not None:
            _state.training = self._train
        return self

    def __exit__(self, *exc):
        _state.recording, _state.training = self._old


def record(train_mode=True):
    """``with record():`` records ops for ``backward`` (train mode unless ``train_mode=False``)."""
    return _Scope(True, train_mode)


def pause(train_mode=False):
    """``with pause():`` stops recording inside a ``record`` block."""
    return _Scope(False, train_mode)


def train_mode():
    return _Scope(None, True)


def predict_mode():
    return _Scope(None, False)


def mark_variables(variables, gradients, grad_reqs="write") -> None:
    """Make ``variables`` leaves whose gradients land in ``gradients``."""
    if isinstance(variables, NDArray):
        variables, gradients = [variables], [gradients]
    _tape.mark_variables(list(variables), list(gradients), grad_reqs)


def get_symbol(x):
    """The computation recorded into ``x`` as a Symbol. Recorded ops become op nodes named
    ``node_<k>``; marked variables become variables ``var<k>``, inputs without history
    ``null<k>`` (MXNet's names). A hybridized block's call (one CachedOp node on the tape)
    appears as one ``_CachedOp`` node, or as the ops of its graph where MXNet inlines it
    (at most ``inline_limit`` ops, without ``static_alloc``)."""
    from ._runtime.graph import IndexedGraph, Node, NodeEntry
    from .symbol import Symbol
    if not isinstance(x, NDArray):
        raise TypeError(f"get_symbol: expected an NDArray, got {type(x).__name__}")
    if x._ag is None:
        raise MXNetError("get_symbol: the array has no recorded history (compute it inside "
                         "autograd.record() from arrays with attach_grad())")
    counts = {"var": 0, "null": 0, "node_": 0}

    def name(kind):
        counts[kind] += 1
        return f"{kind}{counts[kind] - 1}"

    def op_entries(op, params, inputs):
        new = Node(op, params, inputs, name("node_"))
        return [NodeEntry(new, i, 0) for i in range(new.num_outputs())]

    outs = {}                 # tape node -> the NodeEntry of each of its outputs
    for node in IndexedGraph([x._ag]).nodes:      # inputs before the nodes reading them
        ins = [outs[e.node][e.index] for e in node.inputs]
        if node.op is None:
            kind = "var" if node.info is not None and node.info.grad is not None else "null"
            outs[node] = [NodeEntry(Node(None, None, [], name(kind)), 0, 0)]
        elif isinstance(node.op, _FunctionOp) and hasattr(node.op.func, "program"):
            cached = node.op.func.op                                 # a CachedOp's call
            if not cached.inlined():
                outs[node] = op_entries(registry.get("_CachedOp"), cached.as_op_params(), ins)
                continue
            by_var = dict(zip(cached._names, ins))
            copies = {}
            for n in IndexedGraph(cached._sym._outputs).nodes:
                copies[n] = [by_var[n.name]] if n.op is None else op_entries(
                    n.op, n.params, [copies[e.node][e.index] for e in n.inputs])
            outs[node] = [copies[e.node][e.index] for e in cached._sym._outputs]
        elif isinstance(node.op, _FunctionOp):
            raise MXNetError(f"get_symbol: the graph holds the Python function "
                             f"{node.op.name!r} (autograd.Function), which has no symbol form")
        else:
            outs[node] = op_entries(node.op, node.params, ins)
    return Symbol([outs[x._ag.node][x._ag.index]])


# -- custom functions -------------------------------------------------------------------
class Function:
    """A differentiable function with Python ``forward`` and ``backward``.

    Subclass it, compute outputs in ``forward(*inputs)`` (use
    ``save_for_backward``) and input gradients in ``backward(*output_grads)``.
    """

    def __init__(self):
        self.saved_tensors = ()

    def save_for_backward(self, *args):
        self.saved_tensors = args

    def forward(self, *inputs):
        raise NotImplementedError

    def backward(self, *output_grads):
        raise NotImplementedError

    def __call__(self, *inputs):
        with pause(train_mode=_state.training):
            outputs = self.forward(*inputs)
        outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
        if _state.recording:
            _tape.record(_FunctionOp(self, len(outs), len(inputs)), None, list(inputs), outs)
        return outputs
