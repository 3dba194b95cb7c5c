"""MXNet's ``mx.model`` checkpoints: ``prefix-symbol.json`` (the graph, MXNet's JSON) and
``prefix-%04d.params`` (the parameters, MXNet's NDArray file, keys ``arg:<name>`` and
``aux:<name>``). Files written by MXNet 1.x load, and MXNet loads these; each file is
written atomically (a temporary file renamed into place)."""

from __future__ import annotations

import logging

from . import ndarray as nd
from ._runtime.base import MXNetError
from ._runtime.context import Context

__all__ = ["save_checkpoint", "load_checkpoint", "load_params"]


def save_checkpoint(prefix, epoch, symbol, arg_params, aux_params, remove_amp_cast=True):
    """Write ``symbol`` (unless None) and the parameters of ``epoch``."""
    if symbol is not None:
        symbol.save(f"{prefix}-symbol.json", remove_amp_cast=remove_amp_cast)
    cpu = Context("cpu", 0)
    arrays = {f"arg:{k}": v.as_in_context(cpu) for k, v in arg_params.items()}
    arrays.update({f"aux:{k}": v.as_in_context(cpu) for k, v in (aux_params or {}).items()})
    param_name = f"{prefix}-{epoch:04d}.params"
    nd.save(param_name, arrays)
    logging.info('Saved checkpoint to "%s"', param_name)


def load_params(prefix, epoch):
    """(arg_params, aux_params) of ``prefix-%04d.params``."""
    return load_params_file(f"{prefix}-{epoch:04d}.params")


def load_params_file(fname, data=None):
    """(arg_params, aux_params) of a ``.params`` file of ``arg:``/``aux:`` arrays (``data``:
    its bytes, when already read)."""
    loaded = nd.load(fname) if data is None else nd.load_frombuffer(data, repr(fname))
    if not isinstance(loaded, dict):
        raise MXNetError(f"load_params: {fname!r} holds a list of arrays, not the named "
                         f"'arg:'/'aux:' arrays of a checkpoint")
    arg_params, aux_params = {}, {}
    for key, value in loaded.items():
        kind, _, name = key.partition(":")
        if kind == "arg":
            arg_params[name] = value
        elif kind == "aux":
            aux_params[name] = value
        else:
            raise MXNetError(f"load_params: {fname!r} has key {key!r}; a checkpoint's keys "
                             f"start with 'arg:' or 'aux:'")
    return arg_params, aux_params


def load_checkpoint(prefix, epoch):
    """(symbol, arg_params, aux_params) of a checkpoint written by ``save_checkpoint`` (or
    by MXNet's)."""
    from . import symbol
    return (symbol.load(f"{prefix}-symbol.json"), *load_params(prefix, epoch))
