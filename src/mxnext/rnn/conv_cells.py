"""Convolutional recurrent cells (Shi et al. 2015): ``ConvRNNCell``, ``ConvLSTMCell``,
``ConvGRUCell`` on their base ``BaseConvRNNCell``. The i2h and h2h projections are
convolutions, so states are feature maps shaped as the i2h convolution's output."""

from __future__ import annotations

from .. import symbol
from .._runtime.base import ParamError
from .base_cell import BaseRNNCell

__all__ = ["BaseConvRNNCell", "ConvRNNCell", "ConvLSTMCell", "ConvGRUCell"]


def leaky_relu(data, **kwargs):
    """The convolutional cells' default activation: ``LeakyReLU`` with slope 0.2."""
    return symbol.LeakyReLU(data, act_type="leaky", slope=0.2, **kwargs)


class BaseConvRNNCell(BaseRNNCell):
    """What the convolutional cells share. ``input_shape`` is one step's input shape (batch
    included) in ``conv_layout``; ``h2h_kernel`` must be odd so that h2h keeps the state's
    size (its padding is derived); initializers go on the four weight variables. ``prefix``
    defaults to the cell's name (``'ConvLSTM_'`` ...)."""

    _gate_names = ("",)
    _num_states = 1
    _default_prefix = ""

    def __init__(self, input_shape, num_hidden, h2h_kernel=(3, 3), h2h_dilate=(1, 1),
                 i2h_kernel=(3, 3), i2h_stride=(1, 1), i2h_pad=(1, 1), i2h_dilate=(1, 1),
                 i2h_weight_initializer=None, h2h_weight_initializer=None,
                 i2h_bias_initializer="zeros", h2h_bias_initializer="zeros",
                 activation=leaky_relu, prefix=None, params=None, conv_layout="NCHW"):
        super().__init__(prefix=self._default_prefix if prefix is None else prefix,
                         params=params)
        if any(k % 2 == 0 for k in h2h_kernel):
            raise ParamError(f"{type(self).__name__}: h2h_kernel must be odd in every "
                             f"dimension (the state keeps its size), got {tuple(h2h_kernel)}")
        self._h2h_kernel = tuple(h2h_kernel)
        self._h2h_dilate = tuple(h2h_dilate)
        self._h2h_pad = tuple(d * (k - 1) // 2 for d, k in zip(h2h_dilate, h2h_kernel))
        self._i2h_kernel = tuple(i2h_kernel)
        self._i2h_stride = tuple(i2h_stride)
        self._i2h_pad = tuple(i2h_pad)
        self._i2h_dilate = tuple(i2h_dilate)
        self._num_hidden = num_hidden
        self._input_shape = input_shape
        self._conv_layout = conv_layout
        self._activation = activation
        probe = symbol.Convolution(data=symbol.Variable("data"), num_filter=num_hidden,
                                   kernel=self._i2h_kernel, stride=self._i2h_stride,
                                   pad=self._i2h_pad, dilate=self._i2h_dilate,
                                   layout=conv_layout)
        out_shape = probe.infer_shape(data=input_shape)[1][0]
        self._state_shape = (0, *out_shape[1:])
        self._iW = self._params.get("i2h_weight", init=i2h_weight_initializer)
        self._hW = self._params.get("h2h_weight", init=h2h_weight_initializer)
        self._iB = self._params.get("i2h_bias", init=i2h_bias_initializer)
        self._hB = self._params.get("h2h_bias", init=h2h_bias_initializer)

    @property
    def _num_gates(self):
        return len(self._gate_names)

    @property
    def state_info(self):
        return [{"shape": self._state_shape, "__layout__": self._conv_layout}
                for _ in range(self._num_states)]

    def _conv_forward(self, inputs, states, name):
        width = self._num_hidden * self._num_gates
        i2h = symbol.Convolution(data=inputs, weight=self._iW, bias=self._iB, num_filter=width,
                                 kernel=self._i2h_kernel, stride=self._i2h_stride,
                                 pad=self._i2h_pad, dilate=self._i2h_dilate,
                                 layout=self._conv_layout, name=f"{name}i2h")
        h2h = symbol.Convolution(data=states[0], weight=self._hW, bias=self._hB,
                                 num_filter=width, kernel=self._h2h_kernel,
                                 dilate=self._h2h_dilate, pad=self._h2h_pad, stride=(1, 1),
                                 layout=self._conv_layout, name=f"{name}h2h")
        return i2h, h2h

    def _step_name(self):
        self._counter += 1
        return f"{self._prefix}t{self._counter}_"

    def _gates(self, data, n, name):
        return symbol.SliceChannel(data, num_outputs=n, axis=self._conv_layout.find("C"),
                                   name=name)


class ConvRNNCell(BaseConvRNNCell):
    """``h' = activation(conv(x) + conv(h))``."""

    _default_prefix = "ConvRNN_"

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        output = self._get_activation(i2h + h2h, self._activation, name=f"{name}out")
        return output, [output]


class ConvLSTMCell(BaseConvRNNCell):
    """LSTM with convolutions; ``activation`` replaces tanh on the candidate and the cell."""

    _gate_names = ("_i", "_f", "_c", "_o")
    _num_states = 2
    _default_prefix = "ConvLSTM_"

    def __call__(self, inputs, states):
        name = self._step_name()
        i2h, h2h = self._conv_forward(inputs, states, name)
        gates = self._gates(i2h + h2h, 4, f"{name}slice")
        in_gate = symbol.Activation(gates[0], act_type="sigmoid", name=f"{name}i")
        forget_gate = symbol.Activation(gates[1], act_type="sigmoid", name=f"{name}f")
        in_transform = self._get_activation(gates[2], self._activation, name=f"{name}c")
        out_gate = symbol.Activation(gates[3], act_type="sigmoid", name=f"{name}o")
        next_c = symbol._internal._plus(forget_gate * states[1], in_gate * in_transform,
                                        name=f"{name}state")
        next_h = symbol._internal._mul(out_gate, self._get_activation(next_c, self._activation),
                                       name=f"{name}out")
        return next_h, [next_h, next_c]


class ConvGRUCell(BaseConvRNNCell):
    """GRU with convolutions; ``activation`` replaces tanh on the candidate."""

    _gate_names = ("_r", "_z", "_o")
    _default_prefix = "ConvGRU_"

    def __call__(self, inputs, states):
        name = self._step_name()
        h = states[0]
        i2h, h2h = self._conv_forward(inputs, states, name)
        i2h_r, i2h_z, i2h_n = self._gates(i2h, 3, f"{name}_i2h_slice")
        h2h_r, h2h_z, h2h_n = self._gates(h2h, 3, f"{name}_h2h_slice")
        reset = symbol.Activation(i2h_r + h2h_r, act_type="sigmoid", name=f"{name}_r_act")
        update = symbol.Activation(i2h_z + h2h_z, act_type="sigmoid", name=f"{name}_z_act")
        candidate = self._get_activation(i2h_n + reset * h2h_n, self._activation,
                                         name=f"{name}_h_act")
        next_h = symbol._internal._plus((1.0 - update) * candidate, update * h,
                                        name=f"{name}out")
        return next_h, [next_h]
