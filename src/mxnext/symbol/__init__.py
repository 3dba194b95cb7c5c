"""MXNet's ``mx.sym``: Symbol, variables, groups, JSON, and one function per registered op.

Op functions are generated on first access from the registry (module ``__getattr__``), so
ops registered later appear too; underscore names also live in ``mx.sym._internal``, public
ones in ``mx.sym.op``, ``_contrib_*`` ops in ``mx.sym.contrib``, ``_linalg_*`` ones in
``mx.sym.linalg``, ``_image_*`` ones in ``mx.sym.image``.
"""

from __future__ import annotations

import sys as _sys

from .. import _missing
from .._runtime import registry as _registry
from . import _create, _internal, contrib, image, linalg, op, random, sparse, symbol
from .symbol import *  # noqa: F401,F403  (MXNet's mx.sym is its symbol module's names)
from .symbol import __all__ as _symbol_all

__all__ = [*_symbol_all, "contrib", "image", "linalg", "op", "random", "sparse"]

_HAND_WRITTEN = set(globals())


def _forget(opdef):
    _create.forget(opdef)
    for n in [opdef.name, *opdef.aliases]:
        if n not in _HAND_WRITTEN:
            globals().pop(n, None)
        for module in (op, _internal, sparse):
            vars(module).pop(n, None)
    for module, prefix in ((contrib, "_contrib_"), (linalg, "_linalg_"), (image, "_image_")):
        for n in [opdef.name, *opdef.aliases]:
            if n.startswith(prefix):
                vars(module).pop(n[len(prefix):], None)


_registry.on_new_op(_forget)


def __getattr__(name):
    _missing.check(__name__, name)
    return _create.op_attribute(_sys.modules[__name__], name)


def __dir__():
    return sorted(set(globals()) | set(_registry.names()))
