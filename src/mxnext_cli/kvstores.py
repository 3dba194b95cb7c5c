"""``mxnext kvstores``: the KVStore types ``mx.kv.create`` accepts and the plugin behind each."""

from __future__ import annotations

import click

from ._table import emit_json, table

__all__ = ["kvstores", "kvstore_rows"]


def kvstore_rows() -> list[dict]:
    from mxnext import kvstore, plugins
    providers = {t: p.name for p in plugins.report() for t in p.kvstores}
    rows = []
    for name, factory in sorted(kvstore.available().items()):
        target = getattr(factory, "klass", factory)
        rows.append({"type": name, "plugin": providers.get(name),
                     "implementation": f"{target.__module__}.{target.__qualname__}"})
    return rows


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print a JSON list instead of a table.")
def kvstores(as_json):
    """KVStore types (mx.kv.create names) and the plugin providing each.

    Other MXNet names resolve to these as in MXNet: dist_device_sync is dist_sync_device,
    any name with "device" is device, any starting with "local" is local.
    """
    rows = kvstore_rows()
    if as_json:
        emit_json(rows)
        return
    table(["TYPE", "PLUGIN", "IMPLEMENTATION"],
          [[r["type"], r["plugin"] or "-", r["implementation"]] for r in rows])
