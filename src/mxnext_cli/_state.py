"""What the installed plugins register, as JSON on stdout.

Run as ``python -m mxnext_cli._state`` so the answer comes from a fresh
process that sees exactly what is installed now (``mxnext install`` and
``mxnext uninstall`` run it after pip; before pip, their own process answers).
"""

from __future__ import annotations

import json
import warnings


def collect() -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # failed plugins are reported in the result instead
        from mxnext import ops as registry, plugins
        return {  # report() loads the plugins first
            "plugins": {p.name: {"distribution": p.distribution, "version": p.version,
                                 "status": p.status, "error": p.error, "traceback": p.traceback}
                        for p in plugins.report()},
            "ops": {op.name: op.provider for op in registry.list_ops()},
            "devices": {t: p.name for p in plugins.report() for t in p.devices},
        }


if __name__ == "__main__":
    print(json.dumps(collect()))
