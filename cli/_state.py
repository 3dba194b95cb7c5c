"""What the installed plugins register, as JSON on stdout.

Run as ``python -m mxnext_cli._state`` so the answer comes from a fresh
process that sees exactly what is installed now (``mxnext install`` runs it
before and after pip).
"""

from __future__ import annotations

import json
import warnings


def collect() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # failed plugins are reported in the result instead
        import mxnext  # noqa: F401  (loads every plugin)
        from mxnext import plugins, registry

        from .devices import kvstore_rows
        return {
            "plugins": {p.name: {"distribution": p.distribution, "version": p.version,
                                 "status": p.status, "error": p.error, "traceback": p.traceback}
                        for p in plugins.report()},
            "ops": {op.name: op.provider for op in registry.list_ops()},
            "devices": {t: p.name for p in plugins.report() for t in p.devices},
            "kvstores": {r["name"]: r["plugin"] for r in kvstore_rows()},
        }


if __name__ == "__main__":
    print(json.dumps(collect()))
