"""``mxnext ops list`` and ``mxnext ops show``."""

from __future__ import annotations

import re

import click

from . import _opinfo
from ._table import emit_json, heading, table

__all__ = ["ops"]


@click.group()
def ops():
    """List and inspect registered operators."""


def _lookup(name: str):
    """The op named (or aliased) ``name``; a usage error with the closest matches if none."""
    from mxnext import ops as registry
    from mxnext._runtime.mxnet_names import suggest
    from mxnext.base import OpNotFound
    try:
        return registry.get(name)
    except OpNotFound:
        known = registry.names()
        raise click.UsageError(f"unknown operator {name!r}{suggest('op', name, known)}; "
                               f"'mxnext ops list --all' shows all {len(registry.catalog())}"
                               ) from None


def _plugin_names():
    from mxnext import ops as registry, plugins
    return {p.name for p in plugins.report()} | {op.provider for op in registry.catalog()}


@ops.command("list")
@click.option("--plugin", "plugin", metavar="NAME",
              help="Only ops this plugin defines or adds an attribute (e.g. a kernel) to.")
@click.option("--device", metavar="DEV",
              help="Only ops with a compute function for device type DEV (e.g. cpu).")
@click.option("--grep", "pattern", metavar="PATTERN",
              help="Only ops whose name or an alias matches this regular expression (any case).")
@click.option("--all", "show_all", is_flag=True,
              help="Also list internal ops (names starting with '_', such as _backward_*).")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def list_ops(plugin, device, pattern, show_all, as_json):
    """Every registered public op: plugin, aliases, input/output counts, devices with compute.
    Read from what the plugins describe: no op module is imported."""
    from mxnext import ops as registry

    _check_plugin(plugin)
    ops_ = registry.catalog()
    _check_device(device, ops_)
    rows, hidden = _select(ops_, plugin, device, _grep(pattern), show_all)
    if as_json:
        emit_json(rows)
        return
    _print_ops(rows, hidden)


def _check_plugin(plugin):
    """A usage error unless ``--plugin`` is None or a known plugin."""
    from mxnext._runtime.mxnet_names import suggest
    if plugin is not None and plugin not in (names := _plugin_names()):
        raise click.BadParameter(f"no plugin named {plugin!r}{suggest('plugin', plugin, names)}",
                                 param_hint="--plugin")


def _check_device(device, ops_):
    """A usage error unless ``--device`` is None, a device type on offer or one some op has
    a compute function for."""
    from mxnext import device as devices
    from mxnext._runtime.mxnet_names import suggest
    if device is None:
        return
    offered = {t for t, dev in devices.available().items()  # not the test devices
               if not getattr(dev, "internal", False)}
    known = offered | {d for op in ops_ for d in _opinfo.devices_of(op)}
    if device not in known:
        raise click.BadParameter(f"unknown device type {device!r}"
                                 f"{suggest('device', device, known)}; known: "
                                 f"{', '.join(sorted(known))}", param_hint="--device")


def _grep(pattern):
    """``--grep`` compiled (any case), or None."""
    try:
        return re.compile(pattern, re.IGNORECASE) if pattern is not None else None
    except re.error as e:
        raise click.BadParameter(f"not a regular expression: {e}", param_hint="--grep") from None


def _select(ops_, plugin, device, rx, show_all):
    """The summaries of the ops that pass the filters, and how many internal ops passed
    but are not shown."""
    rows, hidden = [], 0
    for op in ops_:
        if plugin is not None and op.provider != plugin and all(
                e.provider != plugin for e in op.attrs.values()):
            continue
        if device is not None and f"FCompute<{device}>" not in op.attrs:
            continue
        if rx is not None and not any(rx.search(n) for n in (op.name, *op.aliases)):
            continue
        if op.name.startswith("_") and not show_all:  # internal: _backward_* and the like
            hidden += 1
            continue
        rows.append(_opinfo.summary(op))
    return rows, hidden


def _print_ops(rows, hidden):
    table(["NAME", "PLUGIN", "ALIASES", "IN", "OUT", "DEVICES"],
          [[r["name"], r["plugin"] or "-", ", ".join(r["aliases"]) or "-",
            _count(r["num_inputs"]), _count(r["num_outputs"]), ", ".join(r["devices"]) or "-"]
           for r in rows])
    click.echo(f"{len(rows)} op{'s' if len(rows) != 1 else ''}"
               + (f" ({hidden} internal not shown: --all lists them)" if hidden else ""))


