"""Convolution, transposed convolution and pooling layers, as MXNet 1.9's ``gluon.nn``.

Each layer calls one op (``Convolution``, ``Deconvolution``, ``Pooling``, ``pad``) through
``F`` with the keyword arguments fixed at construction, so imperative and hybridized
calls run the same op with the same parameters.
"""

__all__ = ['Conv1D', 'Conv2D', 'Conv3D',
           'Conv1DTranspose', 'Conv2DTranspose', 'Conv3DTranspose',
           'MaxPool1D', 'MaxPool2D', 'MaxPool3D',
           'AvgPool1D', 'AvgPool2D', 'AvgPool3D',
           'GlobalMaxPool1D', 'GlobalMaxPool2D', 'GlobalMaxPool3D',
           'GlobalAvgPool1D', 'GlobalAvgPool2D', 'GlobalAvgPool3D',
           'ReflectionPad2D']

import numbers

from ..block import HybridBlock
from .activations import Activation

# the layouts each layer accepts, by number of spatial dimensions (as MXNet 1.9's layers)
_CONV_LAYOUTS = {1: ('NCW',), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}
_POOL_LAYOUTS = {1: ('NCW', 'NWC'), 2: ('NCHW', 'NHWC'), 3: ('NCDHW', 'NDHWC')}


def _ntuple(layer, arg, value, n):
    """``value`` as an n-tuple of ints: a number repeats, a sequence must have n items."""
    if isinstance(value, numbers.Number):
        return (int(value),) * n
    value = tuple(value)
    if len(value) != n:
        raise AssertionError(f"{layer}: {arg} must be a number or a list of {n} ints, "
                             f"got {value!r}")
    return value


def _check_layout(layer, layout, allowed):
    if layout not in allowed:
        raise AssertionError(f"{layer}: layout must be one of {', '.join(allowed)}, "
                             f"got {layout!r}")


