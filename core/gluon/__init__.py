"""MXNet 1.9's ``mx.gluon``: the imperative/hybrid neural network API."""

from .parameter import *
from .block import *
from . import nn
from . import utils
# gluon.rnn, gluon.loss, gluon.Trainer (gluon.trainer), gluon.data, gluon.model_zoo and
# gluon.contrib are imported here by the modules that provide them:
from . import data
