"""``mxnext install``: pip-install plugin packages, then say exactly what they added."""

from __future__ import annotations

import json
import subprocess
import sys

import click

from ._table import emit_json, heading

__all__ = ["install"]


def _snapshot() -> dict:
    """The registry as a fresh interpreter of this environment loads it."""
    proc = subprocess.run([sys.executable, "-m", "mxnext_cli._state"],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise click.ClickException(f"loading mxnext in a fresh process failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def diff(before: dict, after: dict) -> dict:
    """Plugins that are new or changed (version or status), and what was added."""
    changed = {name: p for name, p in after["plugins"].items()
               if before["plugins"].get(name) != p}
    added = {kind: {k: v for k, v in after[kind].items() if k not in before[kind]}
             for kind in ("ops", "devices", "kvstores")}
    return {
        "plugins": [{"name": name, **p} for name, p in sorted(changed.items())],
        "ops": [{"name": k, "plugin": v} for k, v in sorted(added["ops"].items())],
        "devices": [{"type": k, "plugin": v} for k, v in sorted(added["devices"].items())],
        "kvstores": [{"name": k, "plugin": v} for k, v in sorted(added["kvstores"].items())],
        "removed_ops": sorted(set(before["ops"]) - set(after["ops"])),
        "failed": [{"name": name, "error": p["error"], "traceback": p["traceback"]}
                   for name, p in sorted(changed.items()) if p["status"] == "failed"],
    }


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
    fresh process and report which plugins, ops, devices and kvstores they added.
    Exits 1 if pip fails or a plugin fails to load."""
    before = _snapshot()
    cmd = [sys.executable, "-m", "pip", "install"]
    cmd += ["--upgrade"] * upgrade + ["--no-deps"] * no_deps
    cmd += ["--no-build-isolation"] * no_build_isolation
    for pkg in packages:
        cmd += ["-e", pkg] if editable else [pkg]
    if not as_json:
        click.echo(f"$ {' '.join(cmd)}")
    sys.stdout.flush()
    pip = subprocess.run(cmd, capture_output=as_json, text=True)
    if pip.returncode != 0:
        if as_json:
            click.echo(pip.stdout + pip.stderr, err=True, nl=False)
        raise click.ClickException(f"pip install failed (exit {pip.returncode}); "
                                   f"nothing was loaded")
    d = diff(before, _snapshot())
    if as_json:
        emit_json(d)
    else:
        _print(d)
    if d["failed"]:
        sys.exit(1)


def _print(d) -> None:
    click.echo("")
    if not (d["plugins"] or d["ops"] or d["devices"] or d["kvstores"]):
        click.echo("installed; no plugin, op, device or kvstore was added or changed")
    for p in d["plugins"]:
        status = click.style(p["status"], fg="green" if p["status"] == "loaded" else "red")
        click.echo(f"plugin {p['name']} ({p['distribution']} {p['version']}): {status}")
    for kind, key in (("ops", "name"), ("devices", "type"), ("kvstores", "name")):
        if d[kind]:
            heading(f"{len(d[kind])} {kind if len(d[kind]) != 1 else kind[:-1]} added")
            for item in d[kind]:
                click.echo(f"  {item[key]}  (plugin {item['plugin']})")
    if d["removed_ops"]:
        heading(f"{len(d['removed_ops'])} ops no longer registered")
        click.echo("  " + ", ".join(d["removed_ops"]))
    for f in d["failed"]:
        click.echo(click.style(f"plugin {f['name']} failed to load: {f['error']}", fg="red"),
                   err=True)
        if f["traceback"]:
            click.echo(f["traceback"], err=True)
