"""``mx.engine``: the public face of ``mxnext._runtime.engine``.

The dependency engine (DESIGN.md §3).
"""

from mxnext._runtime.engine import (
    Engine,
    NaiveEngine,
    ThreadedEngine,
    ThreadedEngineBase,
    ThreadedEnginePerDevice,
    FnProperty,
    bulk,
    set_bulk_size,
    RunContext,
    Var,
    OprHandle,
    get,
    set_engine,
    use_engine,
    in_worker,
    ENGINES,
)

from . import naive, threaded  # noqa: F401  (mx.engine.<submodule>)

__all__ = ["Engine", "NaiveEngine", "ThreadedEngine", "ThreadedEngineBase",
           "ThreadedEnginePerDevice", "FnProperty", "bulk", "set_bulk_size", "RunContext",
           "Var", "OprHandle", "get", "set_engine", "use_engine", "in_worker", "ENGINES"]
