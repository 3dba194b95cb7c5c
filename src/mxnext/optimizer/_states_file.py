"""MXNet's ``.states`` files (optimizer states): written atomically, read without running
code from the file.

The format is a pickle of what ``Updater.get_states`` returns: a dict of states (None,
NDArrays, tuples and lists of them), or with ``dump_optimizer`` the pair (states,
optimizer), the optimizer holding plain values and maybe its lr scheduler. A pickle names
the callables that rebuild its objects and ``pickle.loads`` imports and calls whatever it
names; the unpickler here resolves only the names such a file holds (NDArray and the
``bytearray`` of its record, optimizers and lr schedulers already imported, MXNet's module
paths included so that files MXNet wrote load) and refuses any other before importing it.

Loaded states are checked against the parameters they are for: each state must hold the
arrays (shapes, dtypes) the optimizer makes for that parameter, else the load is undone
and the error names the file, the parameter and both shapes.
"""

from __future__ import annotations

import codecs
import copyreg
import io
import os
import pickle
import warnings

import numpy as np

from .._atomic_write import write_atomic
from .._runtime.base import MXNetError
from ..lr_scheduler import LRScheduler
from ..ndarray import NDArray
from .optimizer import Optimizer

__all__ = ["StatesFormatError", "loads", "save_states_file", "load_states_file",
           "checked_load"]


class StatesFormatError(MXNetError, ValueError):
    """Bytes (``source``: the file or call they came to) that are not optimizer states."""

    def __init__(self, source: str, detail: str):
        super().__init__(f"{source}: {detail}")
        self.detail = detail


class _Refused(Exception):
    pass


def _new_ndarray(*_):
    """MXNet pickles an NDArray as ``NDArray(None)`` then its state: the empty shell."""
    return NDArray.__new__(NDArray)


# what pickles of the states use for bytes: bytearray (protocol >= 3), and in protocols 0-2
# bytearray(_codecs.encode(text, "latin1")); objects of protocols 0-1 come from
# copyreg._reconstructor(cls, object, None)
_PLAIN = {("builtins", "bytearray"): bytearray, ("__builtin__", "bytearray"): bytearray,
          ("_codecs", "encode"): codecs.encode,
          ("copyreg", "_reconstructor"): copyreg._reconstructor,
          ("copy_reg", "_reconstructor"): copyreg._reconstructor,
          ("builtins", "object"): object, ("__builtin__", "object"): object}


def _classes(root):
    found, todo = [], [root]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return found


def _find_class(module: str, name: str):
    """The object ``module.name`` of a states pickle, or None when states cannot hold it.
    A class of mxnext (or one a user defined) matches by its module and name; MXNet's
    ``mxnet.<package>...`` paths match mxnext's class of that name in the package."""
    if (module, name) in _PLAIN:
        return _PLAIN[(module, name)]
    if module == "mxnet.ndarray.ndarray" and name == "NDArray":
        return _new_ndarray
    from_mxnet = module.startswith("mxnet.")
    package = "mxnext." + module.split(".")[1] if from_mxnet else None
    for root in (NDArray, Optimizer, LRScheduler):
        for cls in _classes(root):
            if from_mxnet:
                if cls.__name__ == name and cls.__module__.startswith(package):
                    return cls
            elif cls.__module__ == module and cls.__qualname__ == name:
                return cls
    return None


class _Unpickler(pickle.Unpickler):
    def find_class(self, module, name):
        found = _find_class(module, name)
        if found is None:
            raise _Refused(f"it refers to {module}.{name}, not one of the types optimizer "
                           f"states hold (NDArray, bytearray, optimizers, lr schedulers)")
        return found

    def persistent_load(self, pid):
        raise _Refused(f"it holds a persistent id {pid!r}, which optimizer states never do")


def loads(data, source: str = "Updater.set_states"):
    """The states, or (states, optimizer), of ``get_states`` bytes; ``source`` names them
    in errors."""
    try:
        states = _Unpickler(io.BytesIO(data)).load()
    except _Refused as exc:
        raise StatesFormatError(source, f"refused to load: {exc} (loading states never "
                                        f"runs code from the file)") from None
    except Exception as exc:   # any failure to rebuild the objects: the bytes are damaged
        raise StatesFormatError(source, f"not a valid optimizer states pickle (truncated or "
                                        f"corrupt): {type(exc).__name__}: {exc}") from None
    held = states
    if isinstance(states, tuple) and len(states) == 2:
        held, optimizer = states
        if not isinstance(optimizer, Optimizer):
            raise StatesFormatError(source, f"expected (states, optimizer), got "
                                            f"(..., {type(optimizer).__name__})")
    if not isinstance(held, dict):
        raise StatesFormatError(source, f"expected a dict of states, got {type(held).__name__}")
    return states


def save_states_file(updater, fname, dump_optimizer=False) -> None:
    """Write ``updater.get_states(dump_optimizer)`` to ``fname`` atomically."""
    write_atomic(fname, updater.get_states(dump_optimizer))


def load_states_file(updater, fname, what: str, weights=None) -> None:
    """Give ``updater.set_states`` the bytes of ``fname``; a damaged or hostile file, or
    states that do not fit ``weights`` (see ``checked_load``), raise ``StatesFormatError``
    naming ``what`` (the caller) and the file."""
    with open(fname, "rb") as f:
        data = f.read()
    source = f"{what}: {os.fspath(fname)!r}"

    def load():
        try:
            updater.set_states(data)
        except StatesFormatError as exc:
            raise StatesFormatError(source, exc.detail) from None

    checked_load(updater, load, weights, source)


def checked_load(updater, load, weights, source: str) -> None:
    """Runs ``load()``, which gives ``updater`` its states, then checks each state against
    its weight (``weights``: index -> (parameter name, weight NDArray); no check when it or
    ``updater`` is None). A state that does not fit puts ``updater`` back as it was and
    raises ``StatesFormatError`` naming ``source``."""
    if updater is None or weights is None:
        load()
        return
    before = dict(vars(updater))
    load()
    try:
        _check(updater, weights, source)
    except BaseException:
        vars(updater).clear()
        vars(updater).update(before)
        raise


def _arrays(state):
    """(shape, dtype name) of each array of a state (None, an NDArray, tuples of them)."""
    if isinstance(state, NDArray):
        return [(tuple(state.shape), np.dtype(state.dtype).name)]
    if isinstance(state, (tuple, list)):
        return [a for s in state for a in _arrays(s)]
    return []


def _show(arrays):
    return ", ".join(f"{shape} {dtype}" for shape, dtype in arrays) or "no arrays"


def _check(updater, weights, source):
    optimizer = updater.optimizer
    for index, state in updater.states.items():
        if index not in weights:
            continue
        name, weight = weights[index]
        with warnings.catch_warnings():        # what create_state warns, training warned
            warnings.simplefilter("ignore")
            want = _arrays(optimizer.create_state_multi_precision(index, weight))
        got = _arrays(state)
        if got != want:
            raise StatesFormatError(
                source, f"the state of parameter {name!r} holds {_show(got)}, but "
                        f"{type(optimizer).__name__} needs {_show(want)} for that parameter "
                        f"(shape {tuple(weight.shape)}, {np.dtype(weight.dtype).name}): the "
                        f"states were saved for other shapes or another optimizer")
