"""Contributed Gluon parts (MXNet 1.9's ``gluon.contrib``)."""

from . import data, nn, rnn
