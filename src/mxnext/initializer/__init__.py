"""MXNet's weight initializers (``mx.initializer``, also ``mx.init``).

Random draws go through ``mx.random`` on the array's device, so ``mx.random.seed`` makes
them reproducible. ``InitDesc``, ``Initializer``, ``register``, ``alias`` and ``create``
live in ``mxnext._initializer_base``.
"""

from __future__ import annotations

import logging
import re

import numpy as np

from .. import random
from ._base import InitDesc, Initializer, alias, bilinear_kernel, create, register
from ._fused_layout import FusedLayout
from .._runtime.base import ParamError, ShapeError

__all__ = ["InitDesc", "Initializer", "register", "alias", "create", "Load", "Mixed", "Zero",
           "One", "Constant", "Uniform", "Normal", "Orthogonal", "Xavier", "MSRAPrelu",
           "Bilinear", "LSTMBias", "FusedRNN"]


def _draw(sampler, a, b, arr):
    """Fill ``arr`` in place from ``mx.random.<sampler>(a, b)`` in its own dtype and device."""
    getattr(random, sampler)(a, b, shape=arr.shape, dtype=np.dtype(arr.dtype).name,
                             ctx=arr.context, out=arr)


class Load:
    """Initialize from saved arrays: ``param`` is a file written by ``mx.nd.save`` (a dict
    of names) or such a dict. ``arg:``/``aux:`` prefixes are dropped from the names; a name
    not found goes to ``default_init``."""

    def __init__(self, param, default_init=None, verbose=False):
        if isinstance(param, str):
            from ..ndarray import load
            source, param = param, load(param)
            if not isinstance(param, dict):
                raise ParamError(f"init.Load: {source!r} holds an unnamed list of arrays; "
                                 f"expected one saved from a dict of names")
        if not isinstance(param, dict):
            raise ParamError(f"init.Load: param must be a file name or a dict of NDArrays, "
                             f"got {type(param).__name__}")
        self.param = {(k[4:] if k.startswith(("arg:", "aux:")) else k): v
                      for k, v in param.items()}
        self.default_init = default_init
        self.verbose = verbose

    def __call__(self, name, arr):
        if name in self.param:
            loaded = self.param[name]
            if tuple(arr.shape) != tuple(loaded.shape):
                raise ShapeError(f"init.Load: parameter {str(name)!r} has shape {arr.shape} "
                                 f"but the loaded array has {loaded.shape}")
            arr[:] = loaded
            how = "loading"
        elif self.default_init is None:
            raise ParamError(f"init.Load: {str(name)!r} is not among the loaded parameters "
                             f"and no default_init was given")
        else:
            self.default_init(name, arr)
            how = "default"
        if self.verbose:
            logging.info("Initialized %s by %s", name, how)


class Mixed:
    """Initialize each name with the initializer of the first regular expression in
    ``patterns`` that matches it (``re.match``: anchored at the start)."""

    def __init__(self, patterns, initializers):
        if len(patterns) != len(initializers):
            raise ParamError(f"init.Mixed: {len(patterns)} patterns but {len(initializers)} "
                             f"initializers")
        self.map = [(re.compile(p), init) for p, init in zip(patterns, initializers)]

    def __call__(self, name, arr):
        for pattern, init in self.map:
            if pattern.match(name):
                init(name, arr)
                return
        raise ParamError(f"init.Mixed: parameter {str(name)!r} matches none of the patterns "
                         f"{[p.pattern for p, _ in self.map]}; add '.*' last for a default")


@register
@alias("zeros")
class Zero(Initializer):
    """Weights set to 0."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 0


@register
@alias("ones")
class One(Initializer):
    """Weights set to 1."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = 1


@register
class Constant(Initializer):
    """Weights set to ``value``: a scalar, or an array (NDArray, numpy, nested list)
    broadcastable to the weight."""

    def __init__(self, value):
        super().__init__(value=value)
        self.value = value

    def _init_weight(self, _, arr):
        arr[:] = self.value

    def dumps(self):
        value = self._kwargs["value"]
        if isinstance(value, np.generic):
            self._kwargs["value"] = value.item()
        elif not np.isscalar(value) and hasattr(value, "tolist"):
            self._kwargs["value"] = value.tolist()
        elif hasattr(value, "asnumpy"):
            self._kwargs["value"] = value.asnumpy().tolist()
        return super().dumps()


@register
class Uniform(Initializer):
    """Weights drawn uniformly from [-scale, scale)."""

    def __init__(self, scale=0.07):
        super().__init__(scale=scale)
        self.scale = scale

    def _init_weight(self, _, arr):
        _draw("uniform", -self.scale, self.scale, arr)


@register
class Normal(Initializer):
    """Weights drawn from N(0, sigma**2)."""

    def __init__(self, sigma=0.01):
        super().__init__(sigma=sigma)
        self.sigma = sigma

    def _init_weight(self, _, arr):
        _draw("normal", 0, self.sigma, arr)


