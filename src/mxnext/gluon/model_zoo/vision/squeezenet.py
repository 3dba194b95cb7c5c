"""SqueezeNet 1.0 and 1.1 (Iandola et al., "SqueezeNet: AlexNet-level accuracy with 50x
fewer parameters and <0.5MB model size", 2016), layer for layer and name for name as
MXNet 1.9's model zoo."""

__all__ = ['SqueezeNet', 'squeezenet1_0', 'squeezenet1_1', 'get_squeezenet']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file


def _make_fire_conv(channels, kernel_size, padding=0):
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size, padding=padding))
    out.add(nn.Activation('relu'))
    return out


def _make_fire(squeeze_channels, expand1x1_channels, expand3x3_channels):
    """A fire module: a 1x1 squeeze, then 1x1 and 3x3 expands concatenated."""
    out = nn.HybridSequential(prefix='')
    out.add(_make_fire_conv(squeeze_channels, 1))
    paths = HybridConcurrent(axis=1, prefix='')
    paths.add(_make_fire_conv(expand1x1_channels, 1))
    paths.add(_make_fire_conv(expand3x3_channels, 3, 1))
    out.add(paths)
    return out


# version: (stem channels, stem kernel, then 3x3/2 max pooling or a fire module's
# (squeeze, expand 1x1, expand 3x3) channels)
_SPEC = {'1.0': (96, 7, ['pool', (16, 64, 64), (16, 64, 64), (32, 128, 128), 'pool',
                         (32, 128, 128), (48, 192, 192), (48, 192, 192), (64, 256, 256),
                         'pool', (64, 256, 256)]),
         '1.1': (64, 3, ['pool', (16, 64, 64), (16, 64, 64), 'pool', (32, 128, 128),
                         (32, 128, 128), 'pool', (48, 192, 192), (48, 192, 192),
                         (64, 256, 256), (64, 256, 256)])}


class SqueezeNet(HybridBlock):
    """SqueezeNet ``version`` '1.0' or '1.1' (1.1: a 3x3 stem and earlier pooling, 2.4x
    less computation)."""

    def __init__(self, version, classes=1000, **kwargs):
        super().__init__(**kwargs)
        if version not in _SPEC:
            raise AssertionError(f"SqueezeNet: unsupported version {version!r}; '1.0' or "
                                 f"'1.1' expected")
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            stem_channels, stem_kernel, stages = _SPEC[version]
            self.features.add(nn.Conv2D(stem_channels, kernel_size=stem_kernel, strides=2))
            self.features.add(nn.Activation('relu'))
            for stage in stages:
                self.features.add(nn.MaxPool2D(pool_size=3, strides=2, ceil_mode=True)
                                  if stage == 'pool' else _make_fire(*stage))
            self.features.add(nn.Dropout(0.5))
            self.output = nn.HybridSequential(prefix='')
            self.output.add(nn.Conv2D(classes, kernel_size=1))
            self.output.add(nn.Activation('relu'))
            self.output.add(nn.AvgPool2D(13))
            self.output.add(nn.Flatten())

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def get_squeezenet(version, pretrained=False, ctx=cpu(),
                   root=os.path.join(data_dir(), 'models'), **kwargs):
    """SqueezeNet ``version`` ('1.0' or '1.1'); ``pretrained`` loads MXNet's ImageNet
    weights from ``root``."""
    net = SqueezeNet(version, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f'squeezenet{version}', root=root), ctx=ctx)
    return net


def squeezenet1_0(**kwargs):
    """SqueezeNet 1.0; keyword arguments as get_squeezenet's."""
    return get_squeezenet('1.0', **kwargs)


def squeezenet1_1(**kwargs):
    """SqueezeNet 1.1; keyword arguments as get_squeezenet's."""
    return get_squeezenet('1.1', **kwargs)
