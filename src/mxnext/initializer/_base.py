"""The machinery under ``mx.init``: the name descriptor, the ``Initializer`` base class that
picks a fill rule from a parameter's name, and the registry ``create`` reads names from."""

from __future__ import annotations

import json
import logging
import math
import warnings

import numpy as np

from .._class_registry import class_registry
from .._runtime.base import ParamError

__all__ = ["InitDesc", "Initializer", "register", "alias", "create"]


class InitDesc(str):
    """A parameter's name, with the variable's attributes (``attrs``, from
    ``Symbol.attr_dict``) and the initializer to fall back to (``global_init``)."""

    def __new__(cls, name, attrs=None, global_init=None):
        desc = super().__new__(cls, name)
        desc.attrs = attrs or {}
        desc.global_init = global_init
        return desc


# suffix -> fill rule, tried in order: MXNet's dispatch for an InitDesc ...
_BY_SUFFIX = (("weight", "_init_weight"), ("bias", "_init_bias"), ("gamma", "_init_gamma"),
              ("beta", "_init_beta"), ("min", "_init_zero"), ("max", "_init_one"),
              ("weight_quantize", "_init_quantized_weight"),
              ("bias_quantize", "_init_quantized_bias"))
# ... and for a plain-string name (the deprecated call), prefixes first
_LEGACY_SUFFIX = (("bias", "_init_bias"), ("gamma", "_init_gamma"), ("beta", "_init_beta"),
                  ("weight", "_init_weight"), ("moving_mean", "_init_zero"),
                  ("moving_var", "_init_one"), ("moving_inv_var", "_init_zero"),
                  ("moving_avg", "_init_zero"), ("min", "_init_zero"), ("max", "_init_one"))


