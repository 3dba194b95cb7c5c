"""MXNet 1.9's ``gluon.ParameterDict``: parameters by full name under a prefix, shared
between blocks, initialized, saved and loaded together."""

from __future__ import annotations

import re
from collections import OrderedDict

import numpy as np

from .. import initializer, ndarray
from ._constant import Constant
from ._parameter import Parameter, ParameterError
from .utils import _brief_print_list, _indent

__all__ = ["ParameterDict"]

_NAMING = ("For more info on naming, please see "
           "https://mxnet.io/api/python/docs/tutorials/packages/gluon/blocks/naming.html")


class ParameterDict:
    """Parameters by full name, all starting with ``prefix``; a dict built with ``shared``
    takes parameters of that name from it first (how blocks share weights)."""

    def __init__(self, prefix="", shared=None):
        self._prefix = prefix
        self._params = OrderedDict()
        self._shared = shared

    def __repr__(self):
        name = self._prefix + " " if self._prefix else ""
        content = "\n".join(_indent(f"  {v}", 2) for v in self.values())
        return f"{name}(\n{content}\n)"

    def __getitem__(self, key):
        return self._params[key]

    def __iter__(self):
        return iter(self._params)

    def __len__(self):
        return len(self._params)

    def __contains__(self, key):
        return key in self._params

    def items(self):
        return self._params.items()

    def keys(self):
        return self._params.keys()

    def values(self):
        return self._params.values()

    @property
    def prefix(self):
        return self._prefix

    def _get_impl(self, name):
        if name in self._params:
            return self._params[name]
        if self._shared is not None and name in self._shared._params:
            self._params[name] = self._shared._params[name]
            return self._params[name]
        return None

    def get(self, name, **kwargs):
        """The parameter ``prefix + name``, created with ``kwargs`` when absent; when present,
        ``kwargs`` must agree with it (a 0 in a shape matches any size and gets filled)."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            param = self._params[name] = Parameter(name, **kwargs)
            return param
        for k, v in kwargs.items():
            existing = getattr(param, k, None)
            if existing is None:
                setattr(param, k, v)
                continue
            if k == "shape" and v is not None and len(v) == len(existing):
                merged = _merge_shapes(v, existing)
                if merged is not None:
                    param._shape = merged
                    continue
            elif k == "dtype" and np.dtype(v) == np.dtype(existing):
                continue
            if v is not None and v != existing:
                raise ParameterError(f"Cannot retrieve Parameter {name!r} because desired "
                                     f"attribute does not match with stored for attribute "
                                     f"{k!r}: desired {v!r} vs stored {existing!r}.")
        return param

    def get_constant(self, name, value=None):
        """The Constant ``prefix + name``, created from ``value`` when absent."""
        name = self.prefix + name
        param = self._get_impl(name)
        if param is None:
            if value is None:
                raise KeyError(f"No constant named '{name}'. Please specify value if you want "
                               f"to create a new constant.")
            param = self._params[name] = Constant(name, value)
        elif value is not None:
            if not isinstance(param, Constant):
                raise ParameterError(f"Parameter {name!r} already exists but it is not a "
                                     f"constant.")
            if isinstance(value, ndarray.NDArray):
                value = value.asnumpy()
            value = np.asarray(value)
            if param.shape != value.shape or not (param.value.asnumpy() == value).all():
                raise ParameterError(f"Constant {name!r} already exists but it's value "
                                     f"doesn't match new value")
        return param

    def update(self, other):
        """Add ``other``'s parameters; a name present in both must be the same Parameter."""
        for k, v in other.items():
            if k in self._params and self._params[k] is not v:
                raise ParameterError(f"Cannot update self with other because they have "
                                     f"different Parameters with the same name {k!r}")
        for k, v in other.items():
            self._params[k] = v

    def initialize(self, init=None, ctx=None, verbose=False, force_reinit=False):
        """Initialize every parameter (``init`` is the default for those without one)."""
        if init is None:
            init = initializer.Uniform()
        if verbose:
            init.set_verbosity(verbose=verbose)
        for v in self.values():
            v.initialize(None, ctx, init, force_reinit=force_reinit)

    def zero_grad(self):
        for p in self.values():
            p.zero_grad()

    def reset_ctx(self, ctx):
        for p in self.values():
            p.reset_ctx(ctx)

    def list_ctx(self):
        seen = []
        for p in self.values():
            seen.extend(c for c in p.list_ctx() if c not in seen)
        return seen

    def setattr(self, name, value):
        """Set attribute ``name`` (``grad_req``, ``lr_mult`` ...) of every parameter."""
        for p in self.values():
            setattr(p, name, value)

    def save(self, filename, strip_prefix=""):
        """Save the values (mean over contexts) by name less ``strip_prefix``."""
        arg_dict = {}
        for param in self.values():
            if not param.name.startswith(strip_prefix):
                raise ValueError(f"Prefix '{strip_prefix}' is to be striped before saving, but "
                                 f"Parameter's name '{param.name}' does not start with "
                                 f"'{strip_prefix}'. this may be due to your Block shares "
                                 f"parameters from other Blocks or you forgot to use 'with "
                                 f"name_scope()' when creating child blocks. {_NAMING}")
            arg_dict[param.name[len(strip_prefix):]] = param._reduce()
        ndarray.save(filename, arg_dict)

    def load(self, filename, ctx=None, allow_missing=False, ignore_extra=False,
             restore_prefix="", cast_dtype=False, dtype_source="current"):
        """Load values saved by ``save`` (names get ``restore_prefix`` back)."""
        if restore_prefix:
            for name in self.keys():
                if not name.startswith(restore_prefix):
                    raise ParameterError(f"restore_prefix is '{restore_prefix}' but Parameters "
                                         f"name '{name}' does not start with "
                                         f"'{restore_prefix}'. {_NAMING}")
        self.load_dict(ndarray.load(filename), ctx, allow_missing, ignore_extra,
                       restore_prefix, filename, cast_dtype, dtype_source)

    def load_dict(self, param_dict, ctx=None, allow_missing=False, ignore_extra=False,
                  restore_prefix="", filename=None, cast_dtype=False, dtype_source="current"):
        """Load from a dict of name -> NDArray (``arg:``/``aux:`` prefixes dropped)."""
        lprefix = len(restore_prefix)
        arg_dict = {restore_prefix + (k[4:] if k.startswith(("arg:", "aux:")) else k): v
                    for k, v in param_dict.items()}
        source = f"file: {filename}" if filename else "param_dict"
        if not allow_missing:
            for name in self.keys():
                if name not in arg_dict:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' is missing in {source}, which contains "
                        f"parameters: {_brief_print_list(arg_dict.keys())}. Please make sure "
                        f"source and target networks have the same prefix.{_NAMING}")
        for name, value in arg_dict.items():
            if name not in self._params:
                if not ignore_extra:
                    raise ParameterError(
                        f"Parameter '{name[lprefix:]}' loaded from {source} is not present in "
                        f"ParameterDict, choices are: {_brief_print_list(self._params.keys())}"
                        f". Set ignore_extra to True to ignore. Please make sure source and "
                        f"target networks have the same prefix.{_NAMING}")
                continue
            self[name]._load_init(value, ctx, cast_dtype=cast_dtype, dtype_source=dtype_source)

    def select(self, pattern):
        """A ParameterDict (same prefix) of the parameters whose name matches the regex."""
        ret = ParameterDict(self._prefix)
        regex = re.compile(pattern)
        ret.update({k: v for k, v in self.items() if regex.match(k)})
        return ret


def _merge_shapes(wanted, existing):
    """``wanted`` and ``existing`` with unknown (0/-1) dims filled from the other, or None
    where they disagree."""
    merged = []
    for a, b in zip(wanted, existing):
        if a == b or a in (0, -1):
            merged.append(b)
        elif b in (0, -1):
            merged.append(a)
        else:
            return None
    return tuple(merged)
