"""Contributed convolution layers (MXNet 1.9's ``gluon.contrib.cnn``)."""

from .conv_layers import *  # noqa: F401,F403
from . import conv_layers  # noqa: F401

__all__ = conv_layers.__all__
