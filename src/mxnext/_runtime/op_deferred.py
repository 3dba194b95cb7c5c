"""Deferred op modules: ops known by name before the modules that register them are
imported; the first lookup of one imports its modules (``defer_modules``)."""

from __future__ import annotations

import contextlib
import importlib
import sys

from . import op_table as _table
from .base import PluginError, describe_error
from .op_provider import current_provider, providing
from .op_table import (_check_name, _deferred, _deferred_owner, _described, _failed,
                       _import_lock, _lazy, _owner, _refuse)

__all__ = ["defer_modules"]


def defer_modules(modules: dict[str, list[str]], defines: list[list[str]], describe,
                  provider: str | None = None) -> None:
    """Know ops without importing the modules that register them: ``modules`` maps each
    module to the op names and aliases it sets entries on; the first ``get`` of one imports
    it (for ``provider``, default the current one). ``defines`` holds ``[name, *aliases]``
    of each op they define (a name or alias another provider holds is refused: for an op
    name, with its aliases); ``describe()`` returns an ``OpInfo`` for each op they set
    entries on (``catalog``). A module imported already registered its ops and stays."""
    provider = provider or current_provider()
    with _table._lock:
        claimed = []
        for names in defines:       # the op name first: refused, its aliases go with it
            for n in names:
                _check_name(n, "operator name or alias")
                if _owner(n) not in (None, provider):
                    _refuse(n, _owner(n), provider)
                    if n == names[0]:
                        break
                else:
                    claimed.append(n)
        for module, touched in modules.items():
            if module in sys.modules:
                continue
            _deferred[module] = provider
            for n in touched:
                _lazy.setdefault(n, []).append(module)
        _deferred_owner.update(dict.fromkeys(claimed, provider))
        _described.append((provider, describe))


def _import_deferred(module: str, why: str = "") -> None:
    provider = _deferred.pop(module, None)
    if provider is None:
        return
    try:
        with providing(provider):
            importlib.import_module(module)
    except KeyboardInterrupt:
        raise
    except BaseException as exc:    # sys.exit() in an op module ends no program
        _failed[module] = (f"plugin {provider!r}: importing its op module {module!r}{why} "
                           f"failed: {describe_error(exc)}")
        raise PluginError(_failed[module]) from exc


def _import_for(name: str) -> None:
    """Import the deferred modules setting entries on ``name``; the name stays filed until
    they all did (a lookup meanwhile waits, one after a failure raises it again)."""
    with _import_lock:
        for module in _lazy.get(name, ()):
            if module in _failed:
                raise PluginError(_failed[module])
            _import_deferred(module, f" (for operator {name!r})")
        _lazy.pop(name, None)


def _import_all() -> None:
    """Import every deferred op module; one that fails is left out (``validate`` names it)."""
    with _import_lock:
        for module in list(_deferred):
            with contextlib.suppress(PluginError):
                _import_deferred(module)
