"""VGG 11/13/16/19, with or without BatchNorm (Simonyan & Zisserman, "Very Deep
Convolutional Networks for Large-Scale Image Recognition", 2014), layer for layer and
name for name as MXNet 1.9's model zoo."""

__all__ = ['VGG', 'vgg11', 'vgg13', 'vgg16', 'vgg19',
           'vgg11_bn', 'vgg13_bn', 'vgg16_bn', 'vgg19_bn',
           'get_vgg']

import os

from ....base import data_dir
from ....context import cpu
from ....initializer import Xavier
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


class VGG(HybridBlock):
    """``layers[i]`` 3x3 convolutions of ``filters[i]`` channels, then 2x2 max pooling,
    per stage; then two 4096-wide Dense layers with dropout and the classifier."""

    def __init__(self, layers, filters, classes=1000, batch_norm=False, **kwargs):
        super().__init__(**kwargs)
        if len(layers) != len(filters):
            raise AssertionError(f"VGG: layers and filters must have the same length, "
                                 f"got {len(layers)} and {len(filters)}")
        with self.name_scope():
            self.features = self._make_features(layers, filters, batch_norm)
            for _ in range(2):
                self.features.add(nn.Dense(4096, activation='relu',
                                           weight_initializer='normal',
                                           bias_initializer='zeros'))
                self.features.add(nn.Dropout(rate=0.5))
            self.output = nn.Dense(classes, weight_initializer='normal',
                                   bias_initializer='zeros')

    def _make_features(self, layers, filters, batch_norm):
        featurizer = nn.HybridSequential(prefix='')
        for num, width in zip(layers, filters):
            for _ in range(num):
                featurizer.add(nn.Conv2D(width, kernel_size=3, padding=1,
                                         weight_initializer=Xavier(rnd_type='gaussian',
                                                                   factor_type='out',
                                                                   magnitude=2),
                                         bias_initializer='zeros'))
                if batch_norm:
                    featurizer.add(nn.BatchNorm())
                featurizer.add(nn.Activation('relu'))
            featurizer.add(nn.MaxPool2D(strides=2))
        return featurizer

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


# depth: (convolutions per stage, channels per stage)
vgg_spec = {11: ([1, 1, 2, 2, 2], [64, 128, 256, 512, 512]),
            13: ([2, 2, 2, 2, 2], [64, 128, 256, 512, 512]),
            16: ([2, 2, 3, 3, 3], [64, 128, 256, 512, 512]),
            19: ([2, 2, 4, 4, 4], [64, 128, 256, 512, 512])}


def get_vgg(num_layers, pretrained=False, ctx=cpu(),
            root=os.path.join(data_dir(), 'models'), **kwargs):
    """VGG with ``num_layers`` (11, 13, 16, 19) layers; ``batch_norm=True`` adds BatchNorm
    after each convolution; ``pretrained`` loads MXNet's ImageNet weights from ``root``."""
    if num_layers not in vgg_spec:
        raise ValueError(f"get_vgg: invalid num_layers {num_layers}; options are "
                         f"{sorted(vgg_spec)}")
    layers, filters = vgg_spec[num_layers]
    net = VGG(layers, filters, **kwargs)
    if pretrained:
        suffix = '_bn' if kwargs.get('batch_norm') else ''
        net.load_parameters(get_model_file(f'vgg{num_layers}{suffix}', root=root), ctx=ctx)
    return net


def _variant(num_layers, batch_norm):
    def make(**kwargs):
        if batch_norm:
            kwargs['batch_norm'] = True
        return get_vgg(num_layers, **kwargs)
    make.__name__ = make.__qualname__ = f"vgg{num_layers}{'_bn' if batch_norm else ''}"
    make.__doc__ = (f"VGG-{num_layers}{' with BatchNorm' if batch_norm else ''}; keyword "
                    f"arguments as get_vgg's (pretrained, ctx, root, classes).")
    return make


vgg11, vgg13, vgg16, vgg19 = (_variant(n, False) for n in (11, 13, 16, 19))
vgg11_bn, vgg13_bn, vgg16_bn, vgg19_bn = (_variant(n, True) for n in (11, 13, 16, 19))
