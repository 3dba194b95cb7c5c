"""The opt-in import alias ``mxnet`` -> ``mxnext``, so code written for MXNet runs
unmodified: ``python -m mxnext run script.py [args]`` installs it before running the
script, or a program calls ``mxnext.mxnet_alias.install()`` before ``import mxnet``.

``mxnet.X`` *is* ``mxnext.X`` (one module object under both names). The top-level
``mxnet`` is a thin module of its own whose ``__version__`` is the MXNet release whose API
mxnext follows (``mxnext.__mxnet_version__``), because that is what MXNet code compares
``mx.__version__`` with; every other name is mxnext's. The finder itself is in
``mxnext._hooks``.
"""

from __future__ import annotations

import sys

from ._hooks import TopLevel, install_mxnet_alias

__all__ = ["install"]


def install() -> None:
    """Make ``import mxnet`` give mxnext; an error if MXNet itself is already imported."""
    loaded = sys.modules.get("mxnet")
    if loaded is not None and not isinstance(loaded, TopLevel):
        from ._runtime.base import MXNetError
        raise MXNetError(f"mxnet_alias.install: the real MXNet is already imported (from "
                         f"{getattr(loaded, '__file__', '?')}); install the alias before "
                         f"anything imports mxnet")
    install_mxnet_alias()