class _Conv(HybridBlock):
    """An n-d (transposed) convolution with an optional activation after it.

    Weight shapes are (out, in/groups, *kernel) for a convolution and (in, out/groups,
    *kernel) for a transposed one, the channel axis moving last in a channels-last
    layout, as MXNet's ops infer them; an unknown ``in_channels`` (0) stays 0 until the
    first forward completes it.
    """

    def __init__(self, channels, kernel_size, strides, padding, dilation, groups, layout,
                 in_channels=0, activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', op_name='Convolution', adj=None,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        name = type(self).__name__
        n = len(kernel_size)
        with self.name_scope():
            self._channels = channels
            self._in_channels = in_channels
            self._op_name = op_name
            self._kwargs = {
                'kernel': kernel_size, 'stride': _ntuple(name, 'strides', strides, n),
                'dilate': _ntuple(name, 'dilation', dilation, n),
                'pad': _ntuple(name, 'padding', padding, n), 'num_filter': channels,
                'num_group': groups, 'no_bias': not use_bias, 'layout': layout}
            if adj is not None:
                self._kwargs['adj'] = adj
            for arg, value in (('channels', channels), ('in_channels', in_channels)):
                if value % groups:
                    raise AssertionError(f"{name}: {arg}={value} is not divisible by "
                                         f"groups={groups}")
            if op_name == 'Deconvolution':
                lead, per_group = in_channels, channels // groups
            else:
                lead, per_group = channels, in_channels // groups
            if layout.find('C') == 1:
                wshape = (lead, per_group) + tuple(kernel_size)
            else:
                wshape = (lead,) + tuple(kernel_size) + (per_group,)
            self.weight = self.params.get('weight', shape=wshape, init=weight_initializer,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get('bias', shape=(channels,), init=bias_initializer,
                                            allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                self.act = Activation(activation, prefix=activation + '_')
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        op = getattr(F, self._op_name)
        if bias is None:
            out = op(x, weight, name='fwd', **self._kwargs)
        else:
            out = op(x, weight, bias, name='fwd', **self._kwargs)
        if self.act is not None:
            out = self.act(out)
        return out

    def _alias(self):
        return 'conv'

    def __repr__(self):
        kw = self._kwargs
        n = len(kw['kernel'])
        s = '{name}({mapping}, kernel_size={kernel}, stride={stride}'
        if kw['pad'] != (0,) * n:
            s += ', padding={pad}'
        if kw['dilate'] != (1,) * n:
            s += ', dilation={dilate}'
        if kw['num_group'] != 1:
            s += ', groups={num_group}'
        if self.bias is None:
            s += ', bias=False'
        if self.act:
            s += f', {self.act}'
        s += ')'
        shape = self.weight.shape
        mapping = f'{shape[1] if shape[1] else None} -> {shape[0]}'
        return s.format(name=type(self).__name__, mapping=mapping, **kw)


def _conv_init(self, n, channels, kernel_size, strides, padding, dilation, groups, layout,
               kwargs, output_padding=None):
    """What Conv{n}D and Conv{n}DTranspose share: argument checks, then _Conv."""
    name = type(self).__name__
    _check_layout(name, layout, _CONV_LAYOUTS[n])
    kernel_size = _ntuple(name, 'kernel_size', kernel_size, n)
    if output_padding is None:
        op_name = kwargs.pop('op_name', 'Convolution')
        _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups,
                       layout, op_name=op_name, **kwargs)
    else:
        output_padding = _ntuple(name, 'output_padding', output_padding, n)
        op_name = kwargs.pop('op_name', 'Deconvolution')
        _Conv.__init__(self, channels, kernel_size, strides, padding, dilation, groups,
                       layout, op_name=op_name, adj=output_padding, **kwargs)
        self.outpad = output_padding


class Conv1D(_Conv):
    """1-d convolution over (batch, channels, width) data (layout NCW).

    ``in_channels=0`` defers the weight's shape to the first forward.

    Parameters
    ----------
    channels : int
        Number of output channels (filters).
    kernel_size : int
        Size of the convolution window.
    strides : int
        Step of the window along each spatial axis.
    padding : int
        Zeros added on both sides of each spatial axis.
    dilation : int
        Spacing between the kernel's elements.
    groups : int, default 1
        Number of groups the input and output channels are split into, each group
        convolved separately.
    layout : str
        Data layout: 'NCW' (batch, channels, width) or 'NWC'.
    activation : str, optional
        Activation applied to the output; None (default) for none.
    use_bias : bool, default True
        Whether to add a learned bias per output channel.
    weight_initializer : str or Initializer, optional
        Initializer of the weight (the block's default if None).
    bias_initializer : str or Initializer, default 'zeros'
        Initializer of the bias.
    in_channels : int, default 0
        Number of input channels; 0 infers it at the first forward.
    """

    def __init__(self, channels, kernel_size, strides=1, padding=0, dilation=1, groups=1,
                 layout='NCW', activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 1, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels))


class Conv2D(_Conv):
    """2-d convolution over images (layout NCHW or NHWC).

    Parameters
    ----------
    channels : int
        Number of output channels (filters).
    kernel_size : int or tuple of 2 ints
        Size of the convolution window.
    strides : int or tuple of 2 ints
        Step of the window along each spatial axis.
    padding : int or tuple of 2 ints
        Zeros added on both sides of each spatial axis.
    dilation : int or tuple of 2 ints
        Spacing between the kernel's elements.
    groups : int, default 1
        Number of groups the input and output channels are split into, each group
        convolved separately.
    layout : str
        Data layout: 'NCHW' (batch, channels, height, width) or 'NHWC'.
    activation : str, optional
        Activation applied to the output; None (default) for none.
    use_bias : bool, default True
        Whether to add a learned bias per output channel.
    weight_initializer : str or Initializer, optional
        Initializer of the weight (the block's default if None).
    bias_initializer : str or Initializer, default 'zeros'
        Initializer of the bias.
    in_channels : int, default 0
        Number of input channels; 0 infers it at the first forward.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 dilation=(1, 1), groups=1, layout='NCHW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 2, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels))


class Conv3D(_Conv):
    """3-d convolution over volumes (layout NCDHW or NDHWC).

    Parameters
    ----------
    channels : int
        Number of output channels (filters).
    kernel_size : int or tuple of 3 ints
        Size of the convolution window.
    strides : int or tuple of 3 ints
        Step of the window along each spatial axis.
    padding : int or tuple of 3 ints
        Zeros added on both sides of each spatial axis.
    dilation : int or tuple of 3 ints
        Spacing between the kernel's elements.
    groups : int, default 1
        Number of groups the input and output channels are split into, each group
        convolved separately.
    layout : str
        Data layout: 'NCDHW' (batch, channels, depth, height, width) or
        'NDHWC'.
    activation : str, optional
        Activation applied to the output; None (default) for none.
    use_bias : bool, default True
        Whether to add a learned bias per output channel.
    weight_initializer : str or Initializer, optional
        Initializer of the weight (the block's default if None).
    bias_initializer : str or Initializer, default 'zeros'
        Initializer of the bias.
    in_channels : int, default 0
        Number of input channels; 0 infers it at the first forward.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 dilation=(1, 1, 1), groups=1, layout='NCDHW', activation=None,
                 use_bias=True, weight_initializer=None, bias_initializer='zeros',
                 in_channels=0, **kwargs):
        _conv_init(self, 3, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels))


