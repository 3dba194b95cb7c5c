"""``mx.engine.threaded``: the public face of ``mxnext._runtime.engine.threaded``.

Threaded engines: the seeds' dependency rule on worker pools.
"""

from mxnext._runtime.engine.threaded import (
    ThreadedEngineBase,
    ThreadedEngine,
    ThreadedEnginePerDevice,
)

__all__ = ["ThreadedEngineBase", "ThreadedEngine", "ThreadedEnginePerDevice"]
