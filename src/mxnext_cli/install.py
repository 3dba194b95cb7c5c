"""``mxnext install`` and ``mxnext uninstall``: run pip on plugin packages, then say exactly
what appeared and what disappeared."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import click

from ._table import emit_json, heading

__all__ = ["install", "uninstall"]

# What the report compares: kind -> the key naming an entry in the JSON rows.
_KINDS = (("ops", "name"), ("devices", "type"))


def _fresh_state() -> dict:
    """The plugins, ops and devices a fresh interpreter of this environment loads now."""
    proc = subprocess.run([sys.executable, "-m", "mxnext_cli._state"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise click.ClickException(f"loading mxnext in a fresh process failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def diff(before: dict, after: dict) -> dict:
    """Plugins that are new or changed (version or status) or gone, and the ops and devices
    that appeared or disappeared."""
    changed = {name: p for name, p in after["plugins"].items()
               if before["plugins"].get(name) != p}
    out = {
        "plugins": [{"name": name, **p} for name, p in sorted(changed.items())],
        "removed_plugins": [{"name": name, "distribution": p["distribution"],
                             "version": p["version"]}
                            for name, p in sorted(before["plugins"].items())
                            if name not in after["plugins"]],
    }
    for kind, key in _KINDS:
        out[kind] = [{key: k, "plugin": v} for k, v in sorted(after[kind].items())
                     if k not in before[kind]]
        out[f"removed_{kind}"] = [{key: k, "plugin": v} for k, v in sorted(before[kind].items())
                                  if k not in after[kind]]
    out["failed"] = [{"name": name, "error": p["error"], "traceback": p["traceback"]}
                     for name, p in sorted(changed.items()) if p["status"] == "failed"]
    return out


def _run_pip(args: list[str], done: str, as_json: bool, before: dict | None = None) -> None:
    """Run ``pip ARGS`` with this interpreter and report what it changed: before is what
    this process loaded at start, after is what a fresh process loads. Exits 1 when pip
    fails or a plugin that changed fails to load."""
    from ._state import collect
    before = collect() if before is None else before
    cmd = [sys.executable, "-m", "pip", *args]
    if not as_json:
        click.echo(f"$ {' '.join(cmd)}")
    sys.stdout.flush()
    pip = subprocess.run(cmd, capture_output=as_json, text=True)
    if pip.returncode != 0:
        if as_json:
            click.echo(pip.stdout + pip.stderr, err=True, nl=False)
        raise click.ClickException(f"pip {args[0]} failed (exit {pip.returncode}); "
                                   f"nothing was loaded")
    d = diff(before, _fresh_state())
    if as_json:
        emit_json(d)
    else:
        _print(d, done)
    if d["failed"]:
        sys.exit(1)


@click.command()
@click.argument("packages", nargs=-1, required=True, metavar="PKG|PATH...")
@click.option("-e", "--editable", is_flag=True, help="Install local paths in editable mode.")
@click.option("-U", "--upgrade", is_flag=True, help="Upgrade packages already installed.")
@click.option("--no-deps", is_flag=True, help="Do not install dependencies.")
@click.option("--no-build-isolation", is_flag=True,
              help="Build with this environment's setuptools (works offline).")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def install(packages, editable, upgrade, no_deps, no_build_isolation, as_json):
    """Install op plugin packages into this Python environment with pip, load them in a
    fresh process and report which plugins, ops and devices they added.
    Exits 1 if pip fails or a plugin fails to load."""
    args = ["install"] + ["--upgrade"] * upgrade + ["--no-deps"] * no_deps
    args += ["--no-build-isolation"] * no_build_isolation
    for pkg in packages:
        args += ["-e", pkg] if editable else [pkg]
    _run_pip(args, "installed", as_json)


@click.command()
@click.argument("packages", nargs=-1, required=True, metavar="PKG...")
@click.option("-y", "--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
def uninstall(packages, yes, as_json):
    """Uninstall plugin distributions (PKG: a distribution or plugin name) from this
    Python environment with pip, load the rest in a fresh process and report which
    plugins, ops and devices disappeared. Asks first, saying how many ops and devices
    go (--yes skips that). Exits 1 if pip fails or a remaining plugin fails to load."""
    from ._state import collect
    dists = list(dict.fromkeys(_distribution(p) for p in packages))
    before = collect()
    if not yes:
        _confirm(dists, before)
    _run_pip(["uninstall", "-y", *dists], "uninstalled", as_json, before)


def _confirm(dists: list[str], state: dict) -> None:
    """Ask (on stderr, so --json output stays JSON) whether to remove ``dists`` and what
    their plugins register; a no is a clean abort (exit 1), nothing removed."""
    gone = {_normal(d) for d in dists}
    plugins = sorted(n for n, p in state["plugins"].items()
                     if p["distribution"] and _normal(p["distribution"]) in gone)
    ops = sum(1 for p in state["ops"].values() if p in plugins)
    devices = sum(1 for p in state["devices"].values() if p in plugins)
    what = (f"Uninstall {', '.join(dists)} (plugin{'s' * (len(plugins) != 1)} "
            f"{', '.join(plugins) or '-'}): this removes {ops} op{'s' * (ops != 1)} and "
            f"{devices} device{'s' * (devices != 1)}. Continue?")
    if not click.confirm(what, default=False, err=True):
        raise click.ClickException("uninstall cancelled; nothing was removed")


def _distribution(name: str) -> str:
    """The installed plugin distribution ``name`` names: itself, or the one shipping the
    plugin ``name``. Anything else (numpy, mxnext itself) is a usage error: pip removes it."""
    from importlib.metadata import entry_points

    from mxnext._runtime.mxnet_names import suggest
    plugins = {ep.name: ep.dist.name for ep in entry_points(group="mxnext") if ep.dist}
    dists = {_normal(d): d for d in plugins.values()}
    found = plugins.get(name) or dists.get(_normal(name))
    if found is None:
        raise click.BadParameter(f"no installed plugin or plugin distribution named {name!r}"
                                 f"{suggest('plugin', name, [*plugins, *dists.values()])}",
                                 param_hint="PKG")
    return found


def _normal(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()  # distribution names compare this way


def _print(d, done: str) -> None:
    click.echo("")
    if not any(rows for key, rows in d.items() if key != "failed"):
        click.echo(f"{done}; no plugin, op or device was added, changed or removed")
    for p in d["plugins"]:
        status = click.style(p["status"], fg="green" if p["status"] == "loaded" else "red")
        click.echo(f"plugin {p['name']} ({p['distribution']} {p['version']}): {status}")
    for p in d["removed_plugins"]:
        click.echo(f"plugin {p['name']} ({p['distribution']} {p['version']}): removed")
    for kind, key in _KINDS:
        for prefix, what in (("", "added"), ("removed_", "removed")):
            items = d[prefix + kind]
            if items:
                heading(f"{len(items)} {kind if len(items) != 1 else kind[:-1]} {what}")
                for item in items:
                    click.echo(f"  {item[key]}  (plugin {item['plugin']})")
    for f in d["failed"]:
        click.echo(click.style(f"plugin {f['name']} failed to load: {f['error']}", fg="red"),
                   err=True)
        if f["traceback"]:
            click.echo(f["traceback"], err=True)
