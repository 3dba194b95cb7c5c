"""``VariationalDropoutCell``, ``LSTMPCell`` and ``dynamic_unroll`` (MXNet 1.9's
``mxnet.gluon.contrib.rnn.rnn_cell``)."""

from __future__ import annotations

from ...._runtime.base import MXNetError
from ...rnn._sequence import TENSOR_TYPES, format_sequence, mask_invalid
from ...rnn.rnn_cell import (BidirectionalCell, LSTMCell, ModifierCell, _begin_state,
                              _GatedCell)

__all__ = ["VariationalDropoutCell", "LSTMPCell", "dynamic_unroll"]


class VariationalDropoutCell(ModifierCell):
    """Dropout with one mask per sequence (Gal & Ghahramani, 2016) on the base cell's
    inputs, first state and outputs, at rates ``drop_inputs``, ``drop_states`` and
    ``drop_outputs``. The masks are drawn at the first step and kept until ``reset()``
    (``unroll`` resets)."""

    def __init__(self, base_cell, drop_inputs=0., drop_states=0., drop_outputs=0.):
        if drop_states and isinstance(base_cell, BidirectionalCell):
            raise MXNetError("VariationalDropoutCell: drop_states on a BidirectionalCell "
                             "cannot be stepped; wrap the cells inside it instead")
        super().__init__(base_cell)
        self.drop_inputs = drop_inputs
        self.drop_states = drop_states
        self.drop_outputs = drop_outputs
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def _alias(self):
        return "vardrop"

    def reset(self):
        super().reset()
        self.drop_inputs_mask = self.drop_states_mask = self.drop_outputs_mask = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out = {self.drop_outputs}, "
                f"p_state = {self.drop_states})")

    def hybrid_forward(self, F, inputs, states):
        if self.drop_states and self.drop_states_mask is None:
            self.drop_states_mask = F.Dropout(F.ones_like(states[0]), p=self.drop_states)
        if self.drop_inputs and self.drop_inputs_mask is None:
            self.drop_inputs_mask = F.Dropout(F.ones_like(inputs), p=self.drop_inputs)
        if self.drop_states:
            states = [states[0] * self.drop_states_mask] + list(states[1:])
        if self.drop_inputs:
            inputs = inputs * self.drop_inputs_mask
        output, states = self.base_cell(inputs, states)
        if self.drop_outputs:
            if self.drop_outputs_mask is None:
                self.drop_outputs_mask = F.Dropout(F.ones_like(output), p=self.drop_outputs)
            output = output * self.drop_outputs_mask
        return output, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        if self.drop_states:
            return super().unroll(length, inputs, begin_state, layout, merge_outputs,
                                  valid_length=valid_length)
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, True)
        states = _begin_state(self, F, begin_state, inputs, batch_size)
        if self.drop_inputs:
            inputs = F.Dropout(inputs, p=self.drop_inputs, axes=(axis,))
        outputs, states = self.base_cell.unroll(length, inputs, states, layout,
                                                merge_outputs=True, valid_length=valid_length)
        if self.drop_outputs:
            outputs = F.Dropout(outputs, p=self.drop_outputs, axes=(axis,))
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSOR_TYPES)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        if valid_length is not None:
            outputs = mask_invalid(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, states


class LSTMPCell(LSTMCell):
    """LSTM cell whose hidden state is projected to ``projection_size`` by ``h2r_weight``
    (Sak et al., 2014): states ``[r, c]``, output ``r``."""

    def __init__(self, hidden_size, projection_size, i2h_weight_initializer=None,
                 h2h_weight_initializer=None, h2r_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        _GatedCell.__init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                            i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                            params, recurrent_size=projection_size)
        self._activation, self._recurrent_activation = "tanh", "sigmoid"
        self._projection_size = projection_size
        self.h2r_weight = self.params.get("h2r_weight", shape=(projection_size, hidden_size),
                                          init=h2r_weight_initializer,
                                          allow_deferred_init=True)

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._projection_size), "__layout__": "NC"},
                {"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _alias(self):
        return "lstmp"

    def __repr__(self):
        return f"{type(self).__name__}({self._mapping()} -> {self.h2r_weight.shape[0]})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, h2r_weight,
                       i2h_bias, h2h_bias):
        prefix, out_gate, next_c = self._gate_values(F, inputs, states, i2h_weight,
                                                     h2h_weight, i2h_bias, h2h_bias)
        hidden = F.elemwise_mul(out_gate, F.Activation(next_c, act_type="tanh"),
                                name=prefix + "hidden")
        next_r = F.FullyConnected(data=hidden, num_hidden=self._projection_size,
                                  weight=h2r_weight, no_bias=True, name=prefix + "out")
        return next_r, [next_r, next_c]


def dynamic_unroll(cell, inputs, begin_state, drop_inputs=0, drop_outputs=0, layout="TNC",
                   valid_length=None):
    """Run ``cell`` over every step of ``inputs`` (one array or symbol with a time axis per
    ``layout``) as one ``F.contrib.foreach`` loop, so a hybridized graph holds the step
    once. Returns ``(outputs, states)``, outputs in ``layout``. With ``valid_length``
    (batch,), each example keeps its state from its last valid step and its outputs past it
    are zero. ``drop_inputs`` / ``drop_outputs``: dropout rates, one mask shared over the
    time axis (MXNet's NTC path shares it over the batch axis instead)."""
    inputs, axis, F, _ = format_sequence(None, inputs, layout, True)
    if axis != 0:
        inputs = F.swapaxes(inputs, dim1=0, dim2=axis)       # the loop runs over axis 0
    if drop_inputs:
        inputs = F.Dropout(inputs, p=drop_inputs, axes=(0,))
    states = list(begin_state) if isinstance(begin_state, (list, tuple)) else [begin_state]
    if valid_length is None:
        outputs, states = F.contrib.foreach(lambda x, s: cell(x, s), inputs, states)
    else:
        outputs, states = F.contrib.foreach(_masked_step(cell, F, valid_length), inputs,
                                            states + [F.zeros(shape=(1,))])
        states = states[:-1]                                 # drop the step counter
    if drop_outputs:
        outputs = F.Dropout(outputs, p=drop_outputs, axes=(0,))
    if axis != 0:
        outputs = F.swapaxes(outputs, dim1=0, dim2=axis)
    if valid_length is not None:
        outputs = F.SequenceMask(outputs, sequence_length=valid_length,
                                 use_sequence_length=True, axis=axis)
    return outputs, states


def _masked_step(cell, F, valid_length):
    """A loop body whose last state counts the steps: examples already past their valid
    length keep their previous states."""
    def step(x, states):
        step_no, old = states[-1], states[:-1]
        out, new = cell(x, old)
        alive = F.broadcast_greater(valid_length, step_no)
        new = [F.where(alive, n, o) for n, o in zip(new, old)]
        return out, new + [step_no + 1]
    return step
