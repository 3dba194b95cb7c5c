"""The step cells: ``RNNCell``, ``LSTMCell``, ``GRUCell``, and ``DropoutCell``."""

from __future__ import annotations

from numbers import Number

from .. import symbol
from .._runtime.base import ParamError
from .. import initializer
from ._sequence import normalize_sequence
from .base_cell import BaseRNNCell

__all__ = ["RNNCell", "LSTMCell", "GRUCell", "DropoutCell"]


def _hidden_state(num_hidden):
    return {"shape": (0, num_hidden), "__layout__": "NC"}


class _GatedCell(BaseRNNCell):
    """A cell whose step starts with ``i2h = FC(x)`` and ``h2h = FC(h)``, each ``num_gates *
    num_hidden`` wide, on the weights ``i2h_weight``, ``i2h_bias``, ``h2h_weight``,
    ``h2h_bias``."""

    _num_gates = 1

    def __init__(self, num_hidden, prefix, params, i2h_bias_init=None):
        super().__init__(prefix=prefix, params=params)
        self._num_hidden = num_hidden
        self._iW = self._params.get("i2h_weight")
        self._iB = self._params.get("i2h_bias", init=i2h_bias_init)
        self._hW = self._params.get("h2h_weight")
        self._hB = self._params.get("h2h_bias")

    def _projections(self, inputs, h, name, sep=""):
        width = self._num_hidden * self._num_gates
        i2h = symbol.FullyConnected(data=inputs, weight=self._iW, bias=self._iB,
                                    num_hidden=width, name=f"{name}{sep}i2h")
        h2h = symbol.FullyConnected(data=h, weight=self._hW, bias=self._hB,
                                    num_hidden=width, name=f"{name}{sep}h2h")
        return i2h, h2h

    def _step_name(self):
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"


class RNNCell(_GatedCell):
    """Elman RNN: ``h' = activation(W_i x + b_i + W_h h + b_h)``; ``activation`` is an
    ``Activation`` type (``'tanh'``, ``'relu'`` ...) or a function of a symbol."""

    def __init__(self, num_hidden, activation="tanh", prefix="rnn_", params=None):
        super().__init__(num_hidden, prefix, params)
        self._activation = activation

    @property
    def state_info(self):
        return [_hidden_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ("",)

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class LSTMCell(_GatedCell):
    """LSTM with gates in MXNet's order (input, forget, cell, output); states ``[h, c]``.
    ``forget_bias`` initialises the forget gate's part of ``i2h_bias`` (MXNet's
    ``LSTMBias`` initializer)."""

    _num_gates = 4

    def __init__(self, num_hidden, prefix="lstm_", params=None, forget_bias=1.0):
        super().__init__(num_hidden, prefix, params,
                         i2h_bias_init=initializer.LSTMBias(forget_bias=forget_bias))

    @property
    def state_info(self):
        return [_hidden_state(self._num_hidden), _hidden_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ("_i", "_f", "_c", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._projections(inputs, states[0], name)
        gates = symbol.SliceChannel(i2h + h2h, num_outputs=4, name=f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = symbol.Activation(gates[2], act_type="tanh", name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name=f"{name}state")
        next_h = symbol._internal._mul(out_gate, symbol.Activation(next_c, act_type="tanh"),
                                       name=f"{name}out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    """GRU as cuDNN computes it (gates reset, update, new):
    ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``, ``h' = (1 - z) * n + z * h``."""

    _num_gates = 3

    def __init__(self, num_hidden, prefix="gru_", params=None):
        super().__init__(num_hidden, prefix, params)

    @property
    def state_info(self):
        return [_hidden_state(self._num_hidden)]

    @property
    def _gate_names(self):
        return ("_r", "_z", "_o")

    def __call__(self, inputs, states):
        name = self._step_name()
        h = states[0]
        i2h, h2h = self._projections(inputs, h, name, sep="_")
        i2h_r, i2h_z, i2h_n = symbol.SliceChannel(i2h, num_outputs=3, name=f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h_n = symbol.SliceChannel(h2h, num_outputs=3, name=f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = symbol.Activation(i2h_n + reset * h2h_n, act_type="tanh",
                                      name=f"{name}_h_act")
        next_h = symbol._internal._plus((1.0 - update) * candidate, update * h,
                                        name=f"{name}out")
        return next_h, [next_h]


class DropoutCell(BaseRNNCell):
    """Dropout with probability ``dropout`` on what passes through (no state, no weights)."""

    def __init__(self, dropout, prefix="dropout_", params=None):
        super().__init__(prefix, params)
        if isinstance(dropout, bool) or not isinstance(dropout, Number):
            raise ParamError(f"DropoutCell: dropout must be a number (the probability of "
                             f"dropping), got {dropout!r}")
        self.dropout = dropout

    @property
    def state_info(self):
        return []

    def __call__(self, inputs, states):
        if self.dropout > 0:
            inputs = symbol.Dropout(data=inputs, p=self.dropout)
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, _ = normalize_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, symbol.Symbol):
            return self(inputs, [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)
