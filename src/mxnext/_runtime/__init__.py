"""The minimal core: what every MXNet frontend of ``mxnext`` stands on.

engine, storage, resources, the device table and its contract, the op registry and
parameter models, the op context, the tape and gradient recipes, the op-function builder,
the graph IR and its passes (``graph``), and the plugin manager with its hookspecs.

Nothing here imports a frontend (``mx.nd``, ``mx.sym``, ``mx.mod``, ...): a test reads
the imports and fails if one does (docs/internals.md draws the layers). The frontends
reach these modules as ``mxnext._runtime.X``; users and plugins keep the public names
``mx.engine``, ``mx.context``, ``mx.base`` ... (``mxnext/__init__.py`` maps them here).
"""

__version__ = "0.1.0"
