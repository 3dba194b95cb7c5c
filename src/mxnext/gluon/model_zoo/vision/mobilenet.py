"""MobileNet (Howard et al., 2017) and MobileNetV2 (Sandler et al., "Inverted Residuals
and Linear Bottlenecks", 2018) with width multipliers, layer for layer and name for name
as MXNet 1.9's model zoo."""

__all__ = ['MobileNet', 'MobileNetV2', 'mobilenet1_0', 'mobilenet_v2_1_0', 'mobilenet0_75',
           'mobilenet_v2_0_75', 'mobilenet0_5', 'mobilenet_v2_0_5', 'mobilenet0_25',
           'mobilenet_v2_0_25', 'get_mobilenet', 'get_mobilenet_v2']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


class RELU6(HybridBlock):
    """min(max(x, 0), 6)."""

    def hybrid_forward(self, F, x):
        return F.clip(x, 0, 6, name="relu6")


def _add_conv(out, channels=1, kernel=1, stride=1, pad=0, num_group=1, active=True,
              relu6=False):
    """Convolution (no bias), BatchNorm, and relu or relu6 when ``active``."""
    out.add(nn.Conv2D(channels, kernel, stride, pad, groups=num_group, use_bias=False))
    out.add(nn.BatchNorm(scale=True))
    if active:
        out.add(RELU6() if relu6 else nn.Activation('relu'))


def _add_conv_dw(out, dw_channels, channels, stride, relu6=False):
    """A depthwise 3x3 convolution then a pointwise 1x1 one."""
    _add_conv(out, channels=dw_channels, kernel=3, stride=stride, pad=1,
              num_group=dw_channels, relu6=relu6)
    _add_conv(out, channels=channels, relu6=relu6)


class LinearBottleneck(HybridBlock):
    """MobileNetV2's inverted residual: expand ``t`` times (1x1), depthwise 3x3 (stride),
    project linearly (1x1); the input added back when stride 1 keeps the width."""

    def __init__(self, in_channels, channels, t, stride, **kwargs):
        super().__init__(**kwargs)
        self.use_shortcut = stride == 1 and in_channels == channels
        with self.name_scope():
            self.out = nn.HybridSequential()
            _add_conv(self.out, in_channels * t, relu6=True)
            _add_conv(self.out, in_channels * t, kernel=3, stride=stride, pad=1,
                      num_group=in_channels * t, relu6=True)
            _add_conv(self.out, channels, active=False, relu6=True)

    def hybrid_forward(self, F, x):
        out = self.out(x)
        if self.use_shortcut:
            out = F.elemwise_add(out, x)
        return out


class MobileNet(HybridBlock):
    """MobileNet; every width is scaled by ``multiplier`` (>= 0.25)."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                _add_conv(self.features, channels=int(32 * multiplier), kernel=3, pad=1,
                          stride=2)
                dw_channels = [int(x * multiplier) for x in
                               [32, 64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024]]
                channels = [int(x * multiplier) for x in
                            [64] + [128] * 2 + [256] * 2 + [512] * 6 + [1024] * 2]
                strides = [1, 2] * 3 + [1] * 5 + [2, 1]
                for dwc, c, s in zip(dw_channels, channels, strides):
                    _add_conv_dw(self.features, dw_channels=dwc, channels=c, stride=s)
                self.features.add(nn.GlobalAvgPool2D())
                self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class MobileNetV2(HybridBlock):
    """MobileNetV2; every width is scaled by ``multiplier`` (the last one, 1280, only when
    the multiplier is above 1)."""

    def __init__(self, multiplier=1.0, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='features_')
            with self.features.name_scope():
                _add_conv(self.features, int(32 * multiplier), kernel=3, stride=2, pad=1,
                          relu6=True)
                in_channels_group = [int(x * multiplier) for x in
                                     [32] + [16] + [24] * 2 + [32] * 3 + [64] * 4
                                     + [96] * 3 + [160] * 3]
                channels_group = [int(x * multiplier) for x in
                                  [16] + [24] * 2 + [32] * 3 + [64] * 4 + [96] * 3
                                  + [160] * 3 + [320]]
                ts = [1] + [6] * 16
                strides = [1, 2] * 2 + [1, 1, 2] + [1] * 6 + [2] + [1] * 3
                for in_c, c, t, s in zip(in_channels_group, channels_group, ts, strides):
                    self.features.add(LinearBottleneck(in_channels=in_c, channels=c, t=t,
                                                       stride=s))
                last_channels = int(1280 * multiplier) if multiplier > 1.0 else 1280
                _add_conv(self.features, last_channels, relu6=True)
                self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.HybridSequential(prefix='output_')
            with self.output.name_scope():
                self.output.add(nn.Conv2D(classes, 1, use_bias=False, prefix='pred_'),
                                nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def _suffix(multiplier):
    """The weights file's spelling of a multiplier: 1.0, 0.75, 0.5, 0.25."""
    suffix = f'{multiplier:.2f}'
    return suffix[:-1] if suffix in ('1.00', '0.50') else suffix


def get_mobilenet(multiplier, pretrained=False, ctx=cpu(),
                  root=os.path.join(data_dir(), 'models'), **kwargs):
    """MobileNet with width ``multiplier``; ``pretrained`` loads MXNet's ImageNet weights
    from ``root``."""
    net = MobileNet(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f'mobilenet{_suffix(multiplier)}', root=root),
                            ctx=ctx)
    return net


def get_mobilenet_v2(multiplier, pretrained=False, ctx=cpu(),
                     root=os.path.join(data_dir(), 'models'), **kwargs):
    """MobileNetV2 with width ``multiplier``; ``pretrained`` loads MXNet's ImageNet
    weights from ``root``."""
    net = MobileNetV2(multiplier, **kwargs)
    if pretrained:
        net.load_parameters(
            get_model_file(f'mobilenetv2_{_suffix(multiplier)}', root=root), ctx=ctx)
    return net


def _variant(get, multiplier, name):
    def make(**kwargs):
        return get(multiplier, **kwargs)
    make.__name__ = make.__qualname__ = name
    make.__doc__ = (f"{get.__name__[4:]} with width multiplier {multiplier}; keyword "
                    f"arguments as {get.__name__}'s (pretrained, ctx, root, classes).")
    return make


mobilenet1_0 = _variant(get_mobilenet, 1.0, 'mobilenet1_0')
mobilenet0_75 = _variant(get_mobilenet, 0.75, 'mobilenet0_75')
mobilenet0_5 = _variant(get_mobilenet, 0.5, 'mobilenet0_5')
mobilenet0_25 = _variant(get_mobilenet, 0.25, 'mobilenet0_25')
mobilenet_v2_1_0 = _variant(get_mobilenet_v2, 1.0, 'mobilenet_v2_1_0')
mobilenet_v2_0_75 = _variant(get_mobilenet_v2, 0.75, 'mobilenet_v2_0_75')
mobilenet_v2_0_5 = _variant(get_mobilenet_v2, 0.5, 'mobilenet_v2_0_5')
mobilenet_v2_0_25 = _variant(get_mobilenet_v2, 0.25, 'mobilenet_v2_0_25')
