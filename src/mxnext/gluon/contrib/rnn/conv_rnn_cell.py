"""Convolutional recurrent cells (MXNet 1.9's ``mxnet.gluon.contrib.rnn.conv_rnn_cell``):
RNN, LSTM and GRU cells whose input-to-hidden and hidden-to-hidden maps are convolutions
(Shi et al., 2015), in 1, 2 and 3 spatial dimensions.

The states keep the spatial size the i2h convolution gives the input (stride 1); the h2h
convolution is padded to keep it, hence its odd kernels. Parameters are ``i2h_weight``,
``h2h_weight``, ``i2h_bias`` and ``h2h_bias`` with ``gates * hidden_channels`` filters."""

from __future__ import annotations

from ...._runtime.base import MXNetError
from ...rnn.rnn_cell import HybridRecurrentCell

__all__ = ["Conv1DRNNCell", "Conv2DRNNCell", "Conv3DRNNCell",
           "Conv1DLSTMCell", "Conv2DLSTMCell", "Conv3DLSTMCell",
           "Conv1DGRUCell", "Conv2DGRUCell", "Conv3DGRUCell"]


def _per_dim(cls, name, value, dims):
    """An int or a ``dims``-tuple setting as a tuple."""
    if isinstance(value, int):
        return (value,) * dims
    value = tuple(value)
    if len(value) != dims:
        raise MXNetError(f"{cls}: {name} must be an int or a tuple of {dims} ints for "
                         f"{dims}-D convolution, got {value}")
    return value


def _conv_out_size(sizes, kernel, pad, dilate):
    """Spatial sizes after a stride-1 convolution (0, an unknown size, stays 0)."""
    return tuple(x + 2 * p - d * (k - 1) if x else 0
                 for x, k, p, d in zip(sizes, kernel, pad, dilate))


