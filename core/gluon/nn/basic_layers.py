"""MXNet 1.9's basic ``gluon.nn`` layers: containers, Dense, and the layers that normalise,
drop out, embed, reshape or wrap a function."""

__all__ = ["Sequential", "HybridSequential", "Dense"]

import warnings

from ..block import Block, HybridBlock
from ..utils import _indent


class _Container:
    """What Sequential and HybridSequential share: ``add``, indexing, length, repr."""

    def add(self, *blocks):
        """Append ``blocks``, run in order."""
        for block in blocks:
            self.register_child(block)

    def __repr__(self):
        modstr = "\n".join(f"  ({key}): {_indent(repr(block), 2)}"
                           for key, block in self._children.items())
        return f"{type(self).__name__}(\n{modstr}\n)"

    def __getitem__(self, key):
        layers = list(self._children.values())[key]
        if isinstance(layers, list):
            net = type(self)(prefix=self._prefix)
            with net.name_scope():
                net.add(*layers)
            return net
        return layers

    def __len__(self):
        return len(self._children)

    def _run(self, x, args):
        for block in self._children.values():
            x = block(x, *args)
            args = []
            if isinstance(x, (tuple, list)):
                args, x = x[1:], x[0]
        return tuple([x, *args]) if args else x


class Sequential(_Container, Block):
    """Stacks Blocks: each one's output is the next one's input."""

    def forward(self, x, *args):
        return self._run(x, args)

    def hybridize(self, active=True, **kwargs):
        if self._children and all(isinstance(c, HybridBlock) for c in self._children.values()):
            warnings.warn(f"All children of this Sequential layer '{self.prefix}' are "
                          f"HybridBlocks. Consider using HybridSequential for the best "
                          f"performance.", stacklevel=2)
        super().hybridize(active, **kwargs)


class HybridSequential(_Container, HybridBlock):
    """Stacks HybridBlocks: each one's output is the next one's input."""

    def hybrid_forward(self, F, x, *args):
        return self._run(x, args)


class Dense(HybridBlock):
    """``activation(dot(x, weight.T) + bias)``, x flattened to 2-D unless ``flatten=False``
    (then over the last axis). ``in_units=0`` leaves the input size to the first forward."""

    def __init__(self, units, activation=None, use_bias=True, flatten=True, dtype="float32",
                 weight_initializer=None, bias_initializer="zeros", in_units=0, **kwargs):
        super().__init__(**kwargs)
        self._flatten = flatten
        with self.name_scope():
            self._units = units
            self._in_units = in_units
            self.weight = self.params.get("weight", shape=(units, in_units),
                                          init=weight_initializer, dtype=dtype,
                                          allow_deferred_init=True)
            if use_bias:
                self.bias = self.params.get("bias", shape=(units,), init=bias_initializer,
                                            dtype=dtype, allow_deferred_init=True)
            else:
                self.bias = None
            if activation is not None:
                from .activations import Activation
                self.act = Activation(activation, prefix=activation + "_")
            else:
                self.act = None

    def hybrid_forward(self, F, x, weight, bias=None):
        out = F.FullyConnected(x, weight, bias, no_bias=bias is None, num_hidden=self._units,
                               flatten=self._flatten, name="fwd")
        return self.act(out) if self.act is not None else out

    def __repr__(self):
        shape = self.weight.shape
        layout = f"{shape[1] if shape[1] else None} -> {shape[0]}"
        return f"{type(self).__name__}({layout}, {self.act if self.act else 'linear'})"
