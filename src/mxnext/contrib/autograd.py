"""MXNet's early autograd API (``mx.contrib.autograd``), kept for old code.

It predates ``mx.autograd``: one switch turns recording and train mode on together
(``train_section``), gradients are requested up front with ``mark_variables``, and
``grad_and_loss``/``grad`` wrap a function so a call returns its input gradients.
Everything runs on ``mx.autograd``'s tape.
"""

from __future__ import annotations

import functools

from .. import autograd as _ag
from .. import ndarray as _nd
from ..ndarray import NDArray

__all__ = ["set_is_training", "TrainingStateScope", "train_section", "test_section",
           "mark_variables", "backward", "compute_gradient", "grad_and_loss", "grad"]

mark_variables = _ag.mark_variables


def set_is_training(is_train: bool) -> bool:
    """Turn recording and train mode on (or off) together; returns the previous
    recording state."""
    _ag.set_training(is_train)
    return _ag.set_recording(is_train)


class TrainingStateScope:
    """``with`` scope that records in train mode (``True``) or neither (``False``)."""

    def __init__(self, enter_state: bool):
        self._enter_state = enter_state
        self._prev = None

    def __enter__(self):
        self._prev = set_is_training(self._enter_state)

    def __exit__(self, *exc):
        if self._prev != self._enter_state:
            set_is_training(self._prev)


def train_section() -> TrainingStateScope:
    """Scope that records ops for ``backward`` and runs them in train mode."""
    return TrainingStateScope(True)


def test_section() -> TrainingStateScope:
    """Scope (usually inside ``train_section``) that neither records nor trains."""
    return TrainingStateScope(False)


def backward(outputs, out_grads=None, retain_graph=False) -> None:
    """Accumulate the gradients of ``outputs`` (a list; ``out_grads`` entries may be None
    for ones) into the marked variables' gradient buffers."""
    if not isinstance(outputs, (list, tuple)):
        raise TypeError(f"contrib.autograd.backward: outputs must be a list or tuple of "
                        f"NDArrays, got {type(outputs).__name__}")
    _ag.backward(list(outputs), None if out_grads is None else list(out_grads), retain_graph)


def compute_gradient(outputs) -> None:
    """Deprecated name of ``backward(outputs)``."""
    backward(outputs)


def grad_and_loss(func, argnum=None):
    """Wrap ``func`` so a call returns ``(gradients of the chosen arguments, func's output)``.

    ``argnum`` (an int or a list of ints) picks the arguments to differentiate; by default
    all of them, which must then all be NDArrays.
    """
    @functools.wraps(func)
    def wrapped(*args):
        variables = args
        if argnum is not None:
            variables = [args[i] for i in (argnum if isinstance(argnum, list) else [argnum])]
        for i, x in enumerate(variables):
            if not isinstance(x, NDArray):
                raise TypeError(f"contrib.autograd.grad_and_loss: argument {i} to "
                                f"differentiate must be an NDArray, got {type(x).__name__}")
        grads = [_nd.zeros_like(x) for x in variables]
        mark_variables(list(variables), grads)
        with train_section():
            outputs = func(*args)
        compute_gradient([outputs] if isinstance(outputs, NDArray) else outputs)
        return grads, outputs
    return wrapped


def grad(func, argnum=None):
    """Wrap ``func`` so a call returns only the gradients of its chosen arguments."""
    with_loss = grad_and_loss(func, argnum)

    @functools.wraps(with_loss)
    def wrapped(*args):
        return with_loss(*args)[0]
    return wrapped
