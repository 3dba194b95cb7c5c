"""Blocks that run their children side by side and concatenate the outputs, and Identity
(``nn.Identity``): what the model zoo's DenseNet, Inception and SqueezeNet are built from."""

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity']

from .... import ndarray
from ... import nn
from ...nn import Identity


class Concurrent(nn.Sequential):
    """Feeds the input to every child; the outputs concatenated along ``axis``."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def forward(self, x):
        return ndarray.concat(*[block(x) for block in self._children.values()],
                              dim=self.axis)


class HybridConcurrent(nn.HybridSequential):
    """Concurrent, hybridizable."""

    def __init__(self, axis=-1, prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self.axis = axis

    def hybrid_forward(self, F, x):
        return F.concat(*[block(x) for block in self._children.values()], dim=self.axis)
