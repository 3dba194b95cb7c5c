"""What ``amp.init`` does to ``mx.nd`` and ``mx.sym``: each op function on MXNet's lists
is replaced by one that casts its array inputs first (to the target type, to float32, or
all to the widest type among them), so a model built afterwards, Gluon's included,
computes in mixed precision while its parameters stay float32. Loss outputs of ``mx.nd``
get the loss scale multiplied into their ``grad_scale``.

Names are looked up as MXNet does: ``_contrib_X`` is ``X`` in the ``contrib`` submodule
(``_linalg_``, ``_image_``, ``_random_`` alike), other names starting with ``_`` live in
``_internal``. Names mxnext does not have are skipped.
"""

from __future__ import annotations

import functools
import logging

import numpy as np

from ... import ndarray, symbol
from ...ndarray import NDArray
from ...symbol import Symbol
from ..._runtime.graph import NodeEntry

__all__ = ["wrap_module", "wrap_loss_outputs", "cast_array"]

_PREFIXES = ("_contrib_", "_linalg_", "_sparse_", "_image_", "_random_")
_FLOATS = ("float16", "bfloat16", "float32")


def cast_array(x, dtype):
    """``x`` cast to ``dtype`` by ``amp_cast`` when it is a float NDArray of another float
    type AMP knows; a Symbol always gets an ``amp_cast``; anything else is returned as is."""
    dtype = np.dtype(dtype)
    if isinstance(x, Symbol):
        return symbol.amp_cast(x, dtype=dtype.name)
    if isinstance(x, NDArray) and np.dtype(x.dtype) != dtype and np.dtype(x.dtype).name in _FLOATS:
        return ndarray.amp_cast(x, dtype=dtype.name)
    return x


def _home(module, name):
    """(holder, attribute) of op function ``name`` in ``module`` (``mx.nd`` or ``mx.sym``)."""
    for prefix in _PREFIXES:
        if name.startswith(prefix) and (prefix != "_random_" or name.endswith("_like")):
            return getattr(module, prefix[1:-1], None), name[len(prefix):]
    if name.startswith("_"):
        return module._internal, name
    return module, name


def _nd_casting(f, dtype, fp32_params=None, condition=None):
    keep = set(fp32_params or ())

    @functools.wraps(f)
    def call(*args, **kwargs):
        if condition is not None and kwargs.get(condition[0]) not in condition[1]:
            return f(*args, **kwargs)
        args = [x if fp32_params and i < len(fp32_params) and fp32_params[i]
                else cast_array(x, dtype) for i, x in enumerate(args)]
        kwargs = {k: v if k in keep else cast_array(v, dtype) for k, v in kwargs.items()}
        return f(*args, **kwargs)
    return call


def _sym_casting(f, dtype, fp32_params=None, condition=None):
    """The op's node is built first (so the inputs it makes itself, weights, are cast too),
    then an ``amp_cast`` goes in front of each input but auxiliary states and the inputs
    ``fp32_params`` names."""
    @functools.wraps(f)
    def call(*args, **kwargs):
        if condition is not None and kwargs.get(condition[0]) not in condition[1]:
            return f(*args, **kwargs)
        out = f(*args, **kwargs)
        node = out._outputs[0].node
        mutable = set(node.op.mutate_inputs(node.params))
        for i, e in enumerate(node.inputs):
            if i in mutable or (fp32_params and i < len(fp32_params) and fp32_params[i]):
                continue
            cast = cast_array(Symbol([e]), dtype)._outputs[0]
            node.inputs[i] = NodeEntry(cast.node, 0, 0)
        return out
    return call


def _widest(f, target):
    @functools.wraps(f)
    def call(*args, **kwargs):
        args = list(args)
        slots = [(args, i) for i, a in enumerate(args) if isinstance(a, (Symbol, NDArray))]
        slots += [(kwargs, k) for k, a in kwargs.items() if isinstance(a, (Symbol, NDArray))]
        values = [holder[k] for holder, k in slots]
        if any(isinstance(v, Symbol) for v in values):
            cast = symbol.amp_multicast(*values, num_outputs=len(values))
            for (holder, k), c in zip(slots, cast):
                holder[k] = c
        elif any(np.dtype(v.dtype) == np.float32 for v in values):
            for holder, k in slots:
                if np.dtype(holder[k].dtype) == target:
                    holder[k] = ndarray.amp_cast(holder[k], dtype="float32")
        return f(*args, **kwargs)
    return call


def _replace(module, name, make):
    holder, attr = _home(module, name)
    f = getattr(holder, attr, None) if holder is not None else None
    if f is None:
        return
    setattr(holder, attr, make(f))
    if holder is module and hasattr(module.op, attr):
        setattr(module.op, attr, make(getattr(module.op, attr)))


def wrap_module(module, target, lp_ops, fp32_ops, conditional_ops, widest_ops, fp32_params):
    """Replace ``module``'s (``mx.nd`` / ``mx.sym``) op functions by casting ones."""
    casting = _sym_casting if module is symbol else _nd_casting
    fp32 = np.dtype(np.float32)
    for name in lp_ops:
        keep = (fp32_params or {}).get(name)
        _replace(module, name, lambda f, k=keep: casting(f, target, fp32_params=k))
    for name in fp32_ops:
        _replace(module, name, lambda f: casting(f, fp32))
    for name, param, values in conditional_ops:
        _replace(module, name, lambda f, c=(param, values): casting(f, fp32, condition=c))
    for name in widest_ops:
        _replace(module, name, lambda f: _widest(f, target))


def wrap_loss_outputs(module, scaler, names):
    """``mx.nd``'s loss outputs scale their gradient by the loss scale; ``mx.sym``'s warn
    that symbolic execution gets no dynamic loss scaling (as MXNet's)."""
    def scaling(f):
        @functools.wraps(f)
        def call(*args, **kwargs):
            kwargs["grad_scale"] = kwargs.get("grad_scale", 1.0) * scaler.loss_scale
            return f(*args, **kwargs)
        return call

    def warning(f):
        @functools.wraps(f)
        def call(*args, **kwargs):
            logging.warning("%s does not support dynamic loss scaling in symbolic and "
                            "hybridized execution.", f.__name__)
            return f(*args, **kwargs)
        return call
    for name in names:
        if hasattr(module, name):
            setattr(module, name, (scaling if module is ndarray else warning)(getattr(module, name)))