class _ConvCellBase(HybridRecurrentCell):
    """The two convolutions and the state shape shared by the three cell kinds."""

    _gates = 1
    _state_count = 1

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                 i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                 i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout, activation,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        cls = type(self).__name__
        self._hidden_channels = hidden_channels
        self._input_shape = tuple(input_shape)
        self._conv_layout = conv_layout
        self._activation = activation
        self._i2h_kernel = _per_dim(cls, "i2h_kernel", i2h_kernel, dims)
        self._i2h_pad = _per_dim(cls, "i2h_pad", i2h_pad, dims)
        self._i2h_dilate = _per_dim(cls, "i2h_dilate", i2h_dilate, dims)
        self._h2h_kernel = _per_dim(cls, "h2h_kernel", h2h_kernel, dims)
        self._h2h_dilate = _per_dim(cls, "h2h_dilate", h2h_dilate, dims)
        if any(k % 2 == 0 for k in self._h2h_kernel):
            raise MXNetError(f"{cls}: h2h_kernel must have odd sizes (the state keeps its "
                             f"size), got {self._h2h_kernel}")
        self._stride = (1,) * dims
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(self._h2h_dilate,
                                                               self._h2h_kernel))
        self._channel_axis = conv_layout.find("C")
        i2h_shape, h2h_shape = self._weight_shapes()
        filters = (hidden_channels * self._gates,)
        for name, shape, init in (("i2h_weight", i2h_shape, i2h_weight_initializer),
                                  ("h2h_weight", h2h_shape, h2h_weight_initializer),
                                  ("i2h_bias", filters, i2h_bias_initializer),
                                  ("h2h_bias", filters, h2h_bias_initializer)):
            setattr(self, name, self.params.get(name, shape=shape, init=init,
                                                allow_deferred_init=True))

    def _channels_first(self):
        return self._channel_axis == 1

    def _weight_shapes(self):
        """(i2h, h2h) weight shapes in the layout's order; 0 input channels = deferred."""
        filters, hidden = self._hidden_channels * self._gates, self._hidden_channels
        if self._channels_first():
            in_channels = self._input_shape[0]
            return ((filters, in_channels) + self._i2h_kernel,
                    (filters, hidden) + self._h2h_kernel)
        in_channels = self._input_shape[-1]
        return ((filters,) + self._i2h_kernel + (in_channels,),
                (filters,) + self._h2h_kernel + (hidden,))

    def _state_shape(self):
        sizes = self._input_shape[1:] if self._channels_first() else self._input_shape[:-1]
        out = _conv_out_size(sizes, self._i2h_kernel, self._i2h_pad, self._i2h_dilate)
        hidden = (self._hidden_channels,)
        return hidden + out if self._channels_first() else out + hidden

    def state_info(self, batch_size=0):
        info = {"shape": (batch_size,) + self._state_shape(), "__layout__": self._conv_layout}
        return [dict(info) for _ in range(self._state_count)]

    def __repr__(self):
        shape = self.i2h_weight.shape
        in_channels = shape[1 if self._channels_first() else -1]
        return (f"{type(self).__name__}({in_channels or None} -> {shape[0]}, "
                f"{self._activation}, {self._conv_layout})")

    def _convolutions(self, F, inputs, state, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix = f"t{self._counter}_"
        common = {"num_filter": self._hidden_channels * self._gates, "stride": self._stride,
                  "layout": self._conv_layout}
        i2h = F.Convolution(data=inputs, weight=i2h_weight, bias=i2h_bias,
                            kernel=self._i2h_kernel, pad=self._i2h_pad,
                            dilate=self._i2h_dilate, name=prefix + "i2h", **common)
        h2h = F.Convolution(data=state, weight=h2h_weight, bias=h2h_bias,
                            kernel=self._h2h_kernel, pad=self._h2h_pad,
                            dilate=self._h2h_dilate, name=prefix + "h2h", **common)
        return prefix, i2h, h2h


class _ConvRNN(_ConvCellBase):
    """``h_t = act(W * x_t + R * h_{t-1} + b)``."""

    def _alias(self):
        return "conv_rnn"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._convolutions(F, inputs, states[0], i2h_weight, h2h_weight,
                                              i2h_bias, h2h_bias)
        output = self._get_activation(F, i2h + h2h, self._activation, name=prefix + "out")
        return output, [output]


class _ConvLSTM(_ConvCellBase):
    """Gates i, f, c, o from the summed convolutions; states ``[h, c]``."""

    _gates = 4
    _state_count = 2

    def _alias(self):
        return "conv_lstm"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._convolutions(F, inputs, states[0], i2h_weight, h2h_weight,
                                              i2h_bias, h2h_bias)
        gates = F.SliceChannel(i2h + h2h, num_outputs=4, axis=self._channel_axis,
                               name=prefix + "slice")
        in_gate = F.Activation(gates[0], act_type="sigmoid", name=prefix + "i")
        forget_gate = F.Activation(gates[1], act_type="sigmoid", name=prefix + "f")
        candidate = self._get_activation(F, gates[2], self._activation, name=prefix + "c")
        out_gate = F.Activation(gates[3], act_type="sigmoid", name=prefix + "o")
        next_c = F.elemwise_add(forget_gate * states[1], in_gate * candidate,
                                name=prefix + "state")
        next_h = F.elemwise_mul(out_gate, self._get_activation(F, next_c, self._activation),
                                name=prefix + "out")
        return next_h, [next_h, next_c]


class _ConvGRU(_ConvCellBase):
    """Reset and update gates; the candidate sees the reset-scaled h2h convolution."""

    _gates = 3

    def _alias(self):
        return "conv_gru"

    def hybrid_forward(self, F, inputs, states, i2h_weight, h2h_weight, i2h_bias, h2h_bias):
        prefix, i2h, h2h = self._convolutions(F, inputs, states[0], i2h_weight, h2h_weight,
                                              i2h_bias, h2h_bias)
        i2h_r, i2h_z, i2h = F.SliceChannel(i2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "i2h_slice")
        h2h_r, h2h_z, h2h = F.SliceChannel(h2h, num_outputs=3, axis=self._channel_axis,
                                           name=prefix + "h2h_slice")
        reset = F.Activation(i2h_r + h2h_r, act_type="sigmoid", name=prefix + "r_act")
        update = F.Activation(i2h_z + h2h_z, act_type="sigmoid", name=prefix + "z_act")
        candidate = self._get_activation(F, i2h + reset * h2h, self._activation,
                                         name=prefix + "h_act")
        next_h = F.elemwise_add((1. - update) * candidate, update * states[0],
                                name=prefix + "out")
        return next_h, [next_h]


_LAYOUTS = {1: "NCW", 2: "NCHW", 3: "NCDHW"}


def _cell_class(kind, dims):
    """The public ``Conv<dims>D<kind>Cell`` over ``kind``'s base, with MXNet's signature
    and per-dimension defaults."""
    base = {"RNN": _ConvRNN, "LSTM": _ConvLSTM, "GRU": _ConvGRU}[kind]

    def __init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel,
                 i2h_pad=(0,) * dims, i2h_dilate=(1,) * dims, h2h_dilate=(1,) * dims,
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 conv_layout=_LAYOUTS[dims], activation="tanh", prefix=None, params=None):
        base.__init__(self, input_shape, hidden_channels, i2h_kernel, h2h_kernel, i2h_pad,
                      i2h_dilate, h2h_dilate, i2h_weight_initializer, h2h_weight_initializer,
                      i2h_bias_initializer, h2h_bias_initializer, dims, conv_layout,
                      activation, prefix=prefix, params=params)

    name = f"Conv{dims}D{kind}Cell"
    doc = (f"{dims}-D convolutional {kind} cell. ``input_shape`` is one step's sample "
           f"without the batch axis, in ``conv_layout`` order (default "
           f"{_LAYOUTS[dims]}; channels-last also accepted); a 0 channel count is inferred "
           f"at the first call.")
    return type(name, (base,), {"__init__": __init__, "__doc__": doc,
                                "__module__": __name__, "__qualname__": name})


Conv1DRNNCell, Conv2DRNNCell, Conv3DRNNCell = (_cell_class("RNN", d) for d in (1, 2, 3))
Conv1DLSTMCell, Conv2DLSTMCell, Conv3DLSTMCell = (_cell_class("LSTM", d) for d in (1, 2, 3))
Conv1DGRUCell, Conv2DGRUCell, Conv3DGRUCell = (_cell_class("GRU", d) for d in (1, 2, 3))
