"""Recurrent layers: a whole multi-layer (bidirectional) RNN, LSTM or GRU in one fused
``RNN`` op (MXNet 1.9's ``mxnet.gluon.rnn.rnn_layer``).

The parameters are MXNet's: ``{l|r}{layer}_{i2h|h2h}_{weight|bias}`` (and ``h2r_weight``
with a projection), concatenated in the ``RNN`` op's packed order at each forward.
"""

from __future__ import annotations

import re

from ... import ndarray, symbol
from ..._runtime.base import MXNetError, ParamError, ShapeError
from ..block import HybridBlock
from . import rnn_cell
from ._sequence import TENSOR_TYPES
from .rnn_cell import _make_state

__all__ = ["RNN", "LSTM", "GRU"]

_GATES = {"rnn_relu": 1, "rnn_tanh": 1, "lstm": 4, "gru": 3}
_SAVED_KEY = re.compile(r"(l|r)(\d+)_(i2h|h2h|h2r)_(weight|bias)\Z")


class _RNNLayer(HybridBlock):
    """The layers' shared body; ``mode`` is the ``RNN`` op's."""

    def __init__(self, hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                 i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                 h2h_bias_initializer, mode, projection_size, h2r_weight_initializer,
                 lstm_state_clip_min, lstm_state_clip_max, lstm_state_clip_nan, dtype,
                 **kwargs):
        super().__init__(**kwargs)
        if layout not in ("TNC", "NTC"):
            raise ParamError(f"{type(self).__name__}: layout must be 'TNC' or 'NTC', got "
                             f"{layout!r}")
        if (lstm_state_clip_min is None) != (lstm_state_clip_max is None):
            raise ParamError(f"{type(self).__name__}: state_clip_min and state_clip_max are "
                             f"set together, got {lstm_state_clip_min!r} and "
                             f"{lstm_state_clip_max!r}")
        if lstm_state_clip_nan and lstm_state_clip_min is not None:
            raise ParamError(f"{type(self).__name__}: state_clip_nan=True is not supported "
                             f"(NaN cell states propagate here)")
        self._hidden_size = hidden_size
        self._projection_size = projection_size or None
        self._num_layers = num_layers
        self._mode = mode
        self._layout = layout
        self._dropout = dropout
        self._dir = 2 if bidirectional else 1
        self._input_size = input_size
        self._i2h_weight_initializer = i2h_weight_initializer
        self._h2h_weight_initializer = h2h_weight_initializer
        self._i2h_bias_initializer = i2h_bias_initializer
        self._h2h_bias_initializer = h2h_bias_initializer
        self._lstm_state_clip_min = lstm_state_clip_min
        self._lstm_state_clip_max = lstm_state_clip_max
        self._lstm_options = {k: v for k, v in (("projection_size", self._projection_size),
                                                ("lstm_state_clip_min", lstm_state_clip_min),
                                                ("lstm_state_clip_max", lstm_state_clip_max))
                              if v is not None}
        self._dtype = dtype
        self._gates = _GATES[mode]
        self.skip_states = None

        rows, width = self._gates * hidden_size, input_size
        recurrent = self._projection_size or hidden_size
        for i in range(num_layers):
            for d in "lr"[:self._dir]:
                self._register_param(f"{d}{i}_i2h_weight", (rows, width), i2h_weight_initializer)
                self._register_param(f"{d}{i}_h2h_weight", (rows, recurrent),
                                     h2h_weight_initializer)
                self._register_param(f"{d}{i}_i2h_bias", (rows,), i2h_bias_initializer)
                self._register_param(f"{d}{i}_h2h_bias", (rows,), h2h_bias_initializer)
                if self._projection_size:
                    self._register_param(f"{d}{i}_h2r_weight", (recurrent, hidden_size),
                                         h2r_weight_initializer)
            width = recurrent * self._dir
        groups = ("i2h", "h2h", "h2r") if self._projection_size else ("i2h", "h2h")
        self._packed_order = [f"{d}{i}_{g}_{kind}" for kind in ("weight", "bias")
                              for i in range(num_layers) for d in "lr"[:self._dir]
                              for g in groups if (g, kind) != ("h2r", "bias")]

    def _register_param(self, name, shape, init):
        setattr(self, name, self.params.get(name, shape=shape, init=init,
                                            allow_deferred_init=True, dtype=self._dtype))

    def __repr__(self):
        shape = self.l0_i2h_weight.shape
        s = (f"{type(self).__name__}({shape[1] if shape[1] else None} -> "
             f"{shape[0] // self._gates}, {self._layout}")
        if self._num_layers != 1:
            s += f", num_layers={self._num_layers}"
        if self._dropout != 0:
            s += f", dropout={self._dropout}"
        if self._dir == 2:
            s += ", bidirectional"
        return s + ")"

    def _collect_params_with_prefix(self, prefix=""):
        """MXNet 1.9's keys in saved files: those of the unfused cell stack, such as
        ``_unfused.0.l_cell.i2h_weight`` (bidirectional) or ``_unfused.0.i2h_weight``."""
        if prefix:
            prefix += "."

        def saved_key(name):
            d, layer, group, kind = _SAVED_KEY.match(name).groups()
            cell = f"{d}_cell." if self._dir == 2 else ""
            return f"{prefix}_unfused.{layer}.{cell}{group}_{kind}"

        ret = {saved_key(name): param for name, param in self._reg_params.items()}
        for name, child in self._children.items():
            ret.update(child._collect_params_with_prefix(prefix + name))
        return ret

    def state_info(self, batch_size=0):
        shape = (self._num_layers * self._dir, batch_size, self._hidden_size)
        info = [{"shape": shape, "__layout__": "LNC", "dtype": self._dtype}]
        if self._mode != "lstm":
            return info
        h_shape = shape[:2] + (self._projection_size or self._hidden_size,)
        return [dict(info[0], shape=h_shape), info[0]]

    def _unfuse(self):
        """The same network as a ``HybridSequentialRNNCell`` of step cells sharing this
        layer's parameters."""
        if self._projection_size or self._lstm_state_clip_min is not None:
            raise MXNetError(f"{type(self).__name__}._unfuse: no step cell has the "
                             f"projection or the state clip")

        def make(prefix, **kwargs):
            if self._mode == "lstm":
                return rnn_cell.LSTMCell(self._hidden_size, prefix=prefix, **kwargs)
            if self._mode == "gru":
                return rnn_cell.GRUCell(self._hidden_size, prefix=prefix, **kwargs)
            return rnn_cell.RNNCell(self._hidden_size, activation=self._mode[4:],
                                    prefix=prefix, **kwargs)

        stack = rnn_cell.HybridSequentialRNNCell(prefix=self.prefix, params=self.params)
        with stack.name_scope():
            width = self._input_size
            for i in range(self._num_layers):
                kwargs = {"input_size": width,
                          "i2h_weight_initializer": self._i2h_weight_initializer,
                          "h2h_weight_initializer": self._h2h_weight_initializer,
                          "i2h_bias_initializer": self._i2h_bias_initializer,
                          "h2h_bias_initializer": self._h2h_bias_initializer}
                if self._dir == 2:
                    stack.add(rnn_cell.BidirectionalCell(make(f"l{i}_", **kwargs),
                                                         make(f"r{i}_", **kwargs)))
                else:
                    stack.add(make(f"l{i}_", **kwargs))
                if self._dropout > 0 and i != self._num_layers - 1:
                    stack.add(rnn_cell.DropoutCell(self._dropout))
                width = self._hidden_size * self._dir
        return stack

    def cast(self, dtype):
        super().cast(dtype)
        self._dtype = dtype

    def begin_state(self, batch_size=0, func=ndarray.zeros, **kwargs):
        """The initial states, made by ``func(name=..., shape=..., dtype=..., **kwargs)``."""
        return [_make_state(func, f"{self.prefix}h0_{i}", dict(info, **kwargs))
                for i, info in enumerate(self.state_info(batch_size))]

    def infer_shape(self, inputs, *args):
        """Complete the first layer's input width from ``inputs``."""
        width = inputs.shape[2]
        for d in "lr"[:self._dir]:
            param = getattr(self, f"{d}0_i2h_weight")
            param.shape = (param.shape[0], width)

    def __call__(self, inputs, states=None, **kwargs):
        self.skip_states = states is None
        if states is None:
            if isinstance(inputs, ndarray.NDArray):
                batch_size = inputs.shape[self._layout.find("N")]
                states = self.begin_state(batch_size, ctx=inputs.context, dtype=inputs.dtype)
            else:
                states = self.begin_state(0, func=symbol.zeros)
        if isinstance(states, TENSOR_TYPES):
            states = [states]
        return super().__call__(inputs, states, **kwargs)

    def hybrid_forward(self, F, inputs, states, **kwargs):
        if F is ndarray:
            batch_size = inputs.shape[self._layout.find("N")]
            for state, info in zip(states, self.state_info(batch_size)):
                if state.shape != info["shape"]:
                    raise ShapeError(f"{type(self).__name__}: a recurrent state has shape "
                                     f"{state.shape}, expected {info['shape']}")
        if self._layout == "NTC":
            inputs = F.swapaxes(inputs, dim1=0, dim2=1)
        outputs, states = self._fused(F, inputs, states, kwargs)
        if self._layout == "NTC":
            outputs = F.swapaxes(outputs, dim1=0, dim2=1)
        return outputs if self.skip_states else (outputs, states)

    def _fused(self, F, inputs, states, params):
        packed = F._internal._rnn_param_concat(
            *[params[name].reshape((-1,)) for name in self._packed_order], dim=0)
        rnn = F.RNN(inputs, packed, *states, state_size=self._hidden_size,
                    num_layers=self._num_layers, bidirectional=self._dir == 2,
                    p=self._dropout, state_outputs=True, mode=self._mode,
                    **self._lstm_options)
        return rnn[0], [rnn[i] for i in range(1, len(states) + 1)]


