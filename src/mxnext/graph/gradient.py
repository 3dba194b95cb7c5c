"""``mx.graph.gradient``: the public face of ``mxnext._runtime.graph.gradient``.

The gradient pass (NNVM's ``Gradient``): the backward graph of a forward graph, built from
each op's ``FGradient`` rule.
"""

from mxnext._runtime.graph.gradient import (
    gradient,
)

__all__ = ["gradient"]
