"""Recurrent cells: one time step as a Block, and ``unroll`` over a sequence (MXNet 1.9's
``mxnet.gluon.rnn.rnn_cell``)."""

from __future__ import annotations

from ... import ndarray, symbol
from ..._runtime.base import MXNetError, numeric_types
from ..block import Block, HybridBlock
from ..utils import _indent
from ._sequence import (TENSOR_TYPES, format_sequence, last_valid_states, mask_invalid,
                        reverse_steps)

__all__ = ["RecurrentCell", "HybridRecurrentCell", "RNNCell", "LSTMCell", "GRUCell",
           "SequentialRNNCell", "HybridSequentialRNNCell", "DropoutCell", "ModifierCell",
           "ZoneoutCell", "ResidualCell", "BidirectionalCell"]

_ACTIVATIONS = ("tanh", "relu", "sigmoid", "softsign")


def _make_state(func, name, info):
    """``func(name=..., **info)``; the ``__layout__`` hint becomes a symbol attribute (the
    NDArray creators take no such keyword)."""
    info = dict(info)
    layout = info.pop("__layout__", None)
    state = func(name=name, **info)
    if layout is not None and isinstance(state, symbol.Symbol):
        state._set_attr(__layout__=layout)
    return state


def _begin_state(cell, F, begin_state, inputs, batch_size):
    if begin_state is not None:
        return begin_state
    if F is ndarray:
        ctx = (inputs if isinstance(inputs, TENSOR_TYPES) else inputs[0]).context
        with ctx:
            return cell.begin_state(func=F.zeros, batch_size=batch_size)
    return cell.begin_state(func=F.zeros, batch_size=batch_size)


def _check_unmodified(cell):
    if cell._modified:
        raise MXNetError(f"{type(cell).__name__} {cell.prefix!r}: a modifier cell (such as "
                         f"ZoneoutCell) wraps this cell; call the modifier cell instead")


