"""MXNet's ``mxnet.symbol.symbol`` module: the ``Symbol`` class, variables, groups, loading,
and the module functions that take symbols or scalars (``pow``, ``maximum`` ...) or build
constant symbols (``zeros``, ``arange`` ...)."""

from __future__ import annotations

import math
import os
from numbers import Number

import numpy as np

from .. import attribute
from .._runtime.graph import NodeEntry
from . import _create, _json
from ._arith import binary
from ._methods import split_v2
from ._symbol import Group, Symbol

__all__ = ["Symbol", "var", "Variable", "Group", "load", "load_json", "fromjson", "pow",
           "power", "maximum", "minimum", "hypot", "eye", "zeros", "ones", "full", "arange",
           "linspace", "histogram", "split_v2"]

_STYPES = {"undefined": -1, "default": 0, "row_sparse": 1, "csr": 2}


def var(name, attr=None, shape=None, lr_mult=None, wd_mult=None, dtype=None, init=None,
        stype=None, **kwargs):
    """A variable: an input of the graph, named ``name``. ``shape`` and ``dtype`` are used by
    inference when the caller gives none; ``lr_mult``, ``wd_mult``, ``init`` (an initializer
    or its string) and ``stype`` are kept for the optimizer and binding; ``attr`` and
    ``__key__``-style keywords add attributes."""
    from .._runtime.base import DTYPE_TO_FLAG, as_dtype
    attrs = attribute.current().get(attr)
    if shape is not None:
        attrs["__shape__"] = str(shape)
    if lr_mult is not None:
        attrs["__lr_mult__"] = str(lr_mult)
    if wd_mult is not None:
        attrs["__wd_mult__"] = str(wd_mult)
    if dtype is not None:
        flag = DTYPE_TO_FLAG.get(as_dtype(dtype))
        if flag is None:
            raise TypeError(f"Variable {name!r}: dtype {dtype!r} is not one mxnext can "
                            f"store ({', '.join(d.name for d in DTYPE_TO_FLAG)})")
        attrs["__dtype__"] = str(flag)
    if init is not None:
        attrs["__init__"] = init if isinstance(init, str) else init.dumps()
    if stype is not None:
        if stype not in _STYPES:
            raise ValueError(f"Variable {name!r}: stype {stype!r} is not one of "
                             f"{', '.join(_STYPES)}")
        attrs["__storage_type__"] = str(_STYPES[stype])
    for key, value in kwargs.items():
        if not (key.startswith("__") and key.endswith("__")):
            raise ValueError(f"Variable {name!r}: attribute {key!r} is not supported; extra "
                             f"attributes must start and end with double underscores "
                             f"(__{key}__)")
        attrs[key] = str(value)
    for key, value in attrs.items():
        if not isinstance(value, str):
            raise ValueError(f"Variable {name!r}: attribute {key!r} must be a string, got "
                             f"{type(value).__name__}")
    return Symbol([NodeEntry(_create.make_variable(name, attrs), 0, 0)])


Variable = var


def load(fname):
    """The symbol saved in MXNet JSON file ``fname`` (by ``Symbol.save`` or MXNet 1.x)."""
    if not isinstance(fname, (str, os.PathLike)):
        raise TypeError(f"load: fname must be a path, got {type(fname).__name__}")
    return Symbol(_json.load(fname))


def load_json(json_str):
    """The symbol in MXNet JSON string ``json_str`` (``Symbol.tojson``)."""
    if not isinstance(json_str, str):
        raise TypeError(f"load_json: expected a JSON string, got {type(json_str).__name__}")
    return Symbol(_json.loads(json_str))


fromjson = load_json


# -- symbol or scalar on either side --------------------------------------------------------
def _either(kind, left, right, on_numbers):
    if isinstance(left, Symbol):
        return binary(kind, left, right)
    if isinstance(right, Symbol):
        return binary(kind, right, left, reflected=True)
    if isinstance(left, Number) and isinstance(right, Number):
        return on_numbers(left, right)
    raise TypeError(f"{kind}: expected Symbols or numbers, got {type(left).__name__} and "
                    f"{type(right).__name__}")


def pow(base, exp):
    """``base ** exp`` elementwise; each a Symbol or a number (no broadcasting)."""
    if isinstance(base, Number) and isinstance(exp, Symbol):   # MXNet names it _rpowerscalar
        return _create.apply("_rpower_scalar", "_rpowerscalar", [exp], scalar=base)
    return _either("pow", base, exp, lambda a, b: a ** b)


def power(base, exp):
    """``base ** exp`` elementwise (as ``pow``)."""
    return pow(base, exp)


def maximum(left, right):
    """The elementwise maximum; each side a Symbol or a number."""
    return _either("maximum", left, right, max)


def minimum(left, right):
    """The elementwise minimum; each side a Symbol or a number."""
    return _either("minimum", left, right, min)


def hypot(left, right):
    """``sqrt(left**2 + right**2)`` elementwise; each side a Symbol or a number."""
    return _either("hypot", left, right, math.hypot)


# -- constant symbols -----------------------------------------------------------------------
def _call(opname, **kwargs):
    return _create.op_function(opname)(**kwargs)


def eye(N, M=0, k=0, dtype=None, **kwargs):
    """An N x M (M=0: N x N) matrix with ones on diagonal ``k``."""
    return _call("_eye", N=N, M=M, k=k, dtype=dtype or np.float32, **kwargs)


def zeros(shape, dtype=None, **kwargs):
    """A symbol of zeros of ``shape`` (float32 unless ``dtype``)."""
    return _call("_zeros", shape=shape, dtype=dtype or np.float32, **kwargs)


def ones(shape, dtype=None, **kwargs):
    """A symbol of ones of ``shape`` (float32 unless ``dtype``)."""
    return _call("_ones", shape=shape, dtype=dtype or np.float32, **kwargs)


def full(shape, val, dtype=None, **kwargs):
    """A symbol of ``shape`` filled with ``val`` (float32 unless ``dtype``)."""
    return _call("_full", shape=shape, dtype=dtype or np.float32, value=float(val),
                     **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name=None, dtype=None):
    """Evenly spaced values in [start, stop), each repeated ``repeat`` times."""
    return _call("_arange", start=start, stop=stop, step=step, repeat=repeat,
                     infer_range=infer_range, name=name, dtype=dtype or np.float32)


def linspace(start, stop, num, endpoint=True, name=None, dtype=None):
    """``num`` evenly spaced values from ``start`` to ``stop`` (included when ``endpoint``)."""
    return _call("_linspace", start=start, stop=stop, num=num, endpoint=endpoint,
                     name=name, dtype=dtype or np.float32)


def histogram(a, bins=10, range=None, **kwargs):
    """The histogram of ``a``: ``bins`` equal bins over ``range`` (an int ``bins`` needs a
    ``range``), or the bin edges given as a Symbol."""
    if isinstance(bins, Symbol):
        return _call("_histogram", data=a, bins=bins, **kwargs)
    if isinstance(bins, int):
        if range is None:
            raise ValueError("histogram: a range is required with a number of bins")
        return _call("_histogram", data=a, bin_cnt=bins, range=range, **kwargs)
    raise ValueError("histogram: bins must be an int or a Symbol of bin edges")


