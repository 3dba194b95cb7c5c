"""``mx.device``: the public face of ``mxnext._runtime.device``.

Device registry (docs/internals.md "Devices").
"""

from mxnext._runtime.device import (
    register,
    get,
    available,
    copy_across,
    inline_policy,
)

from . import cpu  # noqa: F401  (mx.device.<submodule>)

__all__ = ["register", "get", "available", "copy_across", "inline_policy"]
