"""Contributed Gluon parts (MXNet 1.9's ``gluon.contrib``)."""

from . import cnn, data, estimator, nn, rnn
from ... import _missing


def __getattr__(name):
    _missing.check(__name__, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
