"""``FusedRNNCell``: a whole multi-layer (bidirectional) RNN, LSTM or GRU as one ``RNN`` op
over MXNet's packed parameter vector."""

from __future__ import annotations

import warnings

from .. import ndarray, symbol
from .._runtime.base import ParamError
from .. import initializer
from ..initializer._fused_layout import FusedLayout
from ._sequence import normalize_sequence
from .base_cell import BaseRNNCell, StepError
from .cells import DropoutCell, GRUCell, LSTMCell, RNNCell
from .stacks import BidirectionalCell, SequentialRNNCell

__all__ = ["FusedRNNCell"]

class FusedRNNCell(BaseRNNCell):
    """``num_layers`` layers of ``mode`` (``'rnn_relu'``, ``'rnn_tanh'``, ``'lstm'``,
    ``'gru'``) in one ``RNN`` op, on one weight vector ``<prefix>parameters``.

    ``bidirectional`` doubles each layer's output width; ``dropout`` applies between layers
    in training; ``get_next_state`` makes ``unroll`` return the final states (else ``[]``).
    The prefix defaults to ``'<mode>_'``. ``unpack_weights`` names the per-layer, per-gate
    arrays ``<prefix><l|r><layer>_<i2h|h2h><gate>_<weight|bias>``, which are the names the
    cells of ``unfuse()`` use.
    """

    def __init__(self, num_hidden, num_layers=1, mode="lstm", bidirectional=False,
                 dropout=0.0, get_next_state=False, forget_bias=1.0, prefix=None, params=None):
        super().__init__(prefix=f"{mode}_" if prefix is None else prefix, params=params)
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bool(bidirectional)
        self._dropout = dropout
        self._get_next_state = get_next_state
        self._forget_bias = forget_bias
        self._parameter = self._params.get("parameters", init=initializer.FusedRNN(
            None, num_hidden, num_layers, mode, self._bidirectional, forget_bias))
        self._packing = FusedLayout(num_hidden, num_layers, mode, bidirectional, self._prefix,
                                    self._parameter.name)
        self._directions = self._packing.directions

    @property
    def state_info(self):
        shape = (len(self._directions) * self._num_layers, 0, self._num_hidden)
        return [{"shape": shape, "__layout__": "LNC"}
                for _ in range(2 if self._mode == "lstm" else 1)]

    @property
    def _gate_names(self):
        return self._packing.gates

    def unpack_weights(self, args):
        return self._packing.unpack(args)

    def pack_weights(self, args):
        return self._packing.pack(args)

    def __call__(self, inputs, states):
        raise StepError("FusedRNNCell cannot be stepped; use unroll, or unfuse() for a cell "
                        "that steps")

    def unroll(self, length, inputs, begin_state=None, layout="NTC", merge_outputs=None):
        self.reset()
        inputs, axis = normalize_sequence(length, inputs, layout, True)
        if axis not in (0, 1):
            raise ParamError(f"FusedRNNCell.unroll: layout {layout!r} puts time on axis "
                             f"{axis}; the RNN op takes 'TNC' (or 'NTC', swapped to it)")
        if axis == 1:
            warnings.warn("FusedRNNCell: NTC layout is swapped to TNC around the RNN op; "
                          "pass TNC to save the two transposes", stacklevel=2)
            inputs = symbol.swapaxes(inputs, dim1=0, dim2=1)
        if begin_state is None:
            begin_state = self.begin_state()
        states = dict(zip(("state", "state_cell"), begin_state[:len(self.state_info)]))
        rnn = symbol.RNN(data=inputs, parameters=self._parameter, state_size=self._num_hidden,
                         num_layers=self._num_layers, bidirectional=self._bidirectional,
                         p=self._dropout, state_outputs=self._get_next_state, mode=self._mode,
                         name=f"{self._prefix}rnn", **states)
        if self._get_next_state:
            outputs = rnn[0]
            states = [rnn[i + 1] for i in range(len(self.state_info))]
            for state in states:
                state._set_attr(__layout__="LNC")
        else:
            outputs, states = rnn, []
        if axis == 1:
            outputs = symbol.swapaxes(outputs, dim1=0, dim2=1)
        outputs, _ = normalize_sequence(length, outputs, layout, merge_outputs)
        return outputs, states

    def unfuse(self):
        """The same network as a ``SequentialRNNCell`` of step cells (one per layer, in a
        ``BidirectionalCell`` if bidirectional, ``DropoutCell`` between layers) whose weight
        names are those ``unpack_weights`` makes."""
        def make(prefix):
            if self._mode == "lstm":
                return LSTMCell(self._num_hidden, prefix=prefix, forget_bias=self._forget_bias)
            if self._mode == "gru":
                return GRUCell(self._num_hidden, prefix=prefix)
            return RNNCell(self._num_hidden, activation=self._mode[4:], prefix=prefix)

        stack = SequentialRNNCell()
        for i in range(self._num_layers):
            if self._bidirectional:
                stack.add(BidirectionalCell(make(f"{self._prefix}l{i}_"),
                                            make(f"{self._prefix}r{i}_"),
                                            output_prefix=f"{self._prefix}bi_l{i}_"))
            else:
                stack.add(make(f"{self._prefix}l{i}_"))
            if self._dropout > 0 and i != self._num_layers - 1:
                stack.add(DropoutCell(self._dropout, prefix=f"{self._prefix}_dropout{i}_"))
        return stack
