"""Contributed Gluon parts (MXNet 1.9's ``mxnet.gluon.contrib``)."""

from . import rnn  # noqa: F401
