"""MXNet's ``mx.optimizer`` (alias ``mx.opt``): optimizers, their registry and the Updater."""

from . import contrib, optimizer
from ._adaptive import FTML, LAMB, AdaDelta, AdaGrad, Adam, Adamax, Ftrl, Nadam, RMSProp
from ._others import DCASGD, SGLD, Test
from ._sgd import LARS, NAG, SGD, Signum, ccSGD
from .optimizer import Optimizer, create, register
from .updater import Updater, get_updater

__all__ = ["AdaDelta", "AdaGrad", "Adam", "Adamax", "DCASGD", "FTML", "Ftrl", "LAMB", "LARS",
           "NAG", "Nadam", "Optimizer", "RMSProp", "SGD", "SGLD", "Signum", "Test", "Updater",
           "ccSGD", "contrib", "create", "get_updater", "register"]
