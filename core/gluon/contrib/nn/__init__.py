"""Contributed layers (MXNet 1.9's ``gluon.contrib.nn``)."""

from .basic_layers import *
from .basic_layers import __all__
