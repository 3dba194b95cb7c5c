"""The variable container cells share weights through."""

from __future__ import annotations

from .. import symbol

__all__ = ["RNNParams"]


class RNNParams:
    """Variables of one or more cells, by name: ``get`` makes a variable the first time a name
    is asked for and hands out that same variable afterwards, so cells built on one container
    share their weights. Every name gets the container's ``prefix``."""

    def __init__(self, prefix=""):
        self._prefix = prefix
        self._params = {}

    def get(self, name, **kwargs):
        """The variable ``prefix + name``, made with ``mx.sym.Variable(**kwargs)`` if new."""
        full = self._prefix + name
        if full not in self._params:
            self._params[full] = symbol.Variable(full, **kwargs)
        return self._params[full]

