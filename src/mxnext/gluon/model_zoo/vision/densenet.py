"""DenseNet 121/161/169/201 (Huang et al., "Densely Connected Convolutional Networks",
2016), layer for layer and name for name as MXNet 1.9's model zoo."""

__all__ = ['DenseNet', 'densenet121', 'densenet161', 'densenet169', 'densenet201']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent, Identity
from ..model_store import get_model_file


def _make_dense_block(num_layers, bn_size, growth_rate, dropout, stage_index):
    out = nn.HybridSequential(prefix=f'stage{stage_index}_')
    with out.name_scope():
        for _ in range(num_layers):
            out.add(_make_dense_layer(growth_rate, bn_size, dropout))
    return out


def _make_dense_layer(growth_rate, bn_size, dropout):
    """The input concatenated with ``growth_rate`` new channels: BN-relu-1x1 conv to
    ``bn_size * growth_rate`` channels, BN-relu-3x3 conv."""
    new_features = nn.HybridSequential(prefix='')
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation('relu'))
    new_features.add(nn.Conv2D(bn_size * growth_rate, kernel_size=1, use_bias=False))
    new_features.add(nn.BatchNorm())
    new_features.add(nn.Activation('relu'))
    new_features.add(nn.Conv2D(growth_rate, kernel_size=3, padding=1, use_bias=False))
    if dropout:
        new_features.add(nn.Dropout(dropout))
    out = HybridConcurrent(axis=1, prefix='')
    out.add(Identity())
    out.add(new_features)
    return out


def _make_transition(num_output_features):
    out = nn.HybridSequential(prefix='')
    out.add(nn.BatchNorm())
    out.add(nn.Activation('relu'))
    out.add(nn.Conv2D(num_output_features, kernel_size=1, use_bias=False))
    out.add(nn.AvgPool2D(pool_size=2, strides=2))
    return out


class DenseNet(HybridBlock):
    """A 7x7 stem of ``num_init_features`` channels, then dense blocks of
    ``block_config[i]`` layers, each but the last followed by a transition halving the
    channels and the resolution."""

    def __init__(self, num_init_features, growth_rate, block_config, bn_size=4, dropout=0,
                 classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            self.features.add(nn.Conv2D(num_init_features, kernel_size=7, strides=2,
                                        padding=3, use_bias=False))
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.MaxPool2D(pool_size=3, strides=2, padding=1))
            num_features = num_init_features
            for i, num_layers in enumerate(block_config):
                self.features.add(_make_dense_block(num_layers, bn_size, growth_rate,
                                                    dropout, i + 1))
                num_features += num_layers * growth_rate
                if i != len(block_config) - 1:
                    self.features.add(_make_transition(num_features // 2))
                    num_features //= 2
            self.features.add(nn.BatchNorm())
            self.features.add(nn.Activation('relu'))
            self.features.add(nn.AvgPool2D(pool_size=7))
            self.features.add(nn.Flatten())
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth: (stem channels, growth rate, layers per dense block)
densenet_spec = {121: (64, 32, [6, 12, 24, 16]),
                 161: (96, 48, [6, 12, 36, 24]),
                 169: (64, 32, [6, 12, 32, 32]),
                 201: (64, 32, [6, 12, 48, 32])}


def get_densenet(num_layers, pretrained=False, ctx=cpu(),
                 root=os.path.join(data_dir(), 'models'), **kwargs):
    """DenseNet with ``num_layers`` (121, 161, 169, 201) layers; ``pretrained`` loads
    MXNet's ImageNet weights from ``root``."""
    if num_layers not in densenet_spec:
        raise ValueError(f"get_densenet: invalid num_layers {num_layers}; options are "
                         f"{sorted(densenet_spec)}")
    num_init_features, growth_rate, block_config = densenet_spec[num_layers]
    net = DenseNet(num_init_features, growth_rate, block_config, **kwargs)
    if pretrained:
        net.load_parameters(get_model_file(f'densenet{num_layers}', root=root), ctx=ctx)
    return net


def _variant(num_layers):
    def make(**kwargs):
        return get_densenet(num_layers, **kwargs)
    make.__name__ = make.__qualname__ = f'densenet{num_layers}'
    make.__doc__ = (f"DenseNet-{num_layers}; keyword arguments as get_densenet's "
                    f"(pretrained, ctx, root, classes, bn_size, dropout).")
    return make


densenet121, densenet161, densenet169, densenet201 = (
    _variant(n) for n in (121, 161, 169, 201))
