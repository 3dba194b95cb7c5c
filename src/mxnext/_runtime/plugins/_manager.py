"""The load loop: own it so one broken plugin never takes the host down."""

from __future__ import annotations

import gc
import importlib
import importlib.util
import os
import time
import traceback
import types
import warnings
from dataclasses import dataclass, field
from importlib.metadata import entry_points

import pluggy

from .. import __version__, builtins, hookspecs, registry
from ..registrars import DeviceRegistrar, KVStoreRegistrar, OpRegistrar
from .. import firstuse as _firstuse
from ..base import PluginError, PluginWarning, describe_error, did_you_mean
from ._order import load_order

ENTRY_POINT_GROUP = "mxnext"
BUILTIN = "builtin"
_builtin_parts: list = []      # modules whose hooks make up the builtin plugin

# Registration hooks in call order, with the registrar each receives as ``registry``.
_REGISTRATION_HOOKS = (("mxnext_register_devices", DeviceRegistrar),
                       ("mxnext_register_kvstores", KVStoreRegistrar),
                       ("mxnext_register_ops", OpRegistrar))


@dataclass
class PluginInfo:
    """One plugin as ``mxnext plugins`` shows it."""

    name: str
    distribution: str | None = None
    version: str | None = None
    location: str | None = None
    status: str = "loaded"          # loaded | failed | disabled
    error: str | None = None
    traceback: str | None = None
    load_time: float = 0.0          # seconds spent importing and registering
    builtin: bool = False
    devices: list = field(default_factory=list)
    kvstores: list = field(default_factory=list)

    @property
    def contributions(self) -> dict:
        """``ops`` it defined, ``attrs`` (``"op.key"``) it added to other plugins' ops,
        ``devices`` and ``kvstores`` it registered."""
        ops, attrs = registry.provided_by(self.name)
        return {"ops": ops, "attrs": attrs, "devices": list(self.devices),
                "kvstores": list(self.kvstores)}


class _Loader:
    def __init__(self):
        self.lock = _firstuse.lock    # one lock with the lookups that start a load
        self.loaded = False
        self.infos: dict[str, PluginInfo] = {}
        self.pm = pluggy.PluginManager("mxnext")
        self.pm.add_hookspecs(hookspecs)


_loader = _Loader()


def manager() -> pluggy.PluginManager:
    """The pluggy ``PluginManager`` (for the CLI's ``mxnext_cli_commands``)."""
    return _loader.pm


def _env_list(var: str) -> list[str]:
    return [s.strip() for s in os.environ.get(var, "").split(",") if s.strip()]


def load() -> None:
    """Load the builtin plugin and the installed ones, once per process (the first op or
    device lookup does it; see ``mxnext._runtime.firstuse``)."""
    with _loader.lock:
        if _loader.loaded:
            return
        _loader.loaded = True
        autoload = os.environ.get("MXNEXT_DISABLE_PLUGIN_AUTOLOAD", "") in ("", "0")
        wanted = _env_list("MXNEXT_PLUGINS")
        disabled = set(_env_list("MXNEXT_DISABLE_PLUGINS"))
        if BUILTIN in disabled:
            warnings.warn(f"MXNEXT_DISABLE_PLUGINS: the builtin plugin {BUILTIN!r} (cpu and null "
                          f"devices) cannot be disabled; loading it anyway", PluginWarning,
                          stacklevel=2)
        _load_one(PluginInfo(BUILTIN, "mxnext", __version__, builtin=True), _builtin_plugin,
                  required=True)
        eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        for name in load_order(eps):
            ep = eps[name]
            info = _info_for(ep)
            if name in disabled:
                _record_skip(info, "disabled by MXNEXT_DISABLE_PLUGINS")
            elif not autoload and name not in wanted:
                _record_skip(info, "not in MXNEXT_PLUGINS (MXNEXT_DISABLE_PLUGIN_AUTOLOAD is set)")
            else:
                registry.claim_package(ep.module, name)
                _load_one(info, ep.load, required=name in wanted)
        for name in wanted:
            if name not in eps and name != BUILTIN and name not in disabled:
                _load_module_plugin(name, eps)
        _check_core_ops(disabled)
        if os.environ.get("MXNEXT_GC_FREEZE") == "1":
            # opt-in: what loading made lives as long as the process; keep it out of the
            # cyclic collector's full passes (20 ms each over ~45k objects otherwise)
            gc.freeze()


def ensure_loaded() -> None:
    if not _loader.loaded:
        load()


_firstuse.defer(ensure_loaded)


def _check_core_ops(disabled) -> None:
    """Warn once when ops the core runs itself (``registry.require``) are missing."""
    missing = registry.missing_required()
    if missing:
        dist = registry.CORE_OPS_DISTRIBUTION
        why = (" (disabled by MXNEXT_DISABLE_PLUGINS)" if "ops-tensor" in disabled
               else ", which is not installed or failed to load")
        users = sorted(set(missing.values()))
        warnings.warn(f"mxnext: {len(missing)} op(s) that {', '.join(users)} run are not "
                      f"registered ({', '.join(sorted(missing)[:6])}"
                      f"{', ...' if len(missing) > 6 else ''}): they come from {dist}{why}; "
                      f"install it with `mxnext install {dist}`", PluginWarning, stacklevel=4)

