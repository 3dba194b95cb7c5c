"""``mx.resource``: the public face of ``mxnext._runtime.resource``.

Per-device resources ops ask for (docs/internals.md "Resources", DESIGN.md §4).
"""

from mxnext._runtime.resource import (
    ResourceRequest,
    Resource,
    request,
)

__all__ = ["ResourceRequest", "Resource", "request"]
