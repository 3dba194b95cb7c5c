"""Deferred op modules: a plugin's ops known from a manifest cached on disk, each module
imported at the first lookup of one of its ops (``opsdk.register_op_modules``).

The manifest says which op names and aliases each module sets entries on, and describes the
ops (``registry.OpInfo``) for ``mxnext ops list``. It is written when a plugin loads without a
current one (its modules are then imported at once, as before), and is current while the
plugin's package and opsdk keep their files (path, size, modification time) and mxnext its
version. It lives in ``$MXNEXT_CACHE_DIR`` (default ``$XDG_CACHE_HOME/mxnext``, else
``~/.cache/mxnext``), one file per plugin and installed copy; no writable cache only means
every load imports the modules.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path

from mxnext import __version__, ops as registry
from mxnext._atomic_write import write_atomic

__all__ = ["register_op_modules", "cache_dir"]

_FORMAT = 1


def register_op_modules(modules) -> None:
    """Register the ops of ``modules`` (names of op modules, which register at import) for the
    plugin being loaded, each module imported only when one of its ops is first looked up."""
    modules = list(dict.fromkeys(modules))
    plugin = registry.current_provider()
    roots = _roots(sorted({m.partition(".")[0] for m in modules}))
    path = cache_dir() / "op-manifests" / f"{_file_name(plugin, roots)}.json"
    key = _key(roots)
    manifest = _read(path, key)
    if manifest is not None:
        ops = manifest["ops"]
        defines = [[r["name"], *r["aliases"]] for r in ops if not r.get("extends")]
        registry.defer_modules(manifest["modules"], defines,
                               lambda: [_info(plugin, r) for r in ops], plugin)
        return
    fresh = not any(m in sys.modules for m in modules)   # else their ops went unrecorded
    touched = {}
    for m in modules:
        with registry.recording() as names:
            importlib.import_module(m)
        touched[m] = sorted(names)
    if fresh and not any(r.refused == plugin for r in registry.refused()):
        # a manifest records what a plugin holds; one with refused names holds less than it
        # defines, so it imports its modules at each load instead
        _write(path, {"format": _FORMAT, "key": key, "modules": touched,
                      "ops": _records(plugin, touched)})


def cache_dir() -> Path:
    """``$MXNEXT_CACHE_DIR``, else ``$XDG_CACHE_HOME/mxnext``, else ``~/.cache/mxnext``."""
    env = os.environ.get("MXNEXT_CACHE_DIR")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mxnext"


def _roots(tops) -> list[Path]:
    """The folders (or files) of top-level packages (or modules) ``tops``."""
    out = []
    for top in tops:
        spec = importlib.util.find_spec(top)
        if spec is not None:
            out.extend(Path(p) for p in (spec.submodule_search_locations or [spec.origin]))
    return out


def _file_name(plugin: str, roots) -> str:
    """One manifest per plugin and installed copy (worktrees and environments differ)."""
    where = hashlib.sha1(str(roots).encode()).hexdigest()[:12]
    return f"{re.sub(r'[^A-Za-z0-9_.-]', '_', plugin)}-{where}"


def _key(roots) -> str:
    """Changes when a source file under ``roots`` or opsdk does, or mxnext's version."""
    stamps = [f"{_FORMAT} {__version__}"]
    for root in [*roots, *_roots(["opsdk"])]:
        _stamp(str(root), stamps)
    return hashlib.sha1("\n".join(stamps).encode()).hexdigest()


def _stamp(path: str, out: list) -> None:
    """Append ``path size mtime`` of each ``.py`` file at or under ``path``."""
    if not os.path.isdir(path):
        st = os.stat(path)
        out.append(f"{path} {st.st_size} {st.st_mtime_ns}")
        return
    with os.scandir(path) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir() and e.name != "__pycache__":
            _stamp(e.path, out)
        elif e.name.endswith(".py"):
            st = e.stat()
            out.append(f"{e.path} {st.st_size} {st.st_mtime_ns}")


def _read(path: Path, key: str):
    try:
        manifest = json.loads(path.read_text())
    except (OSError, ValueError):
        return None
    ok = isinstance(manifest, dict) and manifest.get("format") == _FORMAT \
        and manifest.get("key") == key
    return manifest if ok else None


def _write(path: Path, manifest: dict) -> None:
    """Processes loading at once each write a whole file; no writable cache is no error."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, json.dumps(manifest))
    except OSError:
        pass


def _records(plugin: str, touched: dict) -> list[dict]:
    """What ``plugin`` set on each op its modules touched: the whole op where it defines it."""
    ops = {}
    for names in touched.values():
        for n in names:
            d = registry.op(n)
            ops[d.name] = d
    out = []
    for name, d in sorted(ops.items()):
        attrs = {k: e.plevel for k, e in d.attrs.items() if e.provider == plugin}
        if d.provider == plugin:
            i = registry.OpInfo.of(d)
            out.append({"name": name, "aliases": list(i.aliases), "description": i.description,
                        "num_inputs": i.num_inputs, "num_outputs": i.num_outputs,
                        "attrs": attrs})
        elif attrs:
            out.append({"name": name, "extends": True, "attrs": attrs})
    return out


def _info(plugin: str, r: dict) -> registry.OpInfo:
    attrs = {k: registry.AttrEntry(None, p, plugin) for k, p in r["attrs"].items()}
    if r.get("extends"):
        return registry.OpInfo(r["name"], None, (), "", None, None, attrs)
    return registry.OpInfo(r["name"], plugin, tuple(r["aliases"]), r["description"],
                           r["num_inputs"], r["num_outputs"], attrs)
