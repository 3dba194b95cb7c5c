"""MXNet 1.9's ``gluon.nn``: neural network layers."""

from ..block import *
from .basic_layers import *
from .conv_layers import *
from .activations import *