_INIT_DOC = ("hidden_size, num_layers, layout ('TNC' or 'NTC'), dropout (between layers, in "
             "training), bidirectional, initializers, input_size (0: from the first input), "
             "dtype; called as ``layer(x)`` it returns the output, as ``layer(x, states)`` "
             "``(output, states)``.")


class RNN(_RNNLayer):
    __doc__ = ("Multi-layer Elman RNN (``activation`` 'relu' or 'tanh'): " + _INIT_DOC)

    def __init__(self, hidden_size, num_layers=1, activation="relu", layout="TNC", dropout=0,
                 bidirectional=False, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", input_size=0,
                 dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "rnn_" + activation, None, None, None, None,
                         False, dtype, **kwargs)


class LSTM(_RNNLayer):
    __doc__ = ("Multi-layer LSTM (states ``[h, c]``; ``projection_size`` projects h, "
               "``state_clip_min/max`` clip c): " + _INIT_DOC)

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 projection_size=None, h2r_weight_initializer=None, state_clip_min=None,
                 state_clip_max=None, state_clip_nan=False, dtype="float32", **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "lstm", projection_size, h2r_weight_initializer,
                         state_clip_min, state_clip_max, state_clip_nan, dtype, **kwargs)


class GRU(_RNNLayer):
    __doc__ = ("Multi-layer GRU (cuDNN's: the reset gate applied after the recurrent "
               "product): " + _INIT_DOC)

    def __init__(self, hidden_size, num_layers=1, layout="TNC", dropout=0, bidirectional=False,
                 input_size=0, i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros", dtype="float32",
                 **kwargs):
        super().__init__(hidden_size, num_layers, layout, dropout, bidirectional, input_size,
                         i2h_weight_initializer, h2h_weight_initializer, i2h_bias_initializer,
                         h2h_bias_initializer, "gru", None, None, None, None, False, dtype,
                         **kwargs)
