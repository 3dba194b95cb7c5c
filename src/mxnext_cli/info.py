"""``mxnext info``: the block a bug report needs."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import sys

import click

from ._table import emit_json
from .devices import count_label, device_rows

__all__ = ["info"]

_PACKAGES = ("mxnext", "mxnext-core", "numpy", "pydantic", "pluggy", "click", "threadpoolctl")
_ENV_PREFIXES = ("MXNEXT_", "MXNET_")


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def collect() -> dict:
    import mxnext
    from mxnext import engine, plugins

    reports = plugins.report()
    rows = device_rows()
    return {
        "versions": {name: _version(name) for name in _PACKAGES},
        "mxnet_api": mxnext.__mxnet_version__,
        "python": sys.version.split()[0],
        "executable": sys.executable,
        "platform": platform.platform(),
        "mxnext_location": os.path.dirname(mxnext.__file__),
        "engine": type(engine.get()).__name__,
        "threads": _threads(),
        "devices": {r["type"]: r["count"] for r in rows},
        "device_errors": {r["type"]: r["error"] for r in rows if r["error"]},
        "plugins": {status: sum(p.status == status for p in reports)
                    for status in ("loaded", "failed", "disabled")},
        "environment": {k: v for k, v in sorted(os.environ.items())
                        if k.startswith(_ENV_PREFIXES)},
    }


def _threads() -> dict:
    """The runtime's thread policy, and the BLAS/OpenMP libraries loaded with their limits."""
    import dataclasses

    from mxnext import runtime
    from threadpoolctl import threadpool_info
    policy = runtime.thread_policy()
    return {**dataclasses.asdict(policy), "summary": policy.describe(),
            "libraries": [f"{i['internal_api']} ({i['user_api']}) x{i['num_threads']}"
                          for i in threadpool_info()]}


def _device(dtype, count, error) -> str:
    """One device type for display: its count, or why it is unusable."""
    return f"{dtype} (unavailable: {error})" if error else f"{dtype} ({count_label(count)})"


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of text.")
def info(as_json):
    """Versions, engine, thread policy, devices and plugin count."""
    d = collect()
    if as_json:
        emit_json(d)
        return
    v = d["versions"]
    lines = [("mxnext", f"{v['mxnext']} at {d['mxnext_location']}"),
             ("MXNet API", d["mxnet_api"]),
             ("Python", f"{d['python']} ({d['executable']})"),
             ("platform", d["platform"])]
    lines += [(name, v[name] or "not installed") for name in _PACKAGES[1:]]
    t = d["threads"]
    lines += [("engine", d["engine"]),
              ("threads", t["summary"] + "; loaded: " + (", ".join(t["libraries"]) or "none")),
              ("devices", ", ".join(_device(t, n, d["device_errors"].get(t))
                                    for t, n in d["devices"].items()) or "none"),
              ("plugins", ", ".join(f"{n} {s}" for s, n in d["plugins"].items()))]
    lines += [(k, val) for k, val in d["environment"].items()]
    width = max(len(k) for k, _ in lines)
    for k, val in lines:
        click.echo(f"{k + ':':<{width + 1}} {val}")
