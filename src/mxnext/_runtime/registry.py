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
"""

from __future__ import annotations

import contextlib
import importlib
import re
import sys
import threading
import warnings
from dataclasses import dataclass, field
from typing import NamedTuple

from .firstuse import fill as _fill
from .base import (OpNotFound, ParamError, PluginError, PluginWarning, describe_error,
                   did_you_mean)
from .fork import in_child

__all__ = ["OpDef", "AttrEntry", "Argument", "Conflict", "Refusal", "Report", "USER", "op", "get",
           "define", "add_alias", "list_ops", "providing", "current_provider", "on_new_op", "validate",
           "withdraw", "provided_by", "claim_package", "require", "missing_required",
           "CORE_OPS_DISTRIBUTION", "OpInfo", "defer_modules", "recording", "catalog", "names",
           "refused"]

USER = "__main__"
"""The provider of entries made outside any ``providing()`` block (user scripts)."""

_PARAM_CACHE_MAX = 4096


class AttrEntry(NamedTuple):
    value: object
    plevel: int
    provider: str


class Argument(NamedTuple):
    name: str
    type: str
    description: str = ""


class Conflict(NamedTuple):
    op: str
    key: str
    plevel: int
    first: str      # provider holding the entry
    second: str     # provider that tried to set it at the same level


class Refusal(NamedTuple):
    name: str       # the op name or alias
    owner: str      # the provider whose definition holds it
    refused: str    # the provider whose later definition of it was refused


class OpDef:
    """One operator: name, aliases, description, parameter model, arguments, attributes."""

    def __init__(self, name: str, provider: str | None = None):
        self.name = name
        self.aliases: list[str] = []
        self.description = ""
        self.param_model = None
        self.arguments: list[Argument] = []
        self.attrs: dict[str, AttrEntry] = {}
        self.provider = provider
        self.ignored: list[tuple[str, AttrEntry]] = []   # lower-plevel entries that lost
        self._values: dict = {}
        self._param_cache: dict = {}

    # -- attributes --------------------------------------------------------------------
    def set_attr(self, key: str, value, plevel: int = 10, provider: str | None = None) -> None:
        """Set ``key`` for ``provider`` (default: the current one). A value with a
        ``bind_op(name)`` method (opsdk's shape/type rules) is bound to this op first,
        so its errors name the op at no cost per call."""
        provider = provider or current_provider()
        bind = getattr(value, "bind_op", None)
        if bind is not None:
            value = bind(self.name)
        old = self.attrs.get(key)
        entry = AttrEntry(value, plevel, provider)
        if old is not None and plevel < old.plevel:
            self.ignored.append((key, entry))
            return
        if old is not None and plevel == old.plevel and old.provider != provider:
            _conflicts.append(Conflict(self.name, key, plevel, old.provider, provider))
            raise PluginError(
                f"Operator {self.name!r}: attribute {key!r} at plevel {plevel} is set by both "
                f"plugin {old.provider!r} and plugin {provider!r}; one of them must use a "
                f"higher plevel")
        if old is not None and plevel > old.plevel:
            self.ignored.append((key, old))
        self.attrs[key] = entry
        self._values[key] = value

    def get_attr(self, key: str, default=None):
        return self._values.get(key, default)

    def has_attr(self, key: str) -> bool:
        return key in self._values

    def set_param_model(self, model) -> None:
        self.param_model = model
        self._param_cache.clear()

    # -- parameters --------------------------------------------------------------------
    def parse_params(self, kwargs):
        """kwargs (MXNet strings accepted) -> the op's ``Param`` instance, cached per kwargs."""
        try:
            key = frozenset(kwargs.items())
            hit = self._param_cache.get(key)
        except TypeError:       # unhashable values (lists): parse without caching
            key = hit = None
        if hit is not None:
            return hit
        model = self.param_model
        if model is None:       # as MXNet's: an op without parameters ignores keywords
            return None
        params = model.parse(kwargs, op=self.name)
        if key is not None:
            if len(self._param_cache) >= _PARAM_CACHE_MAX:
                self._param_cache.clear()
            self._param_cache[key] = params
        return params

    # -- arity and names (MXNet defaults when the attribute is absent) -----------------
    def num_inputs(self, params) -> int:
        v = self._values.get("FNumInputs")
        if v is None:
            var_key = self._values.get("key_var_num_args")
            if var_key is not None and params is not None:
                return int(getattr(params, var_key))
            return len(self.arguments) if self.arguments else 1
        return v(params) if callable(v) else v

    def num_outputs(self, params) -> int:
        v = self._values.get("FNumOutputs", 1)
        return v(params) if callable(v) else v

    def num_visible_outputs(self, params) -> int:
        v = self._values.get("FNumVisibleOutputs")
        if v is None:
            return self.num_outputs(params)
        return v(params) if callable(v) else v

    def list_input_names(self, params) -> list[str]:
        fn = self._values.get("FListInputNames")
        if fn is not None:
            return list(fn(params))
        n = self.num_inputs(params)
        names = [a.name for a in self.arguments]
        var_args = "key_var_num_args" in self._values
        if len(names) == n and not var_args:
            return names
        return ["data"] if n == 1 and not var_args else [f"arg{i}" for i in range(n)]

    def list_output_names(self, params) -> list[str]:
        fn = self._values.get("FListOutputNames")
        if fn is not None:
            return list(fn(params))
        n = self.num_outputs(params)
        return ["output"] if n == 1 else [f"output{i}" for i in range(n)]

    def mutate_inputs(self, params) -> list[int]:
        fn = self._values.get("FMutateInputs")
        return list(fn(params)) if fn is not None else []

    def __repr__(self):
        return f"<OpDef {self.name} by {self.provider or 'nobody (orphan)'}>"


# -- the tables ------------------------------------------------------------------------
_ops: dict[str, OpDef] = {}
_aliases: dict[str, str] = {}
_conflicts: list[Conflict] = []
_callbacks: list = []
_packages: dict[str, str] = {}
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


class _State(threading.local):
    provider = USER
    pending: list | None = None   # new ops to announce when the providing() block ends
    touched: set | None = None    # op names entries are set on, inside recording()


_state = _State()


def claim_package(package: str, plugin: str) -> None:
    """Attribute to ``plugin`` the entries made outside ``providing()`` by code of top-level
    ``package`` (an op module of the plugin imported before plugins loaded)."""
    _packages[package.partition(".")[0]] = plugin


def current_provider(module: str | None = None) -> str:
    """The provider new entries are attributed to: the plugin being loaded (a
    ``providing()`` block), else the plugin that claimed the package of ``module`` (the
    registering code's module, when known), else ``USER``. Plugins load first: loading is
    what claims packages."""
    _fill()
    provider = _state.provider
    if provider == USER and module:
        return _packages.get(module.partition(".")[0], USER)
    return provider


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


def get(name: str) -> OpDef:
    """The defined op ``name`` (or alias); ``OpNotFound`` with suggestions otherwise."""
    _fill()
    if name in _lazy:
        _import_for(name)
    d = _ops.get(name)
    if d is None:
        real = _aliases.get(name)
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


def on_new_op(callback) -> None:
    """Call ``callback(opdef)`` whenever an op gets defined from now on (ops defined
    earlier are in ``list_ops()``).

    Inside ``providing()`` (plugin loading) the call comes when the block ends,
    so the op is complete; outside it comes at definition, before the builder
    chain has set the rest, so frontends should read op fields lazily.
    """
    _callbacks.append(callback)


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


def _announce(d: OpDef) -> None:
    if _state.pending is not None:
        _state.pending.append(d)
    else:
        for cb in list(_callbacks):
            cb(d)


@contextlib.contextmanager
def providing(plugin_name: str):
    """Attribute every entry made inside the block to ``plugin_name``."""
    old, old_pending = _state.provider, _state.pending
    _state.provider, _state.pending = plugin_name, []
    try:
        yield
    finally:
        pending = _state.pending
        _state.provider, _state.pending = old, old_pending
        for d in pending:
            if d.provider is not None:
                _announce(d)


def withdraw(provider: str) -> None:
    """Remove everything ``provider`` registered (a plugin that failed half-way).

    Its ops are undefined again (attributes others attached stay, as orphans);
    its attributes on other ops go, and the best entry they had overridden returns.
    """
    with _lock:
        for key in [k for k in _refused if k[1] == provider]:
            del _refused[key]
            _detached.pop(key, None)
        for module in [m for m, p in _deferred.items() if p == provider]:
            del _deferred[module]
        _described[:] = [(p, i) for p, i in _described if p != provider]
        for name in [n for n, p in _deferred_owner.items() if p == provider]:
            del _deferred_owner[name]
        for name, d in list(_ops.items()):
            if d.provider == provider:
                for alias in d.aliases:
                    _aliases.pop(alias, None)
                del _ops[name]
                kept = {k: e for k, e in d.attrs.items() if e.provider != provider}
                if kept:
                    orphan = _ops[name] = OpDef(name)
                    for key, e in kept.items():
                        orphan.set_attr(key, e.value, e.plevel, e.provider)
                continue
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


# -- validation --------------------------------------------------------------------------
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
    """Orphans (attributes on ops nobody defined), gaps (defined ops without
    ``FInferShape`` or any ``FCompute<dev>``), conflicts and ignored entries; deferred op
    modules are imported first, and those that fail are reported."""
    _fill()
    _import_all()
    rep = Report(conflicts=list(_conflicts), failed=list(_failed.items()))
    for d in sorted(_ops.values(), key=lambda d: d.name):
        if d.provider is None:
            rep.orphans.append((d.name, sorted(d.attrs),
                                sorted({e.provider for e in d.attrs.values()})))
            continue
        missing = [] if "FInferShape" in d.attrs else ["FInferShape"]
        if not any(k.startswith("FCompute<") for k in d.attrs):
            missing.append("FCompute<dev>")
        if missing:
            rep.gaps.append((d.name, missing))
        rep.ignored.extend((d.name, k, e) for k, e in d.ignored)
    return rep


# -- deferred op modules ---------------------------------------------------------------------
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


def defer_modules(modules: dict[str, list[str]], defines: list[list[str]], describe,
                  provider: str | None = None) -> None:
    """Know ops without importing the modules that register them: ``modules`` maps each
    module to the op names and aliases it sets entries on; the first ``get`` of one imports
    it (for ``provider``, default the current one). ``defines`` holds ``[name, *aliases]``
    of each op they define (a name or alias another provider holds is refused: for an op
    name, with its aliases); ``describe()`` returns an ``OpInfo`` for each op they set
    entries on (``catalog``). A module imported already registered its ops and stays."""
    provider = provider or current_provider()
    with _lock:
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


def _owner(name: str) -> str | None:
    """The provider holding op name or alias ``name``, imported or deferred; None if free."""
    d = _ops.get(_aliases.get(name, name))
    return d.provider if d is not None and d.provider else _deferred_owner.get(name)


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


@contextlib.contextmanager
def recording():
    """Collect, in the set yielded, the op names and aliases that the entries made inside
    the block (in this thread) are set on."""
    old, _state.touched = _state.touched, set()
    try:
        yield _state.touched
    finally:
        _state.touched = old


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
