"""AlexNet (Krizhevsky et al., "One weird trick for parallelizing convolutional neural
networks", 2014), layer for layer and name for name as MXNet 1.9's model zoo."""

__all__ = ['AlexNet', 'alexnet']

import os

from ....base import data_dir
from ....context import cpu
from ...block import HybridBlock
from ... import nn
from ..model_store import get_model_file


class AlexNet(HybridBlock):
    """Five convolutions (three max poolings between them), two 4096-wide Dense layers with
    dropout, and the classifier."""

    def __init__(self, classes=1000, **kwargs):
        super().__init__(**kwargs)
        with self.name_scope():
            self.features = nn.HybridSequential(prefix='')
            with self.features.name_scope():
                add = self.features.add
                add(nn.Conv2D(64, kernel_size=11, strides=4, padding=2, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(192, kernel_size=5, padding=2, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Conv2D(384, kernel_size=3, padding=1, activation='relu'))
                add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                add(nn.Conv2D(256, kernel_size=3, padding=1, activation='relu'))
                add(nn.MaxPool2D(pool_size=3, strides=2))
                add(nn.Flatten())
                add(nn.Dense(4096, activation='relu'))
                add(nn.Dropout(0.5))
                add(nn.Dense(4096, activation='relu'))
                add(nn.Dropout(0.5))
            self.output = nn.Dense(classes)

    def hybrid_forward(self, F, x):
        return self.output(self.features(x))


def alexnet(pretrained=False, ctx=cpu(), root=os.path.join(data_dir(), 'models'), **kwargs):
    """AlexNet; ``pretrained`` loads MXNet's ImageNet weights from ``root``."""
    net = AlexNet(**kwargs)
    if pretrained:
        net.load_parameters(get_model_file('alexnet', root=root), ctx=ctx)
    return net