@register
class Orthogonal(Initializer):
    """Weights whose (out, in) flattening has orthonormal rows or columns, times ``scale``
    (Saxe et al., 2013): the SVD factor of a ``rand_type`` ('uniform' in [-1, 1) or
    'normal') random matrix."""

    def __init__(self, scale=1.414, rand_type="uniform"):
        super().__init__(scale=scale, rand_type=rand_type)
        self.scale = scale
        self.rand_type = rand_type

    def _init_weight(self, name, arr):
        if self.rand_type not in ("uniform", "normal"):
            raise ParamError(f"init.Orthogonal: rand_type must be 'uniform' or 'normal', got "
                             f"{self.rand_type!r}")
        nout, nin = arr.shape[0], int(np.prod(arr.shape[1:]))
        sample = random.uniform if self.rand_type == "uniform" else random.normal
        tmp = sample(-1.0 if self.rand_type == "uniform" else 0.0, 1.0,
                     shape=(nout, nin)).asnumpy()
        u, _, v = np.linalg.svd(tmp, full_matrices=False)
        arr[:] = self.scale * (u if u.shape == tmp.shape else v).reshape(arr.shape)


@register
class Xavier(Initializer):
    """Weights scaled to the layer's fan (Glorot & Bengio, 2010): with fan_in = shape[1] *
    receptive field and fan_out = shape[0] * receptive field, ``factor_type`` picks their
    mean ('avg'), 'in' or 'out' as n, and the draw is uniform in [-c, c) (``rnd_type``
    'uniform') or N(0, c**2) ('gaussian'), c = sqrt(magnitude / n)."""

    def __init__(self, rnd_type="uniform", factor_type="avg", magnitude=3):
        super().__init__(rnd_type=rnd_type, factor_type=factor_type, magnitude=magnitude)
        self.rnd_type = rnd_type
        self.factor_type = factor_type
        self.magnitude = float(magnitude)

    def _init_weight(self, name, arr):
        shape = arr.shape
        if len(shape) < 2:
            raise ParamError(f"init.{type(self).__name__}: cannot initialize {str(name)!r} of "
                             f"shape {shape}: it needs at least 2 dimensions")
        field = float(np.prod(shape[2:])) if len(shape) > 2 else 1.0
        fan_in, fan_out = shape[1] * field, shape[0] * field
        factors = {"avg": (fan_in + fan_out) / 2.0, "in": fan_in, "out": fan_out}
        if self.factor_type not in factors:
            raise ParamError(f"init.{type(self).__name__}: factor_type must be 'avg', 'in' or "
                             f"'out', got {self.factor_type!r}")
        scale = float(np.sqrt(self.magnitude / factors[self.factor_type]))
        if self.rnd_type == "uniform":
            _draw("uniform", -scale, scale, arr)
        elif self.rnd_type == "gaussian":
            _draw("normal", 0, scale, arr)
        else:
            raise ParamError(f"init.{type(self).__name__}: rnd_type must be 'uniform' or "
                             f"'gaussian', got {self.rnd_type!r}")


@register
class MSRAPrelu(Xavier):
    """Gaussian Xavier with magnitude 2 / (1 + slope**2), for layers followed by (P)ReLU
    (He et al., 2015)."""

    def __init__(self, factor_type="avg", slope=0.25):
        super().__init__("gaussian", factor_type, 2.0 / (1 + slope ** 2))
        self._kwargs = {"factor_type": factor_type, "slope": slope}


@register
class Bilinear(Initializer):
    """Weights of a deconvolution that upsamples bilinearly (shape N, C, H, W)."""

    def __init__(self):
        super().__init__()

    def _init_weight(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)


@register
class LSTMBias(Initializer):
    """An LSTM cell's bias (gates i, f, c, o stacked): 0, except the forget gate's quarter,
    set to ``forget_bias``."""

    def __init__(self, forget_bias=1.0):
        super().__init__(forget_bias=forget_bias)
        self.forget_bias = forget_bias

    def _init_weight(self, name, arr):
        arr[:] = 0.0
        hidden = arr.shape[0] // 4
        arr[hidden:2 * hidden] = self.forget_bias


@register
class FusedRNN(Initializer):
    """The packed parameter vector of a fused ``RNN`` op (``mx.rnn.FusedRNNCell`` with the
    same ``num_hidden``, ``num_layers``, ``mode``, ``bidirectional``): unpacked into its
    per-gate arrays, each initialized by ``init`` (or the global initializer when None) by
    its name, LSTM forget-gate biases set to ``forget_bias``, and packed back."""

    def __init__(self, init, num_hidden, num_layers, mode, bidirectional=False,
                 forget_bias=1.0):
        if isinstance(init, str):
            init = create(init)
        super().__init__(init=None if init is None else init.dumps(), num_hidden=num_hidden,
                         num_layers=num_layers, mode=mode, bidirectional=bidirectional,
                         forget_bias=forget_bias)
        self._init = init
        self._num_hidden = num_hidden
        self._num_layers = num_layers
        self._mode = mode
        self._bidirectional = bidirectional
        self._forget_bias = forget_bias

    def _init_weight(self, desc, arr):
        cell = FusedLayout(self._num_hidden, self._num_layers, self._mode, self._bidirectional,
                           "", "parameters")
        fallback = self._init or getattr(desc, "global_init", None)
        if fallback is None:
            raise ParamError(f"init.FusedRNN: {str(desc)!r} has no init and no global "
                             f"initializer to fall back to")
        args = cell.unpack({"parameters": arr})
        for name, part in args.items():
            if self._mode == "lstm" and name.endswith("_f_bias"):
                part[:] = self._forget_bias
            else:
                fallback(InitDesc(name, global_init=getattr(desc, "global_init", None)), part)
        arr[:] = cell.pack(args)["parameters"]
