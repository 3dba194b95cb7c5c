"""The operator registry: one ``OpDef`` per op, read by every frontend.

Plugins fill it at its first lookup (``_firstuse``). Ops are get-or-create by name
(``op``), so load order never matters: a GPU plugin may attach ``FCompute<gpu>``
before or after ops-tensor defines the op.
An op is *defined* once a provider claims it (``define``, which
``opsdk.register_op`` calls); attributes on ops nobody defined are orphans.
The first definition of a name wins: a later plugin's definition of that op (or alias) is
refused with a ``PluginWarning`` naming both plugins, and only that one (``refused``); the
rest of its ops register. Which plugin comes first is the plugin manager's load order.
Op names and aliases are identifiers (letters, digits, underscores; no leading digit).
Every attribute entry remembers its provider and priority level; the higher
``plevel`` wins, an equal level from two providers is a ``PluginError``.
A plugin may leave its op modules unimported (``defer_modules``): ``get`` imports the
ones that set entries on the op asked for, ``catalog`` describes every op without them,
and what iterates all ops (``list_ops``, ``validate``) imports them all.

The hot path is plain dict reads: ``OpDef.get_attr`` is one ``dict.get``.

The registry is split by concern: ``op_def`` (``OpDef``), ``op_table`` (names, definitions,
aliases), ``op_provider`` (who registers), ``op_withdraw`` (taking a provider's entries
back), ``op_deferred`` (deferred op modules) and ``op_catalog`` (names, catalog,
validation); this module is their one face, with the lookups.
"""

from __future__ import annotations

from .base import OpNotFound
from .firstuse import fill as _fill
from .op_catalog import OpInfo, Report, catalog, names, validate
from .op_def import Argument, AttrEntry, Conflict, OpDef, Refusal
from .op_deferred import _import_all, _import_for, defer_modules
from .op_provider import USER, claim_package, current_provider, on_new_op, providing, recording
from .op_table import (CORE_OPS_DISTRIBUTION, _aliases, _lazy, _ops, _required, add_alias,
                       define, missing_required, op, refused, require)
from .op_withdraw import provided_by, withdraw

__all__ = ["OpDef", "AttrEntry", "Argument", "Conflict", "Refusal", "Report", "USER", "op", "get",
           "define", "add_alias", "list_ops", "providing", "current_provider", "on_new_op", "validate",
           "withdraw", "provided_by", "claim_package", "require", "missing_required",
           "CORE_OPS_DISTRIBUTION", "OpInfo", "defer_modules", "recording", "catalog", "names",
           "refused"]


def get(name: str) -> OpDef:
    """The defined op ``name`` (or alias); ``OpNotFound`` with suggestions otherwise."""
    _fill()
    if name in _lazy:
        _import_for(name)
    d = _ops.get(name)
    if d is None:
        real = _aliases.get(name)
        if real in _lazy:       # modules extending the op under its own name (sparse kernels)
            _import_for(real)
        d = _ops.get(real) if real is not None else None
    if d is not None and d.provider is not None:
        return d
    if d is not None:
        providers = sorted({e.provider for e in d.attrs.values()})
        raise OpNotFound(f"Operator {name!r} is not defined: plugin(s) {', '.join(providers)} "
                         f"attached attributes to it but no plugin defines it")
    user = _required.get(name)
    if user is not None:
        raise OpNotFound(f"Operator {name!r}, which {user} run, is not registered: it comes "
                         f"from {CORE_OPS_DISTRIBUTION}, which is not installed or not loaded "
                         f"(see `mxnext plugins`; install it with `mxnext install "
                         f"{CORE_OPS_DISTRIBUTION}`)")
    from .mxnet_names import suggest    # the error path only
    raise OpNotFound(f"Operator {name!r} is not registered{suggest('op', name, names())}")


def list_ops() -> list[OpDef]:
    """Every defined op, sorted by name (deferred op modules are imported first, those that
    fail left out)."""
    _fill()
    _import_all()
    return sorted((d for d in _ops.values() if d.provider is not None), key=lambda d: d.name)
