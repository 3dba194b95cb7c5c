"""``mx.graph.cse``: the public face of ``mxnext._runtime.graph.cse``.

Common subexpression elimination over a copy of a forward graph (MXNet's
``EliminateCommonExpr``, on by default, ``MXNET_ELIMINATE_COMMON_EXPR=0`` turns it off).
"""

from mxnext._runtime.graph.cse import (
    enabled,
    eliminate_common_expr,
)

__all__ = ["enabled", "eliminate_common_expr"]
