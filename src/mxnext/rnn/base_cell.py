"""``BaseRNNCell``: what every symbolic RNN cell shares (states, unrolling, weight packing)."""

from __future__ import annotations

import warnings

from .. import ndarray, symbol
from .._runtime.base import MXNetError
from ..initializer._fused_layout import _pop
from ._params import RNNParams
from ._sequence import normalize_sequence

__all__ = ["BaseRNNCell", "StepError", "rnn_unroll"]


class StepError(MXNetError, NotImplementedError):
    """A cell that only unrolls whole sequences (fused, bidirectional) was asked for one step."""


class BaseRNNCell:
    """A recurrent cell that builds symbols: ``cell(inputs, states)`` is one time step,
    ``cell.unroll(length, inputs)`` a whole sequence.

    ``prefix`` starts the names of the cell's symbols, and of its weights when ``params`` is
    None; ``params`` (an ``RNNParams``) is a container shared with other cells.
    """

    def __init__(self, prefix="", params=None):
        # a cell owns its container until someone else reads it through ``params``
        self._own_params = params is None
        self._params = RNNParams(prefix) if params is None else params
        self._prefix = prefix
        self._modified = False
        self.reset()

    def reset(self):
        """Restart the step and begin-state counters, before building another graph."""
        self._init_counter = -1
        self._counter = -1
        for cell in getattr(self, "_cells", ()):
            cell.reset()

    def __call__(self, inputs, states):
        """One step: ``(output, next states)`` from the step's input and the states before."""
        raise NotImplementedError(f"{type(self).__name__} does not define a step")

    @property
    def params(self):
        """The cell's ``RNNParams`` (handing it out ends the cell's sole ownership)."""
        self._own_params = False
        return self._params

    @property
    def state_info(self):
        """One dict per state: its ``shape`` (0 for the batch axis) and ``__layout__``."""
        raise NotImplementedError(f"{type(self).__name__} does not define its states")

    @property
    def state_shape(self):
        return [info["shape"] for info in self.state_info]

    @property
    def _gate_names(self):
        """Suffixes of the per-gate weights ``unpack_weights`` makes (none: nothing to split)."""
        return ()

    def _check_not_modified(self):
        if self._modified:
            raise MXNetError(f"{type(self).__name__} {self._prefix!r} is wrapped by a modifier "
                             f"cell (ZoneoutCell, ResidualCell ...); use the modifier cell, not "
                             f"the cell it wraps")

    def begin_state(self, func=symbol.zeros, **kwargs):
        """The states before the first step: ``func(name=..., shape=..., __layout__=...,
        **kwargs)`` for each, named ``<prefix>begin_state_<n>``. ``func`` may be
        ``mx.sym.zeros`` (the default), ``mx.sym.Variable`` (states fed as inputs),
        ``mx.sym.random.uniform`` ..."""
        self._check_not_modified()
        states = []
        for info in self.state_info:
            self._init_counter += 1
            name = f"{self._prefix}begin_state_{self._init_counter}"
            states.append(func(name=name, **{**kwargs, **(info or {})}))
        return states

    def unpack_weights(self, args):
        """A copy of ``args`` (name -> NDArray) with the cell's stacked gate weights split into
        one array per gate (``<prefix>i2h_i_weight``, ``<prefix>h2h_f_bias`` ...)."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        h = self._num_hidden
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                stacked = _pop(args, f"{self._prefix}{group}_{kind}", "unpack_weights")
                for j, gate in enumerate(gates):
                    args[f"{self._prefix}{group}{gate}_{kind}"] = stacked[j * h:(j + 1) * h].copy()
        return args

    def pack_weights(self, args):
        """The inverse of ``unpack_weights``: per-gate arrays stacked back into the cell's
        ``<prefix>i2h_weight`` and so on."""
        args = dict(args)
        gates = self._gate_names
        if not gates:
            return args
        for group in ("i2h", "h2h"):
            for kind in ("weight", "bias"):
                parts = [_pop(args, f"{self._prefix}{group}{gate}_{kind}", "pack_weights")
                         for gate in gates]
                args[f"{self._prefix}{group}_{kind}"] = ndarray.concat(*parts, dim=0)
        return args

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        """Apply the cell ``length`` times: ``(outputs, final states)``.

        ``inputs`` is one symbol shaped by ``layout`` (``NTC``: batch, time, features;
        ``TNC``: time first) or a list of ``length`` step symbols. ``merge_outputs`` True
        returns one symbol in ``layout``, False a list of step symbols, None whichever is
        cheaper. ``begin_state`` defaults to ``begin_state()``.
        """
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, False)
        states = self.begin_state() if begin_state is None else begin_state
        outputs = []
        for step in inputs:
            output, states = self(step, states)
            outputs.append(output)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, inputs, activation, **kwargs):
        """``activation`` applied to ``inputs``: an ``Activation`` ``act_type`` name or a
        function building symbols."""
        if isinstance(activation, str):
            return symbol.Activation(inputs, act_type=activation, **kwargs)
        return activation(inputs, **kwargs)


def rnn_unroll(cell, length, inputs=None, begin_state=None, input_prefix="", layout="NTC"):
    """Deprecated spelling of ``cell.unroll``; with ``inputs`` None, the steps are variables
    ``<input_prefix>t<i>_data``."""
    warnings.warn("rnn_unroll is deprecated; call cell.unroll", DeprecationWarning,
                  stacklevel=2)
    if inputs is None:
        inputs = [symbol.Variable(f"{input_prefix}t{i}_data") for i in range(length)]
    return cell.unroll(length, inputs=inputs, begin_state=begin_state, layout=layout)
