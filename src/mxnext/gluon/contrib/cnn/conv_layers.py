"""``DeformableConvolution`` and ``ModulatedDeformableConvolution`` (MXNet 1.9's
``gluon.contrib.cnn``): a plain convolution of the input predicts the sampling offsets
(and, modulated, a mask) of every kernel tap, then the deformable op convolves the input
at those places. The offset convolution starts at zero (``offset_*_initializer``), so a
fresh layer computes a plain convolution.

Parameters: ``offset_weight`` / ``offset_bias`` of the offset convolution and
``deformable_conv_weight`` / ``deformable_conv_bias``; the latter's input channels are
inferred at the first call, as in MXNet.
"""

__all__ = ['DeformableConvolution', 'ModulatedDeformableConvolution']

from ...block import HybridBlock
from ...nn.activations import Activation
from ...nn.conv_layers import _check_layout, _ntuple


class _Deformable(HybridBlock):
    """Arguments and parameters the two layers share; ``_per_tap`` offset channels per
    kernel tap and deformable group (2 for (dy, dx), 3 with the mask)."""

    _per_tap = 2

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups,
                 num_deformable_group, layout, use_bias, in_channels, activation,
                 weight_initializer, bias_initializer, offset_weight_initializer,
                 offset_bias_initializer, offset_use_bias, op_name, adj, prefix, params):
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        _check_layout(name, layout, ('NCHW', 'NHWC'))
        kernel_size = _ntuple(name, 'kernel_size', kernel_size, 2)
        self._channels, self._in_channels, self._op_name = channels, in_channels, op_name
        taps = kernel_size[0] * kernel_size[1] * num_deformable_group
        self._offset_split = 2 * taps
        common = {'kernel': kernel_size, 'stride': _ntuple(name, 'strides', strides, 2),
                  'dilate': _ntuple(name, 'dilation', dilation, 2),
                  'pad': _ntuple(name, 'padding', padding, 2), 'num_group': groups,
                  'layout': layout, **({'adj': adj} if adj else {})}
        self._kwargs_offset = dict(common, num_filter=self._per_tap * taps,
                                   no_bias=not offset_use_bias)
        self._kwargs_deformable_conv = dict(common, num_filter=channels,
                                            num_deformable_group=num_deformable_group,
                                            no_bias=not use_bias)
        per_group = in_channels // groups
        offset_shape = ((self._per_tap * taps, per_group) + kernel_size if layout == 'NCHW'
                        else (self._per_tap * taps,) + kernel_size + (per_group,))
        self._make_params(offset_shape, (channels, 0) + kernel_size, use_bias, offset_use_bias,
                          weight_initializer, bias_initializer, offset_weight_initializer,
                          offset_bias_initializer)
        self.act = Activation(activation, prefix=activation + '_') if activation else None

    def _offset_params(self, shape, use_bias, weight_init, bias_init):
        self.offset_weight = self.params.get('offset_weight', shape=shape, init=weight_init,
                                             allow_deferred_init=True)
        self.offset_bias = self.params.get(
            'offset_bias', shape=shape[:1], init=bias_init,
            allow_deferred_init=True) if use_bias else None

    def _conv_params(self, shape, use_bias, weight_init, bias_init):
        self.deformable_conv_weight = self.params.get(
            'deformable_conv_weight', shape=shape, init=weight_init, allow_deferred_init=True)
        self.deformable_conv_bias = self.params.get(
            'deformable_conv_bias', shape=shape[:1], init=bias_init,
            allow_deferred_init=True) if use_bias else None

    def _make_params(self, offset_shape, conv_shape, use_bias, offset_use_bias, weight_init,
                     bias_init, offset_weight_init, offset_bias_init):
        self._offset_params(offset_shape, offset_use_bias, offset_weight_init, offset_bias_init)
        self._conv_params(conv_shape, use_bias, weight_init, bias_init)

    def _offsets(self, F, x, offset_weight, offset_bias):
        args = (x, offset_weight) if offset_bias is None else (x, offset_weight, offset_bias)
        return F.Convolution(*args, cudnn_off=True, **self._kwargs_offset)

    def _finish(self, out):
        return self.act(out) if self.act else out


class DeformableConvolution(_Deformable):
    """2-D deformable convolution (Dai et al., 2017): ``channels`` filters of
    ``kernel_size`` whose taps move by offsets a convolution of the input predicts,
    ``num_deformable_group`` channel groups each with its own offsets. Layout NCHW."""

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW',
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='DeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix,
                         params)

    def _alias(self):
        return 'deformable_conv'

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        extra = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        return self._finish(F.contrib.DeformableConvolution(
            data=x, offset=offset, weight=deformable_conv_weight, name='fwd', **extra,
            **self._kwargs_deformable_conv))

    def __repr__(self):
        kw = self._kwargs_deformable_conv
        s = f"{type(self).__name__}({{mapping}}, kernel_size={kw['kernel']}, stride={kw['stride']}"
        if kw['pad'] != (0, 0):
            s += f", padding={kw['pad']}"
        if kw['dilate'] != (1, 1):
            s += f", dilation={kw['dilate']}"
        if kw['num_group'] != 1:
            s += f", groups={kw['num_group']}"
        if self.deformable_conv_bias is None:
            s += ', bias=False'
        if self.act:
            s += f', {self.act}'
        shape = self.deformable_conv_weight.shape
        return s.format(mapping=f'{shape[1] if shape[1] else None} -> {shape[0]}') + ')'


class ModulatedDeformableConvolution(_Deformable):
    """Modulated deformable convolution (DCNv2, Zhu et al., 2019): the offset convolution
    also predicts one mask value per tap, ``2 * sigmoid``, scaling each sample."""

    _per_tap = 3

    def __init__(self, channels, kernel_size=(1, 1), strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, num_deformable_group=1, layout='NCHW',
                 use_bias=True, in_channels=0, activation=None, weight_initializer=None,
                 bias_initializer='zeros', offset_weight_initializer='zeros',
                 offset_bias_initializer='zeros', offset_use_bias=True,
                 op_name='ModulatedDeformableConvolution', adj=None, prefix=None, params=None):
        super().__init__(channels, kernel_size, strides, padding, dilation, groups,
                         num_deformable_group, layout, use_bias, in_channels, activation,
                         weight_initializer, bias_initializer, offset_weight_initializer,
                         offset_bias_initializer, offset_use_bias, op_name, adj, prefix,
                         params)

    def _make_params(self, offset_shape, conv_shape, use_bias, offset_use_bias, weight_init,
                     bias_init, offset_weight_init, offset_bias_init):
        # MXNet's order: the convolution's parameters first
        self._conv_params(conv_shape, use_bias, weight_init, bias_init)
        self._offset_params(offset_shape, offset_use_bias, offset_weight_init, offset_bias_init)

    def _alias(self):
        return 'modulated_deformable_conv'

    def hybrid_forward(self, F, x, offset_weight, deformable_conv_weight, offset_bias=None,
                       deformable_conv_bias=None):
        offset = self._offsets(F, x, offset_weight, offset_bias)
        shifts = F.slice_axis(offset, axis=1, begin=0, end=self._offset_split)
        mask = F.sigmoid(F.slice_axis(offset, axis=1, begin=self._offset_split, end=None)) * 2
        extra = {} if deformable_conv_bias is None else {'bias': deformable_conv_bias}
        return self._finish(F.contrib.ModulatedDeformableConvolution(
            data=x, offset=shifts, mask=mask, weight=deformable_conv_weight, name='fwd',
            **extra, **self._kwargs_deformable_conv))
