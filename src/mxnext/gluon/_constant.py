"""MXNet 1.9's ``gluon.Constant``: a parameter that keeps its value and takes no gradient."""

from __future__ import annotations

import warnings

from .. import initializer, ndarray
from ._parameter import Parameter

__all__ = ["Constant"]


class _ValueInit(initializer.Initializer):
    """The initializer of a Constant: copies its value."""

    def __init__(self, value):
        super().__init__()
        self._value = value

    def _init_weight(self, _, arr):
        self._value.copyto(arr)


class Constant(Parameter):
    """A parameter that keeps ``value`` and takes no gradient (``grad_req`` stays 'null')."""

    def __init__(self, name, value):
        if not isinstance(value, ndarray.NDArray):
            value = ndarray.array(value)
        self.value = value
        super().__init__(name, grad_req="null", shape=value.shape, dtype=value.dtype,
                         init=_ValueInit(value))

    def __repr__(self):
        return f"Constant {self.name} (shape={self.shape}, dtype={self.dtype})"

    @property
    def grad_req(self):
        return "null"

    @grad_req.setter
    def grad_req(self, req):
        if req != "null":
            warnings.warn(f'Constant parameter "{self.name}" does not support grad_req other '
                          f'than "null", and new value "{req}" is ignored.')
        self._grad_req = "null"