class Conv1DTranspose(_Conv):
    """1-d transposed convolution (deconvolution), layout NCW."""

    def __init__(self, channels, kernel_size, strides=1, padding=0, output_padding=0,
                 dilation=1, groups=1, layout='NCW', activation=None, use_bias=True,
                 weight_initializer=None, bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 1, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels),
                   output_padding)


class Conv2DTranspose(_Conv):
    """2-d transposed convolution (deconvolution), layout NCHW or NHWC: the gradient of a
    Conv2D with respect to its input, which upsamples by ``strides``.

    Parameters
    ----------
    channels : int
        Number of output channels (filters).
    kernel_size : int or tuple of 2 ints
        Size of the convolution window.
    strides : int or tuple of 2 ints
        Step of the window along each spatial axis.
    padding : int or tuple of 2 ints
        What the matching convolution padded: cropped from both sides of each spatial
        axis of the output.
    output_padding : int or tuple of 2 ints
        Extra size added to one side of each spatial axis of the output.
    dilation : int or tuple of 2 ints
        Spacing between the kernel's elements.
    groups : int, default 1
        Number of groups the input and output channels are split into, each group
        convolved separately.
    layout : str
        Data layout: 'NCHW' (batch, channels, height, width) or 'NHWC'.
    activation : str, optional
        Activation applied to the output; None (default) for none.
    use_bias : bool, default True
        Whether to add a learned bias per output channel.
    weight_initializer : str or Initializer, optional
        Initializer of the weight (the block's default if None).
    bias_initializer : str or Initializer, default 'zeros'
        Initializer of the bias.
    in_channels : int, default 0
        Number of input channels; 0 infers it at the first forward.
    """

    def __init__(self, channels, kernel_size, strides=(1, 1), padding=(0, 0),
                 output_padding=(0, 0), dilation=(1, 1), groups=1, layout='NCHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 2, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels),
                   output_padding)


class Conv3DTranspose(_Conv):
    """3-d transposed convolution (deconvolution), layout NCDHW or NDHWC."""

    def __init__(self, channels, kernel_size, strides=(1, 1, 1), padding=(0, 0, 0),
                 output_padding=(0, 0, 0), dilation=(1, 1, 1), groups=1, layout='NCDHW',
                 activation=None, use_bias=True, weight_initializer=None,
                 bias_initializer='zeros', in_channels=0, **kwargs):
        _conv_init(self, 3, channels, kernel_size, strides, padding, dilation, groups,
                   layout, dict(kwargs, activation=activation, use_bias=use_bias,
                                weight_initializer=weight_initializer,
                                bias_initializer=bias_initializer, in_channels=in_channels),
                   output_padding)


class _Pooling(HybridBlock):
    """Max or average pooling over the spatial axes of the layout."""

    def __init__(self, pool_size, strides, padding, ceil_mode, global_pool, pool_type,
                 layout, count_include_pad=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        n = len(pool_size)
        self._kwargs = {
            'kernel': pool_size,
            'stride': _ntuple(name, 'strides', pool_size if strides is None else strides, n),
            'pad': _ntuple(name, 'padding', padding, n), 'global_pool': global_pool,
            'pool_type': pool_type, 'layout': layout,
            'pooling_convention': 'full' if ceil_mode else 'valid'}
        if count_include_pad is not None:
            self._kwargs['count_include_pad'] = count_include_pad

    def _alias(self):
        return 'pool'

    def hybrid_forward(self, F, x):
        return F.Pooling(x, name='fwd', **self._kwargs)

    def __repr__(self):
        kw = self._kwargs
        return (f"{type(self).__name__}(size={kw['kernel']}, stride={kw['stride']}, "
                f"padding={kw['pad']}, ceil_mode={kw['pooling_convention'] == 'full'}, "
                f"global_pool={kw['global_pool']}, pool_type={kw['pool_type']}, "
                f"layout={kw['layout']})")


def _pool_init(self, n, pool_size, strides, padding, layout, ceil_mode, pool_type,
               kwargs, count_include_pad=None):
    name = type(self).__name__
    _check_layout(name, layout, _POOL_LAYOUTS[n])
    _Pooling.__init__(self, _ntuple(name, 'pool_size', pool_size, n), strides, padding,
                      ceil_mode, False, pool_type, layout, count_include_pad, **kwargs)


def _global_init(self, n, layout, pool_type, kwargs):
    _check_layout(type(self).__name__, layout, _POOL_LAYOUTS[n])
    _Pooling.__init__(self, (1,) * n, None, 0, True, True, pool_type, layout, **kwargs)


class MaxPool1D(_Pooling):
    """Max pooling over the width of (batch, channels, width) data (NCW or NWC)."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 **kwargs):
        _pool_init(self, 1, pool_size, strides, padding, layout, ceil_mode, 'max', kwargs)


class MaxPool2D(_Pooling):
    """Max pooling over images (NCHW or NHWC); ``strides=None`` means ``pool_size``."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, layout='NCHW',
                 ceil_mode=False, **kwargs):
        _pool_init(self, 2, pool_size, strides, padding, layout, ceil_mode, 'max', kwargs)