def load_plugin(name_or_module) -> PluginInfo:
    """Load one more plugin at runtime: an entry-point name, a module name or a module
    object. Failure raises ``PluginError`` (it was asked for explicitly)."""
    ensure_loaded()
    with _loader.lock:
        if not isinstance(name_or_module, str):
            name = getattr(name_or_module, "__name__", repr(name_or_module))
            return _load_one(PluginInfo(name), lambda: name_or_module, required=True)
        old = _loader.infos.get(name_or_module)
        if old is not None and old.status == "loaded":
            return old
        eps = {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}
        ep = eps.get(name_or_module)
        if ep is not None:
            registry.claim_package(ep.module, ep.name)
            return _load_one(_info_for(ep), ep.load, required=True)
        return _load_module_plugin(name_or_module, eps)


def report() -> list[PluginInfo]:
    """Every plugin seen: loaded, failed or disabled; the builtin one first."""
    ensure_loaded()
    return list(_loader.infos.values())


# -- internals ---------------------------------------------------------------------------
def add_builtin(module) -> None:
    """Make ``module``'s hook implementations part of the builtin plugin (the frontends'
    ``local`` KVStore and ``Custom`` op); before the first load only."""
    if _loader.loaded:
        raise PluginError("plugins.add_builtin: the plugins are already loaded")
    _builtin_parts.append(module)


def _builtin_plugin():
    """One namespace with the hooks of the runtime's builtins and of every added part."""
    hooks = {}
    for part in [builtins, *_builtin_parts]:
        for name in dir(part):
            if name.startswith("mxnext_"):
                if name in hooks:
                    raise PluginError(f"builtin plugin: {name} is implemented twice "
                                      f"({part.__name__})")
                hooks[name] = getattr(part, name)
    return types.SimpleNamespace(__file__=builtins.__file__, **hooks)


def _info_for(ep) -> PluginInfo:
    dist = ep.dist
    return PluginInfo(ep.name, dist.name if dist else None, dist.version if dist else None)


def _record_skip(info: PluginInfo, why: str) -> None:
    info.status, info.error = "disabled", why
    _loader.infos[info.name] = info


def _load_module_plugin(name: str, eps) -> PluginInfo:
    try:
        found = importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        err = PluginError(f"plugin {name!r} (named in MXNEXT_PLUGINS or load_plugin) is not "
                          f"installed{did_you_mean(name, eps)}; installed plugins: "
                          f"{', '.join(sorted(eps)) or '(none)'}")
        _loader.infos[name] = PluginInfo(name, status="failed", error=str(err))
        raise err
    registry.claim_package(name, name)
    return _load_one(PluginInfo(name), lambda: importlib.import_module(name), required=True)


def _load_one(info: PluginInfo, loader, required: bool) -> PluginInfo:
    pm = _loader.pm
    _loader.infos[info.name] = info
    t0 = time.perf_counter()
    try:
        with registry.providing(info.name):   # ops registered as its module imports are its
            module = loader()
        info.location = getattr(module, "__file__", None)
        if pm.get_plugin(info.name) is None:
            pm.register(module, name=info.name)
            pm.check_pending()      # a misspelt hook name fails here instead of never running
        _register(info)
        info.status = "loaded"
    except BaseException as exc:    # sys.exit() in a plugin ends no program ...
        info.status = "failed"
        info.error = describe_error(exc)
        info.traceback = traceback.format_exc()
        if pm.has_plugin(info.name):
            pm.unregister(name=info.name)
        registry.withdraw(info.name)    # what it registered while importing
        if isinstance(exc, KeyboardInterrupt):
            raise                       # ... but Ctrl-C still stops it
        where = f" ({info.distribution} {info.version})" if info.distribution else ""
        if required:
            raise PluginError(f"plugin {info.name!r}{where} failed to load: {info.error}") from exc
        warnings.warn(f"mxnext plugin {info.name!r}{where} failed to load and is skipped: "
                      f"{info.error}", PluginWarning, stacklevel=3)
    finally:
        info.load_time = time.perf_counter() - t0
    return info


def _register(info: PluginInfo) -> None:
    """Run this plugin's registration hooks (and only its), entries attributed to it. If one
    fails, what the plugin registered is withdrawn: its ops and its KVStore types."""
    hook = _loader.pm.hook
    done = []                                  # the registrars this plugin used
    for hook_name, registrar_type in _REGISTRATION_HOOKS:
        impls = [i for i in getattr(hook, hook_name).get_hookimpls() if i.plugin_name == info.name]
        if not impls:
            continue
        registrar = registrar_type(info.name)
        done.append(registrar)
        with registry.providing(info.name):
            try:
                for impl in impls:
                    impl.function(*(registrar for _ in impl.argnames))
            except BaseException:
                _withdraw(info.name, done)
                raise
        if registrar_type is DeviceRegistrar:
            info.devices = sorted(registrar._names)
        elif registrar_type is KVStoreRegistrar:
            info.kvstores = sorted(registrar._names)


def _withdraw(plugin: str, registrars) -> None:
    registry.withdraw(plugin)
    for registrar in registrars:
        if isinstance(registrar, KVStoreRegistrar):
            registrar._withdraw()
