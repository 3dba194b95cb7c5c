"""Contributed recurrent cells (MXNet 1.9's ``mxnet.gluon.contrib.rnn``)."""

from .rnn_cell import *  # noqa: F401,F403
from .conv_rnn_cell import *  # noqa: F401,F403
from . import conv_rnn_cell, rnn_cell  # noqa: F401
