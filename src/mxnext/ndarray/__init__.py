"""MXNet's ``mx.nd``: NDArray, creation functions and one function per registered op.

Op functions are generated on first access from the registry (module
``__getattr__``), so ops registered later appear too; underscore names also
live in ``mx.nd._internal``, public ones in ``mx.nd.op``; ``_contrib_*``, ``_linalg_*`` and
``_image_*`` ops also appear under their short names in ``mx.nd.contrib``, ``.linalg``, ``.image``.
"""

from __future__ import annotations

import sys as _sys

from .. import _missing
from .._runtime import registry as _registry
from . import _imperative, _internal, contrib, image, linalg, ndarray, op, random, sparse
from . import _sparse_dispatch  # noqa: F401  (installs the sparse dispatch)
from .sparse import cast_storage
from ._imperative import invoke
from .ndarray import *  # noqa: F401,F403  (MXNet's mx.nd is its ndarray module's names)
from .ndarray import __all__ as _ndarray_all
from .utils import load, load_frombuffer, save

__all__ = [*_ndarray_all, "invoke", "save", "load", "load_frombuffer", "cast_storage"]


# -- generated op functions -----------------------------------------------------------------
_HAND_WRITTEN = set(globals())


def _forget(opdef):
    _imperative.forget(opdef)
    for n in [opdef.name, *opdef.aliases]:
        if n not in _HAND_WRITTEN:
            globals().pop(n, None)
        vars(op).pop(n, None)
        vars(_internal).pop(n, None)
        for module, prefix in ((contrib, "_contrib_"), (linalg, "_linalg_"), (image, "_image_")):
            if n.startswith(prefix):
                vars(module).pop(n[len(prefix):], None)


_registry.on_new_op(_forget)


def __getattr__(name):
    _missing.check(__name__, name)
    return _imperative.op_attribute(_sys.modules[__name__], name)


def __dir__():
    return sorted(set(globals()) | set(_registry.names()))

