"""Blocks that run their children side by side and concatenate the outputs, and Identity
(``nn.Identity``): what the model zoo's DenseNet, Inception and SqueezeNet are built from;
SparseEmbedding, an embedding whose weight and gradient are row_sparse."""

__all__ = ['Concurrent', 'HybridConcurrent', 'Identity', 'SparseEmbedding']

from .... import ndarray
from ... import nn
from ...block import Block
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


class SparseEmbedding(Block):
    """Embedding of indices into ``output_dim`` vectors with a row_sparse weight: each call
    pulls only the rows its indices name (``Parameter.row_sparse_data``), and the gradient
    is row_sparse, so a Trainer updates only those rows. Not hybridizable (as in MXNet)."""

    def __init__(self, input_dim, output_dim, dtype='float32', weight_initializer=None,
                 **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {'input_dim': input_dim, 'output_dim': output_dim, 'dtype': dtype,
                        'sparse_grad': True}
        self.weight = self.params.get('weight', shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      grad_stype='row_sparse', stype='row_sparse')

    def forward(self, x):
        weight = self.weight.row_sparse_data(x)
        return ndarray.Embedding(x, weight, name='fwd', **self._kwargs)

    def __repr__(self):
        return '{block_name}({input_dim} -> {output_dim}, {dtype})'.format(
            block_name=type(self).__name__, **self._kwargs)