class MaxPool3D(_Pooling):
    """Max pooling over volumes (NCDHW or NDHWC)."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', **kwargs):
        _pool_init(self, 3, pool_size, strides, padding, layout, ceil_mode, 'max', kwargs)


class AvgPool1D(_Pooling):
    """Average pooling over the width of (batch, channels, width) data (NCW or NWC)."""

    def __init__(self, pool_size=2, strides=None, padding=0, layout='NCW', ceil_mode=False,
                 count_include_pad=True, **kwargs):
        _pool_init(self, 1, pool_size, strides, padding, layout, ceil_mode, 'avg', kwargs,
                   count_include_pad)


class AvgPool2D(_Pooling):
    """Average pooling over images (NCHW or NHWC)."""

    def __init__(self, pool_size=(2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCHW', count_include_pad=True, **kwargs):
        _pool_init(self, 2, pool_size, strides, padding, layout, ceil_mode, 'avg', kwargs,
                   count_include_pad)


class AvgPool3D(_Pooling):
    """Average pooling over volumes (NCDHW or NDHWC)."""

    def __init__(self, pool_size=(2, 2, 2), strides=None, padding=0, ceil_mode=False,
                 layout='NCDHW', count_include_pad=True, **kwargs):
        _pool_init(self, 3, pool_size, strides, padding, layout, ceil_mode, 'avg', kwargs,
                   count_include_pad)


class GlobalMaxPool1D(_Pooling):
    """Max over the whole width: (N, C, W) to (N, C, 1)."""

    def __init__(self, layout='NCW', **kwargs):
        _global_init(self, 1, layout, 'max', kwargs)


class GlobalMaxPool2D(_Pooling):
    """Max over the whole image: (N, C, H, W) to (N, C, 1, 1)."""

    def __init__(self, layout='NCHW', **kwargs):
        _global_init(self, 2, layout, 'max', kwargs)


class GlobalMaxPool3D(_Pooling):
    """Max over the whole volume: (N, C, D, H, W) to (N, C, 1, 1, 1)."""

    def __init__(self, layout='NCDHW', **kwargs):
        _global_init(self, 3, layout, 'max', kwargs)


class GlobalAvgPool1D(_Pooling):
    """Mean over the whole width: (N, C, W) to (N, C, 1)."""

    def __init__(self, layout='NCW', **kwargs):
        _global_init(self, 1, layout, 'avg', kwargs)


class GlobalAvgPool2D(_Pooling):
    """Mean over the whole image: (N, C, H, W) to (N, C, 1, 1)."""

    def __init__(self, layout='NCHW', **kwargs):
        _global_init(self, 2, layout, 'avg', kwargs)


class GlobalAvgPool3D(_Pooling):
    """Mean over the whole volume: (N, C, D, H, W) to (N, C, 1, 1, 1)."""

    def __init__(self, layout='NCDHW', **kwargs):
        _global_init(self, 3, layout, 'avg', kwargs)


class ReflectionPad2D(HybridBlock):
    """Pads the two last axes of 4-d data by reflecting it at its border.

    ``padding``: an int (each side of H and W), or the 8-tuple ``pad_width`` of ``pad``.
    """

    def __init__(self, padding=0, **kwargs):
        super().__init__(**kwargs)
        if isinstance(padding, numbers.Number):
            padding = (0, 0, 0, 0) + (int(padding),) * 4
        padding = tuple(padding)
        if len(padding) != 8:
            raise AssertionError(f"ReflectionPad2D: padding must be an int or 8 ints "
                                 f"(pad_width of 4-d data), got {padding!r}")
        self._padding = padding

    def hybrid_forward(self, F, x):
        return F.pad(x, mode='reflect', pad_width=self._padding)
