"""``mxnext new plugin`` and ``mxnext new op``: generate a plugin package or add an op to one.

Nothing is ever overwritten: every target path is checked before the first
file is written, so a refused run leaves the tree as it was.
"""

from __future__ import annotations

import importlib.metadata
import importlib.resources
import keyword
import re
import string
import tomllib
from pathlib import Path

import click

__all__ = ["new"]

STYLES = ("nnvm", "simple", "property")
_PLUGIN_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")
_style_option = click.option(
    "--style", type=click.Choice(STYLES), default="nnvm", show_default=True,
    help="How the op is written: nnvm (the registry builder), simple (SimpleOp) or property "
         "(OperatorProperty).")


@click.group()
def new():
    """Scaffold a plugin package or an op."""


def _render(template: str, **subst) -> str:
    text = importlib.resources.files("mxnext_cli.templates").joinpath(template).read_text()
    return string.Template(text).substitute(subst)


def _check_op_name(name: str, force: bool) -> None:
    if not name.isidentifier() or keyword.iskeyword(name):
        raise click.BadParameter(f"{name!r} is not a Python identifier; an op name must be one "
                                 f"so that mx.nd.{name} can exist", param_hint="NAME")
    if name.startswith("_"):
        raise click.BadParameter(f"{name!r} starts with '_', which marks internal ops "
                                 f"(such as _backward_*); choose a public name", param_hint="NAME")
    if force:
        return
    from mxnext import ops as registry
    from mxnext.base import OpNotFound
    for taken in (name, f"_backward_{name}"):
        try:
            op = registry.get(taken)
        except OpNotFound:
            continue
        raise click.BadParameter(f"op {taken!r} already exists (defined by plugin "
                                 f"{op.provider!r}); choose another name or pass --force",
                                 param_hint="NAME")


def _write_all(files: dict[Path, str], heading: str) -> None:
    """Echo ``heading`` and write ``files``, or refuse in one line before writing any."""
    blocked = next((d for p in files for d in p.parents if d.exists() and not d.is_dir()), None)
    if blocked is not None:
        raise click.ClickException(f"{blocked} exists and is not a directory; nothing was "
                                   f"written")
    existing = [p for p in files if p.exists()]
    if existing:
        raise click.ClickException("refusing to overwrite existing files (nothing was "
                                   "written): " + ", ".join(map(str, existing)))
    click.echo(heading)
    from mxnext._atomic_write import write_atomic

    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, text)
        click.echo(f"  created {path}")


def _op_files(op: str, style: str, ops_dir: Path, tests_dir: Path) -> dict[Path, str]:
    subst = {"op": op, "Op": "".join(p.capitalize() for p in op.split("_"))}
    return {ops_dir / f"{op}.py": _render(f"op_{style}.py.tmpl", **subst),
            tests_dir / f"test_{op}.py": _render("op_test.py.tmpl", **subst)}


KINDS = ("op", "device", "kvstore")
_WHAT = {"op": "Operators", "device": "A device type", "kvstore": "A KVStore type"}


@new.command("plugin")
@click.argument("name")
@click.option("--kind", type=click.Choice(KINDS), default="op", show_default=True,
              help="What the plugin adds: ops, a device type or a KVStore type.")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path),
              help="Directory to create the package in (default: ./mxnext-NAME).")
@click.option("--op", "op", metavar="OP",
              help="Name of the first op (default: NAME_square; --kind op only).")
@_style_option
@click.option("--force", is_flag=True,
              help="Allow an op or plugin name that is already registered or installed.")
