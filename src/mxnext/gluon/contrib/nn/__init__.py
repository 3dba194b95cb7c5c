"""Contributed layers (MXNet 1.9's ``gluon.contrib.nn``)."""

from .basic_layers import *
from .pixel_shuffle import *
from .sync_batch_norm import *
from . import basic_layers, pixel_shuffle, sync_batch_norm

__all__ = basic_layers.__all__ + pixel_shuffle.__all__ + sync_batch_norm.__all__
