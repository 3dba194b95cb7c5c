"""``mxnext plugins`` (the health report) and ``mxnext plugins check``."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import click

from ._table import emit_json, heading, status_style, table

__all__ = ["plugins", "health"]


def health() -> dict:
    """Every plugin with its contributions, plus the registry's conflicts, refused
    definitions, orphans, gaps and op modules that failed to import at first use."""
    from mxnext import plugins as plugin_manager
    from mxnext import ops as registry
    rep = registry.validate()
    return {
        "plugins": [{
            "name": p.name, "distribution": p.distribution, "version": p.version,
            "location": p.location, "status": p.status, "error": p.error,
            "traceback": p.traceback, "load_time": round(p.load_time, 6), "builtin": p.builtin,
            "contributions": p.contributions,
        } for p in plugin_manager.report()],
        "conflicts": [c._asdict() for c in rep.conflicts],
        "refused": [r._asdict() for r in registry.refused()],
        "orphans": [{"op": op, "keys": keys, "providers": providers}
                    for op, keys, providers in rep.orphans],
        "gaps": [{"op": op, "missing": missing} for op, missing in rep.gaps],
        "failed_modules": [{"module": m, "error": e} for m, e in rep.failed],
    }


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of tables.")
@click.option("-v", "--verbose", is_flag=True, help="Show tracebacks of failed plugins.")
@click.pass_context
def plugins(ctx, as_json, verbose):
    """Each plugin: distribution, version, status, load time, what it contributes;
    then conflicts and orphan attributes."""
    if ctx.invoked_subcommand is not None:
        return
    h = health()
    if as_json:
        emit_json(h)
        return
    _print_plugins(h["plugins"])
    _print_problems(h, verbose)


def _print_plugins(infos) -> None:
    table(["NAME", "DISTRIBUTION", "VERSION", "STATUS", "LOAD ms", "OPS", "ATTRS", "DEVICES",
           "LOCATION"],
          [[p["name"], p["distribution"] or "-", p["version"] or "-", p["status"],
            f"{p['load_time'] * 1e3:.1f}", len(p["contributions"]["ops"]),
            len(p["contributions"]["attrs"]), ", ".join(p["contributions"]["devices"]) or "-",
            p["location"] or "-"]
           for p in infos],
          styles={3: status_style})


def _print_problems(h, verbose) -> None:
    troubled = [p for p in h["plugins"] if p["status"] != "loaded"]
    if troubled:
        click.echo("")
        heading("Not loaded")
        for p in troubled:
            click.echo(f"  {click.style(p['name'], **(status_style(p['status']) or {}))} "
                       f"({p['status']}): {p['error']}")
            if verbose and p["traceback"]:
                click.echo("    " + p["traceback"].rstrip().replace("\n", "\n    "))
    _section(h["failed_modules"], "Op modules that failed to import",
             lambda f: f"{f['module']}: {f['error']}")
    _section(h["conflicts"], "Conflicts (two plugins set one attribute at the same plevel)",
             lambda c: f"{c['op']}.{c['key']} at plevel {c['plevel']}: "
                       f"{c['first']} vs {c['second']}")
    _section(h["refused"], "Refused definitions (the name was defined by another plugin first)",
             lambda r: f"{r['name']}: kept from {r['owner']}, refused from {r['refused']}")
    _section(h["orphans"], "Orphans (attributes on ops no plugin defines)",
             lambda o: f"{o['op']}: {', '.join(o['keys'])} from {', '.join(o['providers'])}")
    if h["gaps"]:
        click.echo(f"\n{len(h['gaps'])} op(s) lack FInferShape or a compute function "
                   f"(listed by 'mxnext plugins --json' under \"gaps\")")


@plugins.command("check")
@click.option("--conformance", "conformance", metavar="NAME",
              help="Also run opsdk's conformance suite over every op plugin NAME defines.")
@click.option("--json", "as_json", is_flag=True, help="Print the health report as JSON.")
def check(conformance, as_json):
    """Exit 1 if any plugin (or op module) failed to load, any attribute conflict or refused
    definition exists, or the conformance suite fails."""
    h = health()
    failed = [p for p in h["plugins"] if p["status"] == "failed"]
    names = {p["name"] for p in h["plugins"] if p["status"] == "loaded"}
    if conformance is not None and conformance not in names:
        from mxnext._runtime.mxnet_names import suggest
        raise click.BadParameter(f"no loaded plugin named {conformance!r}"
                                 f"{suggest('plugin', conformance, names)}; loaded: "
                                 f"{', '.join(sorted(names))}", param_hint="--conformance")
    if as_json:
        emit_json(h)
    else:
        _print_plugins(h["plugins"])
        _print_problems(h, verbose=True)
    ok = not failed and not h["conflicts"] and not h["refused"] and not h["failed_modules"]
    if not as_json:
        click.echo("")
        click.echo(click.style("plugins ok", fg="green") if ok else click.style(
            f"plugin check failed: {len(failed)} failed plugin(s), "
            f"{len(h['failed_modules'])} failed op module(s), "
            f"{len(h['conflicts'])} conflict(s), {len(h['refused'])} refused definition(s)",
            fg="red"))
    if conformance is not None:
        ok = _run_conformance(conformance, quiet=as_json) and ok
    if not ok:
        sys.exit(1)


def _run_conformance(plugin: str, quiet: bool) -> bool:
    """Run the suite in a pytest subprocess (a clean process: the same plugins load there)."""
    from mxnext._atomic_write import write_atomic

    with tempfile.TemporaryDirectory(prefix="mxnext-conformance-") as tmp:
        test = Path(tmp) / f"test_conformance_{plugin.replace('-', '_')}.py"
        write_atomic(test, "from opsdk.testing import conformance_tests\n\n"
                           f"test_conformance = conformance_tests({plugin!r})\n")
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               "--rootdir", tmp, str(test)]
        if not quiet:
            click.echo(f"\nconformance suite for plugin {plugin!r}: {' '.join(cmd)}")
            sys.stdout.flush()
            return subprocess.run(cmd, cwd=tmp).returncode == 0
        proc = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True)
        click.echo(proc.stdout + proc.stderr, err=True, nl=False)  # keep stdout pure JSON
    return proc.returncode == 0


def _section(rows, title, line) -> None:
    """A titled block of the health report, one ``line(row)`` per row; nothing if empty."""
    if rows:
        click.echo("")
        heading(title)
        for row in rows:
            click.echo(f"  {line(row)}")
