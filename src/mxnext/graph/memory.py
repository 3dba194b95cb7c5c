"""``mx.graph.memory``: the public face of ``mxnext._runtime.graph.memory``.

Memory planning over a whole graph (forward and backward): which bytes of one arena each
node output lives in.
"""

from mxnext._runtime.graph.memory import (
    Plan,
    plan_memory,
    options_from_env,
)

__all__ = ["Plan", "plan_memory", "options_from_env"]
