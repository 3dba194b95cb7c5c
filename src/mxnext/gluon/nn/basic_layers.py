"""MXNet 1.9's basic ``gluon.nn`` layers: containers, Dense, and the layers that normalise,
drop out, embed, reshape or wrap a function."""

__all__ = ["Sequential", "HybridSequential", "Dense", "Dropout", "Embedding", "BatchNorm",
           "BatchNormReLU", "InstanceNorm", "LayerNorm", "GroupNorm", "Flatten", "Lambda",
           "HybridLambda", "Identity"]

import warnings

import numpy as np

from ... import ndarray, symbol
from ..._runtime.base import MXNetError
from ..block import Block, HybridBlock
from ..utils import _indent


class _Container:
    """What Sequential and HybridSequential share: ``add``, indexing, length, repr."""

    _summary_row = False

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
    (then over the last axis). ``in_units=0`` leaves the input size to the first forward.

    Parameters
    ----------
    units : int
        Size of the output's last axis (the weight's first dimension).
    activation : str, optional
        Activation applied to the output (``'relu'``, ``'sigmoid'``, ``'tanh'``,
        ``'softrelu'``, ``'softsign'``); None (default) for none.
    use_bias : bool, default True
        Whether to add a learned bias vector.
    flatten : bool, default True
        Collapse every input axis but the first into one; False applies the layer to the
        last axis, keeping the others.
    dtype : str or numpy.dtype, default 'float32'
        Data type of the weight and bias.
    weight_initializer : str or Initializer, optional
        Initializer of the ``(units, in_units)`` weight (the block's default if None).
    bias_initializer : str or Initializer, default 'zeros'
        Initializer of the ``(units,)`` bias.
    in_units : int, default 0
        Size of the input's last (flattened) axis; 0 infers it at the first forward.
    prefix : str, optional
        Prefix of the block's name and of its parameters' names.
    params : ParameterDict, optional
        Parameters to share with another block.
    """

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


class Dropout(HybridBlock):
    """Zeroes each element with probability ``rate`` while training (scaling the rest by
    1/(1-rate)); ``axes`` shares one mask along those axes. Outside ``autograd.record``
    with training, the input passes unchanged.

    Parameters
    ----------
    rate : float
        Probability of zeroing an element, in [0, 1).
    axes : tuple of int, default ()
        Axes along which one mask is shared (variational dropout); () draws every element.
    """

    def __init__(self, rate, axes=(), **kwargs):
        super().__init__(**kwargs)
        self._rate = rate
        self._axes = axes

    def hybrid_forward(self, F, x):
        if self._rate > 0:
            return F.Dropout(x, p=self._rate, axes=self._axes, name="fwd", cudnn_off=False)
        return F.identity(x)

    def __repr__(self):
        return f"{type(self).__name__}(p = {self._rate}, axes={self._axes})"


class _Norm(HybridBlock):
    """A normalisation layer with ``gamma`` (scale) and ``beta`` (offset) of ``size``
    elements, 0 until the first forward when ``in_channels`` is not given."""

    def _gamma_beta(self, size, center, scale, beta_initializer, gamma_initializer,
                    batch_norm=False):
        """(BatchNorm's gamma/beta are not differentiable when fixed; the others' are.)"""
        self.gamma = self.params.get("gamma", grad_req="write" if scale else "null",
                                     shape=(size,), init=gamma_initializer,
                                     allow_deferred_init=True,
                                     differentiable=scale or not batch_norm)
        self.beta = self.params.get("beta", grad_req="write" if center else "null",
                                    shape=(size,), init=beta_initializer,
                                    allow_deferred_init=True,
                                    differentiable=center or not batch_norm)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        in_channels = self.gamma.shape[0]
        return f"{type(self).__name__}({content}, in_channels={in_channels or None})"


class BatchNorm(_Norm):
    """Normalises over the batch along ``axis`` (the channels), keeping running mean and
    variance (auxiliary states updated with ``momentum`` by each training step, used at
    inference or with ``use_global_stats``).

    Parameters
    ----------
    axis : int, default 1
        The channel axis (1 for NCHW, -1 or 3 for NHWC).
    momentum : float, default 0.9
        Weight of the old value in each update of the running statistics.
    epsilon : float, default 1e-5
        Added to the variance before its square root, for stability.
    center : bool, default True
        Whether to add the learned offset ``beta``; False keeps it 0.
    scale : bool, default True
        Whether to multiply by the learned ``gamma``; False keeps it 1.
    use_global_stats : bool, default False
        Normalise with the running statistics in training too (a frozen BatchNorm).
    beta_initializer, gamma_initializer : str or Initializer, default 'zeros', 'ones'
        Initializers of the offset and the scale.
    running_mean_initializer, running_variance_initializer : str or Initializer
        Initializers of the running statistics (default 'zeros', 'ones').
    in_channels : int, default 0
        Number of channels; 0 infers it at the first forward.
    """

    _fuse_relu = False

    def __init__(self, axis=1, momentum=0.9, epsilon=1e-5, center=True, scale=True,
                 use_global_stats=False, beta_initializer="zeros", gamma_initializer="ones",
                 running_mean_initializer="zeros", running_variance_initializer="ones",
                 in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"axis": axis, "eps": epsilon, "momentum": momentum,
                        "fix_gamma": not scale, "use_global_stats": use_global_stats}
        self._axis = axis
        if in_channels != 0:
            self.in_channels = in_channels
        self._gamma_beta(in_channels, center, scale, beta_initializer, gamma_initializer,
                         batch_norm=True)
        self.running_mean = self.params.get("running_mean", grad_req="null",
                                            shape=(in_channels,),
                                            init=running_mean_initializer,
                                            allow_deferred_init=True, differentiable=False)
        self.running_var = self.params.get("running_var", grad_req="null",
                                           shape=(in_channels,),
                                           init=running_variance_initializer,
                                           allow_deferred_init=True, differentiable=False)

    def cast(self, dtype):
        if np.dtype(dtype).name == "float16":       # statistics stay float32, as MXNet's
            dtype = "float32"
        super().cast(dtype)

    def hybrid_forward(self, F, x, gamma, beta, running_mean, running_var):
        out = F.BatchNorm(x, gamma, beta, running_mean, running_var, name="fwd",
                          **self._kwargs)
        return F.relu(out) if self._fuse_relu else out


class BatchNormReLU(BatchNorm):
    """BatchNorm followed by relu."""

    _fuse_relu = True


class InstanceNorm(_Norm):
    """Normalises each sample and channel (``axis``) over the remaining axes."""

    def __init__(self, axis=1, epsilon=1e-5, center=True, scale=False,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._gamma_beta(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, x, gamma, beta):
        if self._axis == 1:
            return F.InstanceNorm(x, gamma, beta, name="fwd", eps=self._epsilon)
        x = x.swapaxes(1, self._axis)
        return F.InstanceNorm(x, gamma, beta, name="fwd",
                              eps=self._epsilon).swapaxes(1, self._axis)


class LayerNorm(_Norm):
    """Normalises each sample over ``axis`` (default the last)."""

    def __init__(self, axis=-1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", in_channels=0,
                 prefix=None, params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "axis": axis, "center": center, "scale": scale}
        self._axis = axis
        self._epsilon = epsilon
        self._gamma_beta(in_channels, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.LayerNorm(data, gamma=gamma, beta=beta, axis=self._axis, eps=self._epsilon)


class GroupNorm(_Norm):
    """Normalises each sample over groups of ``num_groups`` channel groups (gamma and beta
    per group, as MXNet 1.x's GroupNorm op)."""

    def __init__(self, num_groups=1, epsilon=1e-5, center=True, scale=True,
                 beta_initializer="zeros", gamma_initializer="ones", prefix=None,
                 params=None):
        super().__init__(prefix=prefix, params=params)
        self._kwargs = {"eps": epsilon, "num_groups": num_groups, "center": center,
                        "scale": scale}
        self._num_groups = num_groups
        self._epsilon = epsilon
        self._gamma_beta(num_groups, center, scale, beta_initializer, gamma_initializer)

    def hybrid_forward(self, F, data, gamma, beta):
        return F.GroupNorm(data, gamma=gamma, beta=beta, num_groups=self._num_groups,
                           eps=self._epsilon)

    def __repr__(self):
        content = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({content})"


class Embedding(HybridBlock):
    """Maps integer indices below ``input_dim`` to rows of an ``(input_dim, output_dim)``
    weight; with ``sparse_grad`` its gradient is a RowSparseNDArray.

    Parameters
    ----------
    input_dim : int
        Number of rows (the vocabulary size); indices must lie in [0, input_dim).
    output_dim : int
        Length of each embedding vector.
    dtype : str or numpy.dtype, default 'float32'
        Data type of the weight and of the output.
    weight_initializer : str or Initializer, optional
        Initializer of the weight (the block's default if None).
    sparse_grad : bool, default False
        Store the weight gradient as row_sparse (the rows the batch touched).
    """

    def __init__(self, input_dim, output_dim, dtype="float32", weight_initializer=None,
                 sparse_grad=False, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = {"input_dim": input_dim, "output_dim": output_dim, "dtype": dtype,
                        "sparse_grad": sparse_grad}
        self.weight = self.params.get("weight", shape=(input_dim, output_dim),
                                      init=weight_initializer, dtype=dtype,
                                      allow_deferred_init=True,
                                      grad_stype="row_sparse" if sparse_grad else "default")

    def hybrid_forward(self, F, x, weight):
        return F.Embedding(x, weight, name="fwd", **self._kwargs)

    def __repr__(self):
        k = self._kwargs
        return f"{type(self).__name__}({k['input_dim']} -> {k['output_dim']}, {k['dtype']})"


class Flatten(HybridBlock):
    """Reshapes ``(N, ...)`` to ``(N, -1)``."""

    def hybrid_forward(self, F, x):
        return F.Flatten(x)

    def __repr__(self):
        return type(self).__name__


class Identity(HybridBlock):
    """Returns its input."""

    def hybrid_forward(self, F, x):
        return x


def _named_function(function, modules, what):
    if not all(hasattr(m, function) for m in modules):
        raise MXNetError(f"Function name {function} is not found in {what}.")


class Lambda(Block):
    """Wraps ``function`` (a callable, or the name of an ``mx.nd`` function) as a Block."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            _named_function(function, (ndarray,), "ndarray")
            self._func_impl = getattr(ndarray, function)
        elif callable(function):
            self._func_impl = function
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def forward(self, *args):
        return self._func_impl(*args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_impl.__name__})"


class HybridLambda(HybridBlock):
    """Wraps ``function(F, x, *args)`` (or the name of a function both ``mx.nd`` and
    ``mx.sym`` have) as a HybridBlock."""

    def __init__(self, function, prefix=None):
        super().__init__(prefix=prefix)
        if isinstance(function, str):
            _named_function(function, (ndarray, symbol), "symbol/ndarray")
            self._func = lambda F, *args: getattr(F, function)(*args)
            self._func_name = function
        elif callable(function):
            self._func = function
            self._func_name = function.__name__
        else:
            raise ValueError(f"Unrecognized function in lambda: {function} of type "
                             f"{type(function)}")

    def hybrid_forward(self, F, x, *args):
        return self._func(F, x, *args)

    def __repr__(self):
        return f"{type(self).__name__}({self._func_name})"
