"""MXNet 1.9's ``gluon.parameter`` module: ``Parameter``, ``Constant``, ``ParameterDict``
and the errors of parameters, re-exported from the files that hold them."""

from ._constant import Constant
from ._parameter import DeferredInitializationError, Parameter, tensor_types
from ._parameter import ParameterError as ParameterError  # not in __all__, as in MXNet
from ._parameter_dict import ParameterDict

__all__ = ["DeferredInitializationError", "Parameter", "Constant", "ParameterDict",
           "tensor_types"]
