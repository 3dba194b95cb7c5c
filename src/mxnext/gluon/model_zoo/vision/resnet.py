"""ResNet V1 (He et al., "Deep Residual Learning for Image Recognition", 2015) and V2
("Identity Mappings in Deep Residual Networks", 2016), layer for layer and name for name
as MXNet 1.9's model zoo, so its ``.params`` files load."""

__all__ = ['ResNetV1', 'ResNetV2',
           'BasicBlockV1', 'BasicBlockV2',
           'BottleneckV1', 'BottleneckV2',
           'resnet18_v1', 'resnet34_v1', 'resnet50_v1', 'resnet101_v1', 'resnet152_v1',
           'resnet18_v2', 'resnet34_v2', 'resnet50_v2', 'resnet101_v2', 'resnet152_v2',
           'get_resnet']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


def _conv3x3(channels, stride, in_channels):
    return nn.Conv2D(channels, kernel_size=3, strides=stride, padding=1, use_bias=False,
                     in_channels=in_channels)


def _shortcut_v1(channels, stride, in_channels):
    """The V1 projection shortcut: 1x1 convolution then BatchNorm."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(channels, kernel_size=1, strides=stride, use_bias=False,
                      in_channels=in_channels))
    out.add(nn.BatchNorm())
    return out


class _ResidualV1(HybridBlock):
    """relu(body(x) + shortcut(x)); shortcut is x itself without ``downsample``."""

    def hybrid_forward(self, F, x):
        out = self.body(x)
        residual = self.downsample(x) if self.downsample else x
        return F.Activation(out + residual, act_type='relu')


class BasicBlockV1(_ResidualV1):
    """Two 3x3 convolutions, each followed by BatchNorm (the first also by relu)."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(_conv3x3(channels, stride, in_channels))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels, 1, channels))
        self.body.add(nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None


class BottleneckV1(_ResidualV1):
    """1x1 (stride), 3x3 and 1x1 convolutions with BatchNorm, the middle width channels/4."""

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.body = nn.HybridSequential(prefix='')
        self.body.add(nn.Conv2D(channels // 4, kernel_size=1, strides=stride))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(_conv3x3(channels // 4, 1, channels // 4))
        self.body.add(nn.BatchNorm())
        self.body.add(nn.Activation('relu'))
        self.body.add(nn.Conv2D(channels, kernel_size=1, strides=1))
        self.body.add(nn.BatchNorm())
        self.downsample = _shortcut_v1(channels, stride, in_channels) if downsample else None


class _ResidualV2(HybridBlock):
    """x + (BatchNorm, relu, convolution) ``_depth`` times (bn1, conv1, bn2, ...); the
    projection shortcut, where there is one, reads the first relu's output."""

    def hybrid_forward(self, F, x):
        residual = x
        x = F.Activation(self.bn1(x), act_type='relu')
        if self.downsample:
            residual = self.downsample(x)
        x = self.conv1(x)
        for i in range(2, self._depth + 1):
            x = F.Activation(getattr(self, f'bn{i}')(x), act_type='relu')
            x = getattr(self, f'conv{i}')(x)
        return x + residual


class BasicBlockV2(_ResidualV2):
    """Pre-activation basic block: (BatchNorm, relu, 3x3 convolution) twice."""

    _depth = 2

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = _conv3x3(channels, stride, in_channels)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels, 1, channels)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None



class BottleneckV2(_ResidualV2):
    """Pre-activation bottleneck: (BatchNorm, relu, convolution) with 1x1, 3x3 (stride)
    and 1x1 kernels."""

    _depth = 3

    def __init__(self, channels, stride, downsample=False, in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self.bn1 = nn.BatchNorm()
        self.conv1 = nn.Conv2D(channels // 4, kernel_size=1, strides=1, use_bias=False)
        self.bn2 = nn.BatchNorm()
        self.conv2 = _conv3x3(channels // 4, stride, channels // 4)
        self.bn3 = nn.BatchNorm()
        self.conv3 = nn.Conv2D(channels, kernel_size=1, strides=1, use_bias=False)
        self.downsample = nn.Conv2D(channels, 1, stride, use_bias=False,
                                    in_channels=in_channels) if downsample else None



def _check_spec(layers, channels):
    if len(layers) != len(channels) - 1:
        raise AssertionError(f"ResNet: channels must have one more entry than layers "
                             f"(the stem's width first), got {len(layers)} layers and "
                             f"{len(channels)} channels")


def _add_stem(features, channels, thumbnail):
    """The stem: 3x3 convolution (thumbnail, for small images), else 7x7/2 + BN + relu +
    3x3/2 max pooling."""
    if thumbnail:
        features.add(_conv3x3(channels, 1, 0))
    else:
        features.add(nn.Conv2D(channels, 7, 2, 3, use_bias=False))
        features.add(nn.BatchNorm())
        features.add(nn.Activation('relu'))
        features.add(nn.MaxPool2D(3, 2, 1))


class _ResNet(HybridBlock):
    def _make_layer(self, block, layers, channels, stride, stage_index, in_channels=0):
        """Stage ``stage_index``: ``layers`` blocks, the first one striding (and projecting
        where the width changes)."""
        stage = nn.HybridSequential(prefix=f'stage{stage_index}_')
        with stage.name_scope():
            stage.add(block(channels, stride, channels != in_channels,
                            in_channels=in_channels, prefix=''))
            for _ in range(layers - 1):
                stage.add(block(channels, 1, False, in_channels=channels, prefix=''))
        return stage

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


class ResNetV1(_ResNet):
    """ResNet V1 from ``block`` (BasicBlockV1 or BottleneckV1); ``layers``: blocks per
    stage; ``channels``: the stem's width then each stage's."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            _add_stem(self.features, channels[0], thumbnail)
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=channels[i]))
            self.features.add(nn.GlobalAvgPool2D())
            self.output = nn.Dense(classes, in_units=channels[-1])


class ResNetV2(_ResNet):
    """ResNet V2 from ``block`` (BasicBlockV2 or BottleneckV2): the input is normalized by
    a BatchNorm without scale and shift, the features end with BatchNorm and relu."""

    def __init__(self, block, layers, channels, classes=1000, thumbnail=False, **kwargs):
        super().__init__(**kwargs)
        _check_spec(layers, channels)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.BatchNorm(scale=False, center=False))
            _add_stem(self.features, channels[0], thumbnail)
            in_channels = channels[0]
            for i, num_layer in enumerate(layers):
                self.features.add(self._make_layer(block, num_layer, channels[i + 1],
                                                   1 if i == 0 else 2, i + 1,
                                                   in_channels=in_channels))
                in_channels = channels[i + 1]
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.GlobalAvgPool2D())
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes, in_units=in_channels)


# depth: (block kind, blocks per stage, stem width then stage widths)
resnet_spec = {18: ('basic_block', [2, 2, 2, 2], [64, 64, 128, 256, 512]),
               34: ('basic_block', [3, 4, 6, 3], [64, 64, 128, 256, 512]),
               50: ('bottle_neck', [3, 4, 6, 3], [64, 256, 512, 1024, 2048]),
               101: ('bottle_neck', [3, 4, 23, 3], [64, 256, 512, 1024, 2048]),
               152: ('bottle_neck', [3, 8, 36, 3], [64, 256, 512, 1024, 2048])}
resnet_net_versions = [ResNetV1, ResNetV2]
resnet_block_versions = [{'basic_block': BasicBlockV1, 'bottle_neck': BottleneckV1},
                         {'basic_block': BasicBlockV2, 'bottle_neck': BottleneckV2}]


def get_resnet(version, num_layers, pretrained=False, ctx=cpu(),
               root=os.path.join(data_dir(), 'models'), **kwargs):
    """ResNet ``version`` (1 or 2) with ``num_layers`` (18, 34, 50, 101, 152) layers;
    ``pretrained`` loads MXNet's ImageNet weights from ``root``."""
    if num_layers not in resnet_spec:
        raise AssertionError(f"get_resnet: invalid num_layers {num_layers}; options are "
                             f"{sorted(resnet_spec)}")
    if version not in (1, 2):
        raise AssertionError(f"get_resnet: invalid version {version}; options are 1 and 2")
    block_type, layers, channels = resnet_spec[num_layers]
    net = resnet_net_versions[version - 1](
        resnet_block_versions[version - 1][block_type], layers, channels, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f'resnet{num_layers}_v{version}', root=root),
                            ctx=ctx)
    return net


def _variant(version, num_layers):
    def make(**kwargs):
        return get_resnet(version, num_layers, **kwargs)
    make.__name__ = make.__qualname__ = f'resnet{num_layers}_v{version}'
    make.__doc__ = (f"ResNet-{num_layers} V{version}; keyword arguments as "
                    f"get_resnet's (pretrained, ctx, root, classes, thumbnail).")
    return make


resnet18_v1, resnet34_v1, resnet50_v1, resnet101_v1, resnet152_v1 = (
    _variant(1, n) for n in (18, 34, 50, 101, 152))
resnet18_v2, resnet34_v2, resnet50_v2, resnet101_v2, resnet152_v2 = (
    _variant(2, n) for n in (18, 34, 50, 101, 152))