@click.pass_context
def new_plugin(ctx, name, kind, directory, op, style, force):
    """Generate the plugin package NAME (distribution mxnext-NAME) of one kind: pyproject
    with the entry point, src layout, the kind's conformance tests, README. An op plugin
    gets one op with its reference test; a device plugin a host-backed device type NAME; a
    KVStore plugin a store type NAME summing in process (NAME with '_' for '-')."""
    if not _PLUGIN_NAME.match(name) or keyword.iskeyword(name.replace("-", "_")):
        raise click.BadParameter(f"{name!r} is not a valid plugin name: use lowercase letters "
                                 f"and digits, words joined by '-' or '_' (e.g. 'my-ops')",
                                 param_hint="NAME")
    if kind != "op":
        given = [f"--{p}" for p in ("op", "style")
                 if ctx.get_parameter_source(p) != click.core.ParameterSource.DEFAULT]
        if given:
            verb = "apply" if len(given) > 1 else "applies"
            raise click.BadParameter(f"{' and '.join(given)} {verb} to --kind op only, got "
                                     f"--kind {kind}", param_hint="--kind")
    package = "mxnext_" + name.replace("-", "_")
    installed = {ep.name for ep in importlib.metadata.entry_points(group="mxnext")}
    if name in installed and not force:
        raise click.BadParameter(f"a plugin named {name!r} is already installed; choose "
                                 f"another name or pass --force", param_hint="NAME")
    root = directory or Path(f"mxnext-{name}")
    src = root / "src" / package
    ident = name.replace("-", "_")
    subst = {"plugin": name, "package": package, "dist": f"mxnext-{name}", "what": _WHAT[kind],
             "Name": "".join(p.capitalize() for p in ident.split("_")), "devtype": ident,
             "kvtype": ident, "mxnext_version": importlib.metadata.version("mxnext-core")}
    files = {
        root / "pyproject.toml": _render("plugin_pyproject.toml.tmpl", **subst),
        src / "__init__.py": _render("plugin_init.py.tmpl", **subst),
    }
    if kind == "op":
        op = subst["op"] = op or f"{ident}_square"
        _check_op_name(op, force)
        files.update(_op_plugin_files(root, src, op, style, subst))
        after = f"mxnext ops show {op}"
    else:
        unit = {"device": "device", "kvstore": "store"}[kind]
        files.update({
            root / "README.md": _render(f"{kind}_README.md.tmpl", **subst),
            src / "plugin.py": _render(f"{kind}_plugin.py.tmpl", **subst),
            src / f"{unit}.py": _render(f"{kind}_{unit}.py.tmpl", **subst),
            root / "tests" / "test_conformance.py": _render(f"{kind}_test_conformance.py.tmpl",
                                                            **subst),
        })
        after = f"mxnext {kind}s"
    _write_all(files, f"Creating {kind} plugin {name!r} (distribution mxnext-{name}) in {root}")
    click.echo(f"\nNext: pip install -e '{root}[test]'  (or: mxnext install -e {root})\n"
               f"      pytest {root / 'tests'}\n      {after}")


def _op_plugin_files(root: Path, src: Path, op: str, style: str, subst) -> dict[Path, str]:
    files = {
        root / "README.md": _render("plugin_README.md.tmpl", **subst),
        src / "plugin.py": _render("plugin_plugin.py.tmpl", **subst),
        src / "ops" / "__init__.py": _render("plugin_ops_init.py.tmpl", **subst),
        root / "tests" / "test_conformance.py": _render("plugin_test_conformance.py.tmpl", **subst),
    }
    files.update(_op_files(op, style, src / "ops", root / "tests"))
    return files


def _plugin_package(plugin_dir: Path) -> tuple[str, Path]:
    """``(plugin name, package dir)`` of the plugin whose pyproject is in ``plugin_dir``."""
    pyproject = plugin_dir / "pyproject.toml"
    if not pyproject.is_file():
        raise click.BadParameter(f"no pyproject.toml in {plugin_dir}", param_hint="--plugin")
    meta = tomllib.loads(pyproject.read_text())
    eps = meta.get("project", {}).get("entry-points", {}).get("mxnext", {})
    if len(eps) != 1:
        raise click.BadParameter(f"{pyproject} must declare exactly one entry point in "
                                 f"[project.entry-points.mxnext]; found {len(eps)}",
                                 param_hint="--plugin")
    (name, target), = eps.items()
    package = target.split(":")[0].split(".")[0]
    for candidate in (plugin_dir / "src" / package, plugin_dir / package):
        if (candidate / "__init__.py").is_file():
            return name, candidate
    raise click.BadParameter(f"package {package!r} (from entry point {name} = {target!r}) not "
                             f"found under {plugin_dir}/src or {plugin_dir}", param_hint="--plugin")


@new.command("op")
@click.argument("name")
@_style_option
@click.option("--plugin", "plugin_dir", type=click.Path(file_okay=False, exists=True, path_type=Path),
              default=".", show_default=True, help="The plugin package directory to add to.")
@click.option("--force", is_flag=True, help="Allow a name that is already a registered op.")
def new_op(name, style, plugin_dir, force):
    """Add the op NAME (module and test) to an existing plugin package."""
    _check_op_name(name, force)
    plugin, package_dir = _plugin_package(plugin_dir)
    ops_dir = package_dir / "ops"
    auto = (ops_dir / "__init__.py").is_file()
    files = _op_files(name, style, ops_dir if auto else package_dir, plugin_dir / "tests")
    _write_all(files, f"Adding op {name!r} ({style} style) to plugin {plugin!r}")
    if not auto:
        click.echo(f"\nNote: {package_dir.name} has no ops/ package, so import the new module "
                   f"from the plugin's mxnext_register_ops hook:  from . import {name}")
    click.echo("\nReinstall the plugin if it is not installed editable, then: "
               f"mxnext ops show {name}")
