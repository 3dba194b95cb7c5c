"""``mxnext devices``: the device types plugins registered and whether they are usable."""

from __future__ import annotations

import click

from ._table import emit_json, status_style, table

__all__ = ["devices", "device_rows", "count_label"]


def count_label(count):
    """A device count for display: "unbounded" for the huge count of logical ids (cpu)."""
    return "unbounded" if count is not None and count >= 1 << 30 else count


def device_rows() -> list[dict]:
    from mxnext import device, plugins
    providers = {t: p.name for p in plugins.report() for t in p.devices}
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

