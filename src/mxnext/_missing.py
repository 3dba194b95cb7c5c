"""MXNet 1.x modules and names that mxnext does not provide (``mx.np``,
``mx.io.ImageRecordUInt8Iter`` ...) say so, naming the distribution meant to
provide one where there is one, instead of a bare AttributeError.

Reading such a name raises ``NotProvided``, an AttributeError (``hasattr`` stays False);
importing it (``import mxnext.monitor``, ``from mxnext import monitor``) raises
``NotProvidedImport``, a ModuleNotFoundError, through the finder in ``mxnext._hooks``.
"""

from __future__ import annotations

from ._runtime.base import MXNetError

__all__ = ["NotProvided", "NotProvidedImport", "check"]

# module -> {distribution meant to provide the names, or None: not provided}
NAMES = {
    "mxnext": {None: """numpy np numpy_extension npx np_symbol
                        notebook rtc torch th log library tvmop symbol_doc error"""},
    "mxnext.io": {None: """ImageRecordUInt8Iter ImageRecordInt8Iter
                           ImageRecordIter_v1 ImageRecordUInt8Iter_v1"""},
}
# distributions meant to provide whole modules

# what mxnext has instead of a name it does not provide
INSTEAD: dict[str, str] = {}


class NotProvided(MXNetError, AttributeError):
    """An MXNet 1.x name that mxnext does not provide."""


class NotProvidedImport(MXNetError, ModuleNotFoundError):
    """An MXNet 1.x module that mxnext does not provide, imported."""


def _why(module: str, name: str) -> str | None:
    for dist, names in NAMES.get(module, {}).items():
        if name in names.split():
            mxnet_name = "mxnet" + module.removeprefix("mxnext") + "." + name
            if dist is None:
                instead = INSTEAD.get(f"{module}.{name}")
                return (f"{mxnet_name} is an MXNet 1.x name that mxnext does not provide"
                        + (f"; {instead}" if instead else ""))
            from ._runtime.mxnet_names import _availability
            return f"{mxnet_name} is provided by {dist}{_availability(dist)}"
    return None


def check(module: str, name: str) -> None:
    """Raise ``NotProvided`` when ``module.name`` is an MXNet 1.x name mxnext lacks (the
    modules' ``__getattr__`` call it before their own lookup)."""
    why = _why(module, name)
    if why is not None:
        raise NotProvided(f"module {module!r} has no attribute {name!r}: {why}")
