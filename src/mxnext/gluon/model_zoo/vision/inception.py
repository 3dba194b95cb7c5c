"""Inception V3 (Szegedy et al., "Rethinking the Inception Architecture for Computer
Vision", 2015) for 299x299 inputs, layer for layer and name for name as MXNet 1.9's
model zoo."""

__all__ = ['Inception3', 'inception_v3']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ...contrib.nn import HybridConcurrent
from ..model_store import get_model_file


def _make_basic_conv(**kwargs):
    """Convolution (no bias), BatchNorm (epsilon 0.001), relu."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.Conv2D(use_bias=False, **kwargs))
    out.add(nn.BatchNorm(epsilon=0.001))
    out.add(nn.Activation('relu'))
    return out


def _make_branch(use_pool, *conv_settings):
    """An optional 3x3 pooling ('avg': stride 1, 'max': stride 2), then one basic conv per
    setting (channels, kernel_size, strides, padding; None keeps the default)."""
    out = nn.HybridSequential(prefix='')
    if use_pool == 'avg':
        out.add(nn.AvgPool2D(pool_size=3, strides=1, padding=1))
    elif use_pool == 'max':
        out.add(nn.MaxPool2D(pool_size=3, strides=2))
    names = ('channels', 'kernel_size', 'strides', 'padding')
    for setting in conv_settings:
        out.add(_make_basic_conv(**{k: v for k, v in zip(names, setting) if v is not None}))
    return out


def _concurrent(prefix, *branches):
    """Branches built in the scope of a HybridConcurrent named ``prefix``; ``branches``
    are (use_pool, *conv_settings) tuples, or callables that build a block."""
    out = HybridConcurrent(axis=1, prefix=prefix)
    with out.name_scope():
        for branch in branches:
            out.add(branch() if callable(branch) else _make_branch(*branch))
    return out


def _make_A(pool_features, prefix):
    return _concurrent(prefix,
                       (None, (64, 1, None, None)),
                       (None, (48, 1, None, None), (64, 5, None, 2)),
                       (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, None, 1)),
                       ('avg', (pool_features, 1, None, None)))


def _make_B(prefix):
    return _concurrent(prefix,
                       (None, (384, 3, 2, None)),
                       (None, (64, 1, None, None), (96, 3, None, 1), (96, 3, 2, None)),
                       ('max',))


def _make_C(channels_7x7, prefix):
    c = channels_7x7
    return _concurrent(prefix,
                       (None, (192, 1, None, None)),
                       (None, (c, 1, None, None), (c, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0))),
                       (None, (c, 1, None, None), (c, (7, 1), None, (3, 0)),
                        (c, (1, 7), None, (0, 3)), (c, (7, 1), None, (3, 0)),
                        (192, (1, 7), None, (0, 3))),
                       ('avg', (192, 1, None, None)))


def _make_D(prefix):
    return _concurrent(prefix,
                       (None, (192, 1, None, None), (320, 3, 2, None)),
                       (None, (192, 1, None, None), (192, (1, 7), None, (0, 3)),
                        (192, (7, 1), None, (3, 0)), (192, 3, 2, None)),
                       ('max',))


def _split_3x3(*first):
    """A branch (``first`` convs) whose output feeds a 1x3 and a 3x1 conv concatenated."""
    def build():
        out = nn.HybridSequential(prefix='')
        out.add(_make_branch(None, *first))
        split = HybridConcurrent(axis=1, prefix='')
        split.add(_make_branch(None, (384, (1, 3), None, (0, 1))))
        split.add(_make_branch(None, (384, (3, 1), None, (1, 0))))
        out.add(split)
        return out
    return build


def _make_E(prefix):
    return _concurrent(prefix,
                       (None, (320, 1, None, None)),
                       _split_3x3((384, 1, None, None)),
                       _split_3x3((448, 1, None, None), (384, 3, None, 1)),
                       ('avg', (192, 1, None, None)))


def make_aux(classes):
    """The auxiliary classifier head (MXNet's model does not use it)."""
    out = nn.HybridSequential(prefix='')
    out.add(nn.AvgPool2D(pool_size=5, strides=3))
    out.add(_make_basic_conv(channels=128, kernel_size=1))
    out.add(_make_basic_conv(channels=768, kernel_size=5))
    out.add(nn.Flatten())
    out.add(nn.Dense(classes))
    return out


class Inception3(HybridBlock):
    """Inception V3 without its auxiliary head."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            add = self.features.add
            add(_make_basic_conv(channels=32, kernel_size=3, strides=2))
            add(_make_basic_conv(channels=32, kernel_size=3))
            add(_make_basic_conv(channels=64, kernel_size=3, padding=1))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_basic_conv(channels=80, kernel_size=1))
            add(_make_basic_conv(channels=192, kernel_size=3))
            add(nn.MaxPool2D(pool_size=3, strides=2))
            add(_make_A(32, 'A1_'))
            add(_make_A(64, 'A2_'))
            add(_make_A(64, 'A3_'))
            add(_make_B('B_'))
            add(_make_C(128, 'C1_'))
            add(_make_C(160, 'C2_'))
            add(_make_C(160, 'C3_'))
            add(_make_C(192, 'C4_'))
            add(_make_D('D_'))
            add(_make_E('E1_'))
            add(_make_E('E2_'))
            add(nn.AvgPool2D(pool_size=8))
            add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def inception_v3(pretrained=False, ctx=cpu(), root=os.path.join(data_dir(), 'models'),
                 **kwargs):
    """Inception V3 (input 3x299x299); ``pretrained`` loads MXNet's ImageNet weights from
    ``root``."""
    net = Inception3(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('inceptionv3', root=root), ctx=ctx)
    return net
