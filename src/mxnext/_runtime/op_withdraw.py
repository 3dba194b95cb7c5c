"""What one provider holds (``provided_by``) and taking it back (``withdraw``: a plugin that
failed half-way leaves no half-working ops behind)."""

from __future__ import annotations

from . import op_table as _table
from .firstuse import fill as _fill
from .op_def import OpDef
from .op_deferred import _import_all
from .op_table import (_aliases, _deferred, _deferred_owner, _described, _detached, _ops,
                       _refused)

__all__ = ["provided_by", "withdraw"]


def provided_by(provider: str) -> tuple[list[str], list[str]]:
    """``(ops it defined, "op.key" attributes it set on ops others define)``, sorted."""
    _fill()
    _import_all()
    ops, attrs = [], []
    for d in list(_ops.values()):
        if d.provider == provider:
            ops.append(d.name)
        else:
            attrs.extend(f"{d.name}.{k}" for k, e in d.attrs.items() if e.provider == provider)
    return sorted(ops), sorted(attrs)


def withdraw(provider: str) -> None:
    """Remove everything ``provider`` registered (a plugin that failed half-way).

    Its ops are undefined again (attributes others attached stay, as orphans);
    its attributes on other ops go, and the best entry they had overridden returns.
    """
    with _table._lock:
        _forget_refusals(provider)
        _forget_deferred(provider)
        for name, d in list(_ops.items()):
            if d.provider == provider:
                _undefine(name, d, provider)
            else:
                _drop_entries(d, provider)


def _forget_refusals(provider: str) -> None:
    """Drop the definitions of ``provider`` that were refused (and their own OpDefs)."""
    for key in [k for k in _refused if k[1] == provider]:
        del _refused[key]
        _detached.pop(key, None)


def _forget_deferred(provider: str) -> None:
    """Drop ``provider``'s op modules not imported yet, their descriptions and names."""
    for module in [m for m, p in _deferred.items() if p == provider]:
        del _deferred[module]
    _described[:] = [(p, i) for p, i in _described if p != provider]
    for name in [n for n, p in _deferred_owner.items() if p == provider]:
        del _deferred_owner[name]


def _undefine(name: str, d: OpDef, provider: str) -> None:
    """Remove op ``d`` that ``provider`` defined, with its aliases; what other providers
    attached to it stays on an orphan of the same name."""
    for alias in d.aliases:
        _aliases.pop(alias, None)
    del _ops[name]
    kept = {k: e for k, e in d.attrs.items() if e.provider != provider}
    if kept:
        orphan = _ops[name] = OpDef(name)
        for key, e in kept.items():
            orphan.set_attr(key, e.value, e.plevel, e.provider)


def _drop_entries(d: OpDef, provider: str) -> None:
    """Remove ``provider``'s attributes from another provider's op ``d``; for each, the
    best entry it had overridden (by plevel) comes back."""
    for key in [k for k, e in d.attrs.items() if e.provider == provider]:
        del d.attrs[key]
        del d._values[key]
        lost = [e for k, e in d.ignored if k == key and e.provider != provider]
        if lost:
            best = max(lost, key=lambda e: e.plevel)
            d.ignored.remove((key, best))
            d.attrs[key] = best
            d._values[key] = best.value
    d.ignored = [(k, e) for k, e in d.ignored if e.provider != provider]
