"""Contributed recurrent cells (MXNet 1.9's ``mxnet.gluon.contrib.rnn``)."""

from .rnn_cell import *  # noqa: F401,F403
from . import rnn_cell  # noqa: F401
