"""Predefined models and their pretrained weights (MXNet 1.9's ``gluon.model_zoo``)."""

from . import model_store
from . import vision
