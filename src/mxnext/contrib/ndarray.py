"""``mx.contrib.ndarray``: ``mx.nd.contrib`` under MXNet's older name."""

from ..ndarray import contrib as _contrib
from ..ndarray.contrib import *  # noqa: F401,F403


def __getattr__(name):
    return getattr(_contrib, name)
