"""``mxnext devices`` and ``mxnext kvstores``: what plugins registered and what is usable."""

from __future__ import annotations

import click

from ._table import emit_json, status_style, table

__all__ = ["devices", "kvstores", "device_rows", "kvstore_rows", "count_label"]


def _providers(kind: str) -> dict:
    from mxnext import plugins
    return {name: p.name for p in plugins.report() for name in getattr(p, kind)}


def count_label(count):
    """A device count for display: "unbounded" for the huge count of logical ids (cpu)."""
    return "unbounded" if count is not None and count >= 1 << 30 else count


def device_rows() -> list[dict]:
    from mxnext import device
    providers = _providers("devices")
    rows = []
    for dtype, dev in sorted(device.available().items()):
        row = {"type": dtype, "plugin": providers.get(dtype), "array_lib": None, "count": None,
               "available": False, "error": None}
        try:  # asking may import the device library (cupy) or probe hardware
            row["array_lib"] = getattr(dev.xp, "__name__", str(dev.xp))
            row["count"] = int(dev.count())
            row["available"] = row["count"] > 0
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
    return rows


def kvstore_rows() -> list[dict]:
    """Backends registered through ``mxnext_register_kvstores`` (and any builtin the
    ``mxnext.kvstore`` module lists itself)."""
    providers = _providers("kvstores")
    try:
        from mxnext import kvstore
        names = set(kvstore.available())
    except (ImportError, AttributeError):  # no KVStore frontend in this build
        names = set()
    return [{"name": n, "plugin": providers.get(n)} for n in sorted(names | set(providers))]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def devices(as_json):
    """Registered device types, the plugin behind each, and how many are usable."""
    rows = device_rows()
    if as_json:
        emit_json(rows)
        return
    table(["TYPE", "PLUGIN", "ARRAYS", "COUNT", "AVAILABLE"],
          [[r["type"], r["plugin"] or "-", r["array_lib"] or "-",
            "-" if r["count"] is None else count_label(r["count"]),
            "yes" if r["available"] else f"no: {r['error']}" if r["error"] else "no"]
           for r in rows],
          styles={4: status_style})


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def kvstores(as_json):
    """Registered KVStore backends (the names mx.kv.create accepts)."""
    rows = kvstore_rows()
    if as_json:
        emit_json(rows)
        return
    if not rows:
        click.echo("no KVStore backends registered")
        return
    table(["NAME", "PLUGIN"], [[r["name"], r["plugin"] or "-"] for r in rows])