def _count(n):
    return "var" if n is None else str(n)


@ops.command("show")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def show(name, as_json):
    """Everything about one op (NAME may be an alias)."""
    import mxnext
    op = _lookup(name)
    d = _opinfo.details(op, {ns: fn for ns in _opinfo.FRONTENDS
                             if (fn := getattr(getattr(mxnext, ns), op.name, None)) is not None})
    if as_json:
        emit_json(d)
        return
    _print_details(d, name)


def _print_details(d, asked):
    """``mxnext ops show``'s text: header, signature parts, attributes, traits, calls."""
    _print_header(d, asked)
    _print_inputs_outputs(d)
    _print_params(d)
    heading("Attributes")
    rows = [(a, "yes") for a in d["attrs"]] + [(a, "outranked") for a in d["outranked"]]
    table(["KEY", "PLEVEL", "PLUGIN", "RUNS"],
          [[a["key"], a["plevel"], a["provider"] or "-", runs]
           for a, runs in sorted(rows, key=lambda r: (r[0]["key"], -r[0]["plevel"]))], indent=2)
    if d["outranked"]:
        click.echo("  (the highest plevel runs; it may hand a call it does not cover to the "
                   "kernel it outranks)")
    _print_traits(d)
    heading("Call")
    for call in d["signature"].values():
        click.echo(f"  {call}")


def _print_header(d, asked):
    title = click.style(d["name"], bold=True)
    extra = f" (alias {asked!r})" if asked != d["name"] else ""
    click.echo(f"{title}{extra}  from plugin {d['plugin'] or '-'}")
    if d["aliases"]:
        click.echo(f"aliases: {', '.join(d['aliases'])}")
    if d["description"]:
        click.echo("")
        for line in d["description"].strip().splitlines():
            click.echo(f"  {line}")
    click.echo("")


def _print_inputs_outputs(d):
    heading("Inputs" + (f" (variadic: count from parameter {d['variadic_inputs']!r})"
                        if d["variadic_inputs"] else ""))
    if d["inputs"]:
        table(["NAME", "TYPE", "DESCRIPTION"],
              [[a["name"], a["type"], a["description"]] for a in d["inputs"]], indent=2)
    else:
        click.echo(f"  {', '.join(d['input_names'] or []) or 'none'}")
    heading("Outputs")
    click.echo("  " + (", ".join(d["output_names"]) if d["output_names"]
                       else f"{_count(d['num_outputs'])} (depends on parameters)"))


def _print_params(d):
    heading("Parameters")
    if d["params"]:
        table(["NAME", "TYPE", "DEFAULT", "ALLOWED", "DESCRIPTION"],
              [[p["name"], p["type"], "required" if p["required"] else _default(p["default"]),
                _allowed(p), p["description"]] for p in d["params"]], indent=2)
    else:
        click.echo("  none")


def _print_traits(d):
    """Devices, gradient, in-place pairs, resources and mutated inputs, one a line."""
    click.echo("")
    click.echo(f"devices:    {', '.join(d['devices']) or 'none'}")
    click.echo(f"gradient:   {'yes' if d['gradient'] else 'no'}")
    click.echo(f"in-place:   {_inplace(d)}")
    click.echo(f"resources:  {', '.join(d['resources']) or 'none'}")
    if d["mutate_inputs"]:
        click.echo(f"mutates inputs: {', '.join(map(str, d['mutate_inputs']))}")
    click.echo("")


def _inplace(d) -> str:
    inplace = d["inplace"]
    if inplace:
        return ", ".join(f"input {i} -> output {o}" for i, o in inplace)
    if inplace is None and any(a["key"] == "FInplaceOption" for a in d["attrs"]):
        return "depends on parameters"
    return "none"


def _default(v) -> str:
    return repr(tuple(v)) if isinstance(v, list) else repr(v)  # JSON made tuples lists


def _allowed(p) -> str:
    parts = []
    if p["enum"]:
        parts.append("{" + ", ".join(map(repr, p["enum"])) + "}")
    for key, sym in (("ge", ">="), ("gt", ">"), ("le", "<="), ("lt", "<")):
        if p["bounds"] and key in p["bounds"]:
            parts.append(f"{sym} {p['bounds'][key]}")
    return ", ".join(parts) or "-"
