"""``mx.context``: the public face of ``mxnext._runtime.context``.

Device contexts: ``mx.cpu(i)``, ``mx.gpu(i)``, ``with mx.Context(...)`` scoping.
"""

from mxnext._runtime.context import (
    Context,
    cpu,
    gpu,
    cpu_pinned,
    current_context,
    num_gpus,
    as_context,
)

__all__ = ["Context", "cpu", "gpu", "cpu_pinned", "current_context", "num_gpus",
           "as_context"]
