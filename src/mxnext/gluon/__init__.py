"""MXNet 1.9's ``mx.gluon``: the imperative/hybrid neural network API."""

from .parameter import *
from .block import *
from . import nn
from . import utils
from . import rnn
from . import loss
from .trainer import Trainer
from . import data
from . import model_zoo
from . import contrib
from ..contrib.amp import amp as _amp

_amp.use_gluon(Trainer, HybridBlock, SymbolBlock)
