"""The table of ops: names and aliases to ``OpDef``, get-or-create (``op``), definitions
(first one wins, later ones refused), aliases, and the ops the core runs itself."""

from __future__ import annotations

import re
import threading
import warnings

from .base import PluginError, PluginWarning
from .firstuse import fill as _fill
from .fork import in_child
from .op_def import OpDef, Refusal
from .op_provider import _announce, _state, current_provider

__all__ = ["op", "define", "add_alias", "refused", "require", "missing_required",
           "CORE_OPS_DISTRIBUTION"]

_ops: dict[str, OpDef] = {}
_aliases: dict[str, str] = {}
_required: dict[str, str] = {}    # op -> what in the core runs it
_deferred: dict[str, str] = {}    # op module not imported yet -> the plugin it registers for
_lazy: dict[str, list[str]] = {}  # op name or alias -> deferred modules setting entries on it
_deferred_owner: dict[str, str] = {}    # name or alias of a deferred op -> its definer
_described: list[tuple[str, object]] = []   # (plugin, describe() of its deferred modules)
_failed: dict[str, str] = {}                # deferred op module -> why it did not import
_refused: dict[tuple[str, str], Refusal] = {}   # (name, refused provider) -> the refusal
_detached: dict[tuple[str, str], "OpDef"] = {}  # the refused definitions' own OpDefs
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_lock = threading.RLock()
_import_lock = threading.RLock()    # deferred imports (not _lock: imports take module locks)
CORE_OPS_DISTRIBUTION = "mxnext-ops-tensor"
"""The distribution defining the ops the core runs itself (``require``). It is not a
packaging dependency of mxnext (plugins depend on the core, never the reverse); ``make
setup`` installs it, and without it the core says what is missing once plugins load."""


def _new_lock():
    global _lock
    _lock = threading.RLock()     # in a forked child: a thread that held it is gone


in_child(_new_lock)


def op(name: str) -> OpDef:
    """The OpDef for ``name`` or an alias of it, created (undefined) if new."""
    _fill()
    d = _ops.get(name)
    if d is None:
        with _lock:
            real = _aliases.get(name)
            if real is None:
                _check_name(name, "operator name")
            d = _ops[real] if real is not None else _ops.setdefault(name, OpDef(name))
    if _state.touched is not None:
        _state.touched.update((name, d.name))
    return d


def define(name: str, provider: str | None = None, module: str | None = None) -> OpDef:
    """Claim ``name`` for ``provider`` (default: ``current_provider(module)``) and return
    its OpDef. A name another provider defined first stays theirs: this definition is
    refused (``refused``) and gets an OpDef of its own that nothing reads."""
    provider = provider or current_provider(module)
    d = op(name)
    owner = d.provider or _deferred_owner.get(d.name, provider)  # deferred: not imported yet
    if owner != provider:
        _refuse(name, owner, provider)
        return _detached.setdefault((name, provider), OpDef(name, provider))
    if d.provider is None:
        d.provider = provider
        _announce(d)
    return d


def _check_name(name, what: str) -> None:
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise PluginError(f"registry: {what} must be an identifier (letters, digits and "
                          f"underscores, not starting with a digit), got {name!r}")


def _refuse(name: str, owner: str, provider: str) -> None:
    """Record (and warn, once) that ``provider``'s definition of ``name`` lost to ``owner``."""
    if (name, provider) in _refused:
        return
    _refused[(name, provider)] = Refusal(name, owner, provider)
    warnings.warn(f"Operator {name!r} is already defined by plugin {owner!r}; the definition "
                  f"by plugin {provider!r} is refused (its other ops load; to replace a "
                  f"kernel, set it with opsdk.extend_op at a higher plevel)",
                  PluginWarning, stacklevel=4)


def refused() -> list[Refusal]:
    """Every definition refused because another plugin defined the name first."""
    _fill()
    return list(_refused.values())


def add_alias(d: OpDef, alias: str) -> None:
    """Make ``alias`` resolve to ``d``; attributes already set on an undefined op of that
    name move over, so attaching by alias works in any load order."""
    _check_name(alias, f"alias of operator {d.name!r}")
    with _lock:
        if alias == d.name or alias in d.aliases or _ops.get(d.name) is not d:
            return          # known, or ``d`` is a refused definition
        other, owner = _ops.get(alias), _owner(alias)   # owner: imported or deferred
        if owner not in (None, d.provider):
            return _refuse(alias, owner, d.provider)
        if owner is not None and (other is not None and other.provider or alias in _aliases):
            raise PluginError(f"Operator {d.name!r}: alias {alias!r} already names another op "
                              f"of plugin {owner!r}")
        if other is not None:
            del _ops[alias]
            for key, e in other.attrs.items():
                d.set_attr(key, e.value, e.plevel, e.provider)
        _aliases[alias] = d.name
        d.aliases.append(alias)
    if _state.touched is not None:
        _state.touched.add(alias)


def require(user: str, *names: str) -> None:
    """Declare that ``user`` (e.g. "NDArray operators") runs ops ``names`` itself."""
    for n in names:
        _required.setdefault(n, user)


def missing_required() -> dict[str, str]:
    """``{op: its user}`` for declared core ops no loaded plugin defines."""
    _fill()
    return {n: u for n, u in _required.items() if n not in _deferred_owner and (
            (d := _ops.get(_aliases.get(n, n))) is None or d.provider is None)}


def _owner(name: str) -> str | None:
    """The provider holding op name or alias ``name``, imported or deferred; None if free."""
    d = _ops.get(_aliases.get(name, name))
    return d.provider if d is not None and d.provider else _deferred_owner.get(name)
