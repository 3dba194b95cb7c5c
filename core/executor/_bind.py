"""``Symbol``'s methods that make and run executors (``bind``, ``simple_bind``, ``eval``)."""

from __future__ import annotations

__all__ = ["BindMethods"]


class BindMethods:
    """Mixed into ``Symbol``: everything that turns a graph into an ``Executor``."""

    __slots__ = ()