class RecurrentCell(Block):
    """Base of the recurrent cells: ``cell(inputs, states)`` is one step, returning
    ``(output, new_states)``; ``unroll`` runs ``length`` steps."""

    def __init__(self, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._modified = False
        self.reset()

    def reset(self):
        """Reset the step counters (names of the next graph's nodes) before another unroll."""
        self._init_counter = -1
        self._counter = -1
        for cell in self._children.values():
            cell.reset()

    def state_info(self, batch_size=0):
        """``[{'shape': ..., '__layout__': ...}]``, one per state."""
        raise NotImplementedError

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The first step's states, made by ``func(name=..., shape=..., **kwargs)``
        (``mx.nd.zeros``, ``mx.sym.var``, ...)."""
        _check_unmodified(self)
        states = []
        for info in self.state_info(batch_size):
            self._init_counter += 1
            info = dict(info or {}, **kwargs)
            states.append(_make_state(
                func, f"{self._prefix}begin_state_{self._init_counter}", info))
        return states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        """Run ``length`` steps over ``inputs`` (one array with a time axis per ``layout``,
        or a list of steps); returns ``(outputs, states)``. ``merge_outputs`` True gives one
        array, False a list, None whichever is at hand. With ``valid_length`` (batch,), the
        states are each example's last valid ones and outputs past it are zero."""
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        states = _begin_state(self, F, begin_state, inputs, batch_size)
        outputs, all_states = [], []
        for i in range(length):
            output, states = self(inputs[i], states)
            outputs.append(output)
            if valid_length is not None:
                all_states.append(states)
        if valid_length is not None:
            states = last_valid_states(F, all_states, valid_length)
            outputs = mask_invalid(F, outputs, length, valid_length, axis, True)
        outputs, _, _, _ = format_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def _get_activation(self, F, inputs, activation, **kwargs):
        if activation in _ACTIVATIONS:
            return getattr(F, activation)(inputs, **kwargs)
        if isinstance(activation, str):
            return F.Activation(inputs, act_type=activation, **kwargs)
        if isinstance(activation, Block):
            return activation(inputs)
        return activation(inputs, **kwargs)

    def forward(self, inputs, states):
        self._counter += 1
        return super().forward(inputs, states)


class HybridRecurrentCell(RecurrentCell, HybridBlock):
    """A recurrent cell that can be hybridized."""

    def hybrid_forward(self, F, x, *args, **kwargs):
        raise NotImplementedError


class _GatedCell(HybridRecurrentCell):
    """The i2h/h2h weights and biases of a cell with ``gates`` blocks of ``hidden_size``."""

    _gates = 1

    def __init__(self, hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, input_size, prefix, params,
                 recurrent_size=None):
        super().__init__(prefix=prefix, params=params)
        self._hidden_size = hidden_size
        self._input_size = input_size
        rows = self._gates * hidden_size
        recurrent_size = hidden_size if recurrent_size is None else recurrent_size
        for name, shape, init in (("i2h_weight", (rows, input_size), i2h_weight_initializer),
                                  ("h2h_weight", (rows, recurrent_size),
                                   h2h_weight_initializer),
                                  ("i2h_bias", (rows,), i2h_bias_initializer),
                                  ("h2h_bias", (rows,), h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}]

    def _mapping(self):
        shape = self.i2h_weight.shape
        return f"{shape[1] if shape[1] else None} -> {shape[0]}"

    def __repr__(self):
        return f"{type(self).__name__}({self._mapping()})"

    def _i2h_h2h(self, F, inputs, state, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        rows = self._gates * self._hidden_size
        i2h = F.FullyConnected(data=inputs, weight=i2h_weight, bias=i2h_bias,
                               num_hidden=rows, name=prefix + "i2h")
        h2h = F.FullyConnected(data=state, weight=h2h_weight, bias=h2h_bias,
                               num_hidden=rows, name=prefix + "h2h")
        return prefix, i2h, h2h


class RNNCell(_GatedCell):
    r"""Elman RNN cell: ``h_t = activation(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)``."""

    def __init__(self, hidden_size, activation="tanh", i2h_weight_initializer=None,
                 h2h_weight_initializer=None, i2h_bias_initializer="zeros",
                 h2h_bias_initializer="zeros", input_size=0, prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation

    def _alias(self):
        return "rnn"

    def __repr__(self):
        return f"{type(self).__name__}({self._mapping()}, {self._activation})"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight,
                                         i2h_bias, h2h_bias)
        output = self._get_activation(F, F.elemwise_add(i2h, h2h, name=prefix + "plus0"),
                                      self._activation, name=prefix + "out")
        return output, [output]


class LSTMCell(_GatedCell):
    r"""LSTM cell, gates ``i, f, g, o`` in that order in the weights' rows; states
    ``[h, c]``."""

    _gates = 4

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None, activation="tanh", recurrent_activation="sigmoid"):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)
        self._activation = activation
        self._recurrent_activation = recurrent_activation

    def state_info(self, batch_size=0):
        return [{"shape": (batch_size, self._hidden_size), "__layout__": "NC"}] * 2

    def _alias(self):
        return "lstm"

    def _gate_values(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._i2h_h2h(F, inputs, states[0], i2h_weight, h2h_weight,
                                         i2h_bias, h2h_bias)
        gates = F.SliceChannel(F.elemwise_add(i2h, h2h, name=prefix + "plus0"),
                               num_outputs=4, name=prefix + "slice")
        act, rec = self._activation, self._recurrent_activation
        in_gate = self._get_activation(F, gates[0], rec, name=prefix + "i")
        forget_gate = self._get_activation(F, gates[1], rec, name=prefix + "f")
        in_transform = self._get_activation(F, gates[2], act, name=prefix + "c")
        out_gate = self._get_activation(F, gates[3], rec, name=prefix + "o")
        next_c = F.elemwise_add(F.elemwise_mul(forget_gate, states[1], name=prefix + "mul0"),
                                F.elemwise_mul(in_gate, in_transform, name=prefix + "mul1"),
                                name=prefix + "state")
        return prefix, out_gate, next_c

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, out_gate, next_c = self._gate_values(F, inputs, states, i2h_weight,
                                                     h2h_weight, i2h_bias, h2h_bias)
        next_h = F.elemwise_mul(out_gate, F.Activation(next_c, act_type=self._activation,
                                                       name=prefix + "activation0"),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class GRUCell(_GatedCell):
    r"""GRU cell as cuDNN's: gates ``r, z, n``, the reset gate applied after the recurrent
    matrix product: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``."""

    _gates = 3

    def __init__(self, hidden_size, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 prefix=None, params=None):
        super().__init__(hidden_size, i2h_weight_initializer, h2h_weight_initializer,
                         i2h_bias_initializer, h2h_bias_initializer, input_size, prefix,
                         params)

    def _alias(self):
        return "gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prev_h = states[0]
        prefix, i2h, h2h = self._i2h_h2h(F, inputs, prev_h, i2h_weight, h2h_weight,
                                         i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, name=prefix + "h2h_slice")
        reset_gate = F.Activation(F.elemwise_add(i2h_r, h2h_r, name=prefix + "plus0"),
                                  act_type="sigmoid", name=prefix + "r_act")
        update_gate = F.Activation(F.elemwise_add(i2h_z, h2h_z, name=prefix + "plus1"),
                                   act_type="sigmoid", name=prefix + "z_act")
        candidate = F.Activation(
            F.elemwise_add(i2h, F.elemwise_mul(reset_gate, h2h, name=prefix + "mul0"),
                           name=prefix + "plus2"), act_type="tanh", name=prefix + "h_act")
        ones = F.ones_like(update_gate, name=prefix + "ones_like0")
        next_h = F.elemwise_add(
            F.elemwise_mul(F.elemwise_sub(ones, update_gate, name=prefix + "minus0"),
                           candidate, name=prefix + "mul1"),
            F.elemwise_mul(update_gate, prev_h, name=prefix + "mul20"), name=prefix + "out")
        return next_h, [next_h]


class _Stack:
    """What both sequential cells share: children in order, states split among them."""

    def __repr__(self):
        lines = "\n".join(f"({i}): {_indent(repr(m), 2)}" for i, m in self._children.items())
        return f"{type(self).__name__}(\n{lines}\n)"

    def add(self, cell):
        """Append ``cell`` to the stack."""
        self.register_child(cell)

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def __call__(self, inputs, states):
        self._counter += 1
        next_states, p = [], 0
        for cell in self._children.values():
            if isinstance(cell, BidirectionalCell):
                raise MXNetError(f"{type(self).__name__}: a BidirectionalCell in the stack "
                                 f"cannot be stepped; use unroll")
            n = len(cell.state_info())
            inputs, state = cell(inputs, states[p:p + n])
            p += n
            next_states.extend(state)
        return inputs, next_states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, batch_size = format_sequence(length, inputs, layout, None)
        begin_state = _begin_state(self, F, begin_state, inputs, batch_size)
        cells = list(self._children.values())
        next_states, p = [], 0
        for i, cell in enumerate(cells):
            n = len(cell.state_info())
            inputs, states = cell.unroll(
                length, inputs=inputs, begin_state=begin_state[p:p + n], layout=layout,
                merge_outputs=None if i < len(cells) - 1 else merge_outputs,
                valid_length=valid_length)
            p += n
            next_states.extend(states)
        return inputs, next_states

    def __getitem__(self, i):
        return self._children[str(i)]

    def __len__(self):
        return len(self._children)


class SequentialRNNCell(_Stack, RecurrentCell):
    """Cells stacked: each one's output is the next one's input."""

    def hybrid_forward(self, *args, **kwargs):
        raise NotImplementedError


class HybridSequentialRNNCell(_Stack, HybridRecurrentCell):
    """Hybridizable cells stacked: each one's output is the next one's input."""

    def hybrid_forward(self, F, inputs, states):
        return self(inputs, states)


class DropoutCell(HybridRecurrentCell):
    """Dropout of rate ``rate`` on the input; states pass through. ``axes``: the axes the
    dropout mask is shared along."""

    def __init__(self, rate, axes=(), prefix=None, params=None):
        super().__init__(prefix, params)
        if not isinstance(rate, numeric_types):
            raise MXNetError(f"DropoutCell: rate must be a number, got {rate!r}")
        self._rate = rate
        self._axes = axes

    def __repr__(self):
        return f"{type(self).__name__}(rate={self._rate}, axes={self._axes})"

    def state_info(self, batch_size=0):
        return []

    def _alias(self):
        return "dropout"

    def hybrid_forward(self, F, inputs, states):
        if self._rate > 0:
            inputs = F.Dropout(data=inputs, p=self._rate, axes=self._axes,
                               name=f"t{self._counter}_fwd")
        return inputs, states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, _, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if isinstance(inputs, TENSOR_TYPES):
            return self.hybrid_forward(F, inputs, begin_state if begin_state else [])
        return super().unroll(length, inputs, begin_state=begin_state, layout=layout,
                              merge_outputs=merge_outputs)


class ModifierCell(HybridRecurrentCell):
    """Base of the cells that wrap a ``base_cell`` and change its step (Zoneout, residual,
    dropout): the base cell is then only used through the modifier."""

    def __init__(self, base_cell):
        if base_cell._modified:
            raise MXNetError(f"{type(self).__name__}: cell {base_cell.name!r} is already "
                             f"modified; a cell can be modified only once")
        base_cell._modified = True
        super().__init__(prefix=base_cell.prefix + self._alias(), params=None)
        self.base_cell = base_cell

    @property
    def params(self):
        return self.base_cell.params

    def state_info(self, batch_size=0):
        return self.base_cell.state_info(batch_size)

    def begin_state(self, func=ndarray.zeros, **kwargs):
        _check_unmodified(self)
        self.base_cell._modified = False
        try:
            return self.base_cell.begin_state(func=func, **kwargs)
        finally:
            self.base_cell._modified = True

    def hybrid_forward(self, F, inputs, states):
        raise NotImplementedError

    def __repr__(self):
        return f"{type(self).__name__}({self.base_cell!r})"


class ZoneoutCell(ModifierCell):
    """Zoneout: each output and state unit keeps its previous value with probability
    ``zoneout_outputs`` / ``zoneout_states`` (in training)."""

    def __init__(self, base_cell, zoneout_outputs=0., zoneout_states=0.):
        if isinstance(base_cell, BidirectionalCell):
            raise MXNetError("ZoneoutCell: a BidirectionalCell cannot be stepped; wrap the "
                             "cells inside it instead")
        super().__init__(base_cell)
        self.zoneout_outputs = zoneout_outputs
        self.zoneout_states = zoneout_states
        self._prev_output = None

    def __repr__(self):
        return (f"{type(self).__name__}(p_out={self.zoneout_outputs}, "
                f"p_state={self.zoneout_states}, {self.base_cell!r})")

    def _alias(self):
        return "zoneout"

    def reset(self):
        super().reset()
        self._prev_output = None

    def hybrid_forward(self, F, inputs, states):
        next_output, next_states = self.base_cell(inputs, states)

        def keep_new(p, like):
            return F.Dropout(F.ones_like(like), p=p)

        prev_output = self._prev_output
        if prev_output is None:
            prev_output = F.zeros_like(next_output)
        output = (F.where(keep_new(self.zoneout_outputs, next_output), next_output,
                          prev_output) if self.zoneout_outputs != 0. else next_output)
        if self.zoneout_states != 0.:
            next_states = [F.where(keep_new(self.zoneout_states, new), new, old)
                           for new, old in zip(next_states, states)]
        self._prev_output = output
        return output, next_states


class ResidualCell(ModifierCell):
    """The base cell's output plus its input (Wu et al., 2016)."""

    def hybrid_forward(self, F, inputs, states):
        output, states = self.base_cell(inputs, states)
        return F.elemwise_add(output, inputs, name=f"t{self._counter}_fwd"), states

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        self.base_cell._modified = False
        try:
            outputs, states = self.base_cell.unroll(
                length, inputs=inputs, begin_state=begin_state, layout=layout,
                merge_outputs=merge_outputs, valid_length=valid_length)
        finally:
            self.base_cell._modified = True
        if merge_outputs is None:
            merge_outputs = isinstance(outputs, TENSOR_TYPES)
        inputs, axis, F, _ = format_sequence(length, inputs, layout, merge_outputs)
        if valid_length is not None:
            inputs = mask_invalid(F, inputs, length, valid_length, axis, merge_outputs)
        if merge_outputs:
            return F.elemwise_add(outputs, inputs), states
        return [F.elemwise_add(o, i) for o, i in zip(outputs, inputs)], states


class BidirectionalCell(HybridRecurrentCell):
    """``l_cell`` over the sequence and ``r_cell`` over it reversed, outputs concatenated
    per step (``unroll`` only)."""

    def __init__(self, l_cell, r_cell, output_prefix="bi_"):
        super().__init__(prefix="", params=None)
        self.register_child(l_cell, "l_cell")
        self.register_child(r_cell, "r_cell")
        self._output_prefix = output_prefix

    def __call__(self, inputs, states):
        raise MXNetError("BidirectionalCell cannot be stepped; use unroll")

    def __repr__(self):
        return (f"{type(self).__name__}(forward={self._children['l_cell']!r}, "
                f"backward={self._children['r_cell']!r})")

    def state_info(self, batch_size=0):
        return [info for c in self._children.values() for info in c.state_info(batch_size)]

    def begin_state(self, **kwargs):
        _check_unmodified(self)
        return [s for c in self._children.values() for s in c.begin_state(**kwargs)]

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None,
               valid_length=None):
        self.reset()
        inputs, axis, F, batch_size = format_sequence(length, inputs, layout, False)
        reversed_inputs = reverse_steps(inputs, length, valid_length)
        states = _begin_state(self, F, begin_state, inputs, batch_size)
        l_cell, r_cell = self._children.values()
        n_left = len(l_cell.state_info(batch_size))
        l_outputs, l_states = l_cell.unroll(length, inputs=inputs, begin_state=states[:n_left],
                                            layout=layout, merge_outputs=merge_outputs,
                                            valid_length=valid_length)
        r_outputs, r_states = r_cell.unroll(length, inputs=reversed_inputs,
                                            begin_state=states[n_left:], layout=layout,
                                            merge_outputs=False, valid_length=valid_length)
        r_outputs = reverse_steps(r_outputs, length, valid_length)
        if merge_outputs is None:
            merge_outputs = isinstance(l_outputs, TENSOR_TYPES)
            l_outputs, _, _, _ = format_sequence(None, l_outputs, layout, merge_outputs)
            r_outputs, _, _, _ = format_sequence(None, r_outputs, layout, merge_outputs)
        if merge_outputs:
            if not isinstance(r_outputs, TENSOR_TYPES):
                r_outputs = F.stack(*r_outputs, axis=axis)
            outputs = F.concat(l_outputs, r_outputs, dim=2, name=f"{self._output_prefix}out")
        else:
            outputs = [F.concat(l, r, dim=1, name=f"{self._output_prefix}t{i}")
                       for i, (l, r) in enumerate(zip(l_outputs, r_outputs))]
        if valid_length is not None:
            outputs = mask_invalid(F, outputs, length, valid_length, axis, merge_outputs)
        return outputs, l_states + r_states
