"""``mx.engine.naive``: the public face of ``mxnext._runtime.engine.naive``.

NaiveEngine: runs every function at once on the pushing thread (for debugging).
"""

from mxnext._runtime.engine.naive import (
    NaiveEngine,
)

__all__ = ["NaiveEngine"]