class Initializer:
    """Base of every initializer. ``init(desc, arr)`` fills the NDArray ``arr`` by the rule
    the name calls for: the variable's ``__init__`` attribute if it has one, otherwise its
    suffix (``weight`` -> ``_init_weight``, ``bias``/``beta``/``min`` -> 0,
    ``gamma``/``max`` -> 1). Subclasses override ``_init_weight`` (and others as needed);
    ``_kwargs`` are the constructor arguments ``dumps`` records."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._verbose = False
        self._print_func = None

    def set_verbosity(self, verbose=False, print_func=None):
        """Log every array initialized, with ``print_func(arr)`` (default: its root mean
        square, ``norm(arr) / sqrt(arr.size)``). Returns ``self``."""
        self._verbose = verbose
        self._print_func = print_func or _root_mean_square
        return self

    def _verbose_print(self, desc, rule, arr):
        if self._verbose and self._print_func:
            logging.info("Initialized %s as %s: %s", desc, rule, self._print_func(arr))

    def dumps(self):
        """The initializer as JSON, ``'["<class name lowercased>", {kwargs}]'``: what
        ``create`` reads back and ``mx.sym.var(init=...)`` stores in ``__init__``."""
        return json.dumps([type(self).__name__.lower(), self._kwargs])

    def __call__(self, desc, arr):
        if not isinstance(desc, InitDesc):
            self._legacy_init(desc, arr)
            return
        if desc.global_init is None:
            desc.global_init = self
        chosen = desc.attrs.get("__init__", "")
        if chosen:
            create(chosen)._init_weight(desc, arr)
            self._verbose_print(desc, chosen, arr)
            return
        for suffix, rule in _BY_SUFFIX:
            if desc.endswith(suffix):
                getattr(self, rule)(desc, arr)
                self._verbose_print(desc, suffix, arr)
                return
        self._init_default(desc, arr)

    def _legacy_init(self, name, arr):
        from ..ndarray import NDArray
        warnings.warn("Calling an initializer with init(str, NDArray) is deprecated; use "
                      "init(mx.init.InitDesc(name), NDArray)", DeprecationWarning, stacklevel=3)
        if not isinstance(name, str):
            raise TypeError(f"{type(self).__name__}: name must be a str, got "
                            f"{type(name).__name__}")
        if not isinstance(arr, NDArray):
            raise TypeError(f"{type(self).__name__}: arr must be an NDArray, got "
                            f"{type(arr).__name__}")
        if name.startswith("upsampling"):
            return self._init_bilinear(name, arr)
        if name.startswith("stn_loc") and name.endswith("weight"):
            return self._init_zero(name, arr)
        if name.startswith("stn_loc") and name.endswith("bias"):
            return self._init_loc_bias(name, arr)
        for suffix, rule in _LEGACY_SUFFIX:
            if name.endswith(suffix):
                return getattr(self, rule)(name, arr)
        self._init_default(name, arr)

    # -- fill rules ---------------------------------------------------------------------------
    def _init_bilinear(self, _, arr):
        arr[:] = bilinear_kernel(arr.shape)

    def _init_loc_bias(self, name, arr):
        if tuple(arr.shape) != (6,):
            raise ParamError(f"{type(self).__name__}: {name!r} (a spatial transformer's "
                             f"localisation bias) must have shape (6,), got {arr.shape}")
        arr[:] = np.array([1.0, 0, 0, 0, 1.0, 0])   # the identity affine transform

    def _init_zero(self, _, arr):
        arr[:] = 0.0

    def _init_one(self, _, arr):
        arr[:] = 1.0

    _init_bias = _init_beta = _init_quantized_bias = _init_zero
    _init_gamma = _init_one

    def _init_quantized_weight(self, _, arr):
        from .. import random
        arr[:] = random.randint(-127, 127, shape=arr.shape, dtype="int32").asnumpy()

    def _init_weight(self, name, arr):
        raise NotImplementedError(f"{type(self).__name__} does not initialize weights "
                                  f"({name!r}): subclasses override _init_weight")

    def _init_default(self, name, _):
        raise ParamError(
            f"{type(self).__name__}: no default initialization for {str(name)!r}; names "
            f"ending in 'weight', 'bias', 'gamma' (1.0), 'beta' (0.0), 'min' (0.0) or 'max' "
            f"(1.0) have one, others need mx.sym.Variable(name, init=mx.init.<...>)")

    def __eq__(self, other):
        if not isinstance(other, Initializer):
            return NotImplemented
        return type(self) is type(other) and self._kwargs == other._kwargs

    __hash__ = None   # equal by value and mutable, as in MXNet

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self._kwargs.items())
        return f"{type(self).__name__}({args})"


def _root_mean_square(arr):
    from .. import ndarray
    return str((ndarray.norm(arr) / math.sqrt(arr.size)).asscalar())


def bilinear_kernel(shape):
    """The weights of a bilinear upsampling deconvolution of ``shape`` (N, C, H, W): every
    (n, c) slice is the outer product of one triangular profile, scaled by the width."""
    f = math.ceil(shape[3] / 2.0)
    c = (2 * f - 1 - f % 2) / (2.0 * f)
    wy = 1 - np.abs(np.arange(shape[2]) / f - c)
    wx = 1 - np.abs(np.arange(shape[3]) / f - c)
    return np.broadcast_to((wy[:, None] * wx[None, :]).astype(np.float32), tuple(shape))


# -- registry: lower-cased name -> class ------------------------------------------------------
_REGISTRY: dict[str, type] = {}


register, alias, _from_string = class_registry("initializer", Initializer, _REGISTRY, "mx.init")


def create(*args, **kwargs):
    """An initializer from a spec: an instance (returned as is), a registered name or class
    (built with the remaining arguments), the JSON of ``dumps()`` (``'["normal",
    {"sigma": 0.5}]'``), or a dict / JSON object holding ``initializer`` and the kwargs."""
    if args:
        spec, args = args[0], args[1:]
    elif "initializer" in kwargs:
        spec = kwargs.pop("initializer")
    else:
        raise ParamError("initializer.create: no initializer given")
    if isinstance(spec, Initializer):
        if args or kwargs:
            raise ParamError(f"initializer.create: {spec!r} is already an instance; extra "
                             f"arguments are invalid")
        return spec
    if isinstance(spec, type) and issubclass(spec, Initializer):
        return spec(*args, **kwargs)
    if isinstance(spec, dict):
        return create(**spec)
    if not isinstance(spec, str):
        raise ParamError(f"initializer.create: expected an Initializer, its class, name or "
                         f"JSON, got {type(spec).__name__} {spec!r}")
    return _from_string(spec, args, kwargs, create, lambda d: create(**d))
