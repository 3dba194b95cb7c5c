"""``mx.contrib.symbol``: ``mx.sym.contrib`` under MXNet's older name."""

from ..symbol import contrib as _contrib


def __getattr__(name):
    return getattr(_contrib, name)
