"""``mx.opctx``: the public face of ``mxnext._runtime.opctx``.

What a compute function receives besides its arrays: ``OpContext``, ``OpReqType``,
``assign``; and ``call_compute``, the one way the core calls a compute function.
"""

from mxnext._runtime.opctx import (
    OpReqType,
    OpContext,
    assign,
    as_req,
    call_compute,
    BoundState,
    kernel_of,
    is_async,
)

__all__ = ["OpReqType", "OpContext", "assign", "as_req", "call_compute", "BoundState",
           "kernel_of", "is_async"]
