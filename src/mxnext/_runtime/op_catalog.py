"""What the registry holds, described: op names, the catalog ``mxnext ops list`` shows
(without importing deferred op modules) and the validation report after loading."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from .firstuse import fill as _fill
from .op_def import OpDef, _conflicts
from .op_deferred import _import_all
from .op_table import _aliases, _deferred_owner, _described, _failed, _ops, _owner

__all__ = ["OpInfo", "names", "catalog", "Report", "validate"]


class OpInfo(NamedTuple):
    """What ``mxnext ops list`` shows of an op, known without importing its module: its input
    and output counts at the default parameters (None where they read a required one)."""

    name: str
    provider: str | None            # None: a record of attributes only (``extend_op``)
    aliases: tuple
    description: str
    num_inputs: int | None
    num_outputs: int | None
    attrs: dict                     # key -> AttrEntry (value None)

    @classmethod
    def of(cls, d: OpDef) -> "OpInfo":
        try:
            params, ok = d.parse_params({}), True
        except Exception:           # a required parameter: nothing to evaluate with
            params, ok = None, False
        variadic = not ok and d.get_attr("key_var_num_args") is not None
        return cls(d.name, d.provider, tuple(d.aliases), d.description,
                   None if variadic else _at(d.num_inputs, params), _at(d.num_outputs, params),
                   {k: e._replace(value=None) for k, e in d.attrs.items()})


def _at(count, params):
    try:
        return count(params)
    except Exception:               # reads a parameter that has no default
        return None


def names() -> list[str]:
    """Every defined op's name and aliases, deferred ones included, sorted."""
    _fill()
    return sorted({n for n, d in _ops.items() if d.provider is not None}
                  | set(_aliases) | set(_deferred_owner))


def catalog() -> list[OpInfo]:
    """Every defined op as an ``OpInfo``, sorted by name, without importing deferred op
    modules: their ops as described, merged with the entries made since."""
    _fill()
    described = [i for _, describe in _described for i in describe()]
    infos: dict[str, OpInfo] = {}
    for i in described:
        if i.provider is not None and _owner(i.name) == i.provider:   # not a refused one
            aliases = tuple(a for a in i.aliases if _owner(a) == i.provider)
            infos[i.name] = i._replace(aliases=aliases, attrs=dict(i.attrs))
    for d in list(_ops.values()):
        if d.provider is None:
            continue
        known = infos.get(d.name)
        if known is None:
            infos[d.name] = OpInfo.of(d)
        else:
            _merge(known.attrs, d.attrs)
    real = {a: i.name for i in infos.values() for a in i.aliases}
    for i in described:
        if i.provider is None and (known := infos.get(real.get(i.name, i.name))) is not None:
            _merge(known.attrs, i.attrs)
    return sorted(infos.values(), key=lambda i: i.name)


def _merge(attrs: dict, more: dict) -> None:
    """Add the entries of ``more`` to ``attrs`` where they win (a higher plevel)."""
    for key, e in more.items():
        old = attrs.get(key)
        if old is None or e.plevel > old.plevel:
            attrs[key] = e._replace(value=None)


@dataclass
class Report:
    """What ``validate()`` found after loading."""

    orphans: list = field(default_factory=list)    # (op, [keys], [providers])
    gaps: list = field(default_factory=list)       # (op, [missing keys])
    conflicts: list = field(default_factory=list)  # Conflict
    ignored: list = field(default_factory=list)    # (op, key, AttrEntry) lost to a higher plevel
    failed: list = field(default_factory=list)     # (deferred op module, error) it did not import

    @property
    def ok(self) -> bool:
        return not (self.orphans or self.conflicts or self.failed)

    def __str__(self):
        lines = [f"orphan: {o} ({', '.join(k)}) from {', '.join(p)}" for o, k, p in self.orphans]
        lines += [f"gap: {o} lacks {', '.join(m)}" for o, m in self.gaps]
        lines += [f"conflict: {c.op}.{c.key} at plevel {c.plevel}: {c.first} vs {c.second}"
                  for c in self.conflicts]
        lines += [f"failed: {m}: {e}" for m, e in self.failed]
        return "\n".join(lines) or "registry ok"


def validate() -> Report:
    """Orphans (attributes on ops nobody defined), gaps (defined ops without ``FInferShape``
    (not needed by ``TIsBackward`` ops) or any ``F[Stateful]Compute<dev>``), conflicts and
    ignored entries; deferred op modules are imported first, and those failing reported."""
    _fill()
    _import_all()
    rep = Report(conflicts=list(_conflicts), failed=list(_failed.items()))
    for d in sorted(_ops.values(), key=lambda d: d.name):
        if d.provider is None:
            rep.orphans.append((d.name, sorted(d.attrs),
                                sorted({e.provider for e in d.attrs.values()})))
            continue
        missing = [] if "FInferShape" in d.attrs or d.get_attr("TIsBackward") else ["FInferShape"]
        if not any(k.startswith(("FCompute<", "FStatefulCompute<")) for k in d.attrs):
            missing.append("FCompute<dev>")
        if missing:
            rep.gaps.append((d.name, missing))
        rep.ignored.extend((d.name, k, e) for k, e in d.ignored)
    return rep
