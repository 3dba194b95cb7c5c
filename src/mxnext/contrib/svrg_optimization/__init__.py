"""MXNet's ``mx.contrib.svrg_optimization``: stochastic variance-reduced gradient training
for the Module API (``SVRGModule``) and the optimizers it installs."""

from . import svrg_module, svrg_optimizer
from .svrg_module import SVRGModule

__all__ = ["SVRGModule", "svrg_module", "svrg_optimizer"]
