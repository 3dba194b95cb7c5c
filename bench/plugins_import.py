"""Start-up cost: ``import mxnext`` and a first op beside MXNet's, against the floor of the
imports mxnext cannot do without (numpy, pydantic, pluggy); and ``mxnext ops list``.

Run from the repo root::

    .venv/bin/python bench/plugins_import.py [--repeats 7] [--mxnet-python /opt/mxnet-ref/bin/python]

Each sample is a fresh interpreter running ``python -c CODE``; the sides take turns, so a
busy machine slows them alike. Reported per side: ``process`` — wall time of the whole run,
interpreter start and exit included (what a user waits for), the median and the best of the
repeats; ``in-process`` (median) — from before the first import until the first op's result
is on the host. The targets read the best runs, those other load on the machine disturbed
least. The first op is ``x = nd.ones((2,)); (x + x).asnumpy()``. For mxnext it also lists
each plugin's own load time from ``mxnext.plugins.report()``.

One untimed run first writes what later runs read (bytecode, the plugins' op manifests), and
``PYTHONDONTWRITEBYTECODE`` is dropped for the runs: start-up is measured as it is from the
second run on. Targets: mxnext's process ≤ 2× the floor's, ``mxnext ops list`` ≤ 0.5 s; a
``target:`` line says whether each is met. Printed, never asserted. MXNet is skipped with a
note when its interpreter is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

FIRST_OP = "x = mx.nd.ones((2,)); (x + x).asnumpy()"
TIMED = """
import json, time
t = time.perf_counter()
{body}
print(json.dumps({{"in_process": time.perf_counter() - t{extra}}}))
"""
FLOOR = TIMED.format(body="import numpy, pydantic, pluggy", extra="")
MXNEXT = TIMED.format(body=f"import mxnext as mx\n{FIRST_OP}", extra=(
    ', "plugins": [{"name": p.name, "status": p.status, "load_time": p.load_time, '
    '"version": p.version} for p in mx.plugins.report()]'))
MXNET = TIMED.format(body=f"import mxnet as mx\n{FIRST_OP}", extra=', "version": mx.__version__')

OPS_LIST_TARGET = 0.5       # seconds
RATIO_TARGET = 2.0          # mxnext's process / the floor's


def _env() -> dict:
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _run(argv: list[str]) -> tuple[float, str]:
    """(wall seconds, last line of stdout) of one fresh process."""
    t = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=300, env=_env())
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(argv[:3])} failed:\n{proc.stderr[-2000:]}")
    lines = proc.stdout.strip().splitlines()
    return wall, lines[-1] if lines else ""


def _ops_list_argv() -> list[str]:
    script = Path(sys.executable).with_name("mxnext")
    return [str(script), "ops", "list"] if script.exists() else \
        [sys.executable, "-m", "mxnext_cli", "ops", "list"]


def measure(sides: dict, repeats: int) -> dict:
    """``{side: {"process": median wall, "best": least wall, "in_process": median or None,
    "last": output}}``;
    ``sides`` maps a name to the argv of one sample (or ``(python, code)``)."""
    argvs = {name: [s[0], "-c", s[1]] if isinstance(s, tuple) else s for name, s in sides.items()}
    for argv in argvs.values():
        _run(argv)                       # untimed: bytecode and manifests get written
    samples = {name: [] for name in argvs}
    for _ in range(repeats):
        for name, argv in argvs.items():
            samples[name].append(_run(argv))
    out = {}
    for name, runs in samples.items():
        parsed = [json.loads(line) if line.startswith("{") else {} for _, line in runs]
        inner = [p["in_process"] for p in parsed if "in_process" in p]
        out[name] = {"process": statistics.median(w for w, _ in runs),
                     "best": min(w for w, _ in runs),
                     "in_process": statistics.median(inner) if inner else None,
                     "last": parsed[-1]}
    return out


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--mxnet-python", default=os.environ.get("MXNEXT_MXNET_PYTHON",
                                                             "/opt/mxnet-ref/bin/python"))
    args = ap.parse_args(argv)

    sides = {"floor (numpy+pydantic+pluggy)": (sys.executable, FLOOR),
             "mxnext + first op": (sys.executable, MXNEXT)}
    note = f"MXNet not measured: {args.mxnet_python} is absent"
    if os.path.exists(args.mxnet_python):
        try:
            version = json.loads(_run([args.mxnet_python, "-c", MXNET])[1])["version"]
            sides[f"mxnet {version} + first op"] = (args.mxnet_python, MXNET)
            note = ""
        except RuntimeError as e:
            note = f"MXNet not measured: {e}"
    sides["mxnext ops list"] = _ops_list_argv()
    res = measure(sides, args.repeats)

    floor = res["floor (numpy+pydantic+pluggy)"]["best"]
    print(f"{args.repeats} fresh interpreters each, the sides taking turns; process: wall "
          f"time of the whole run (median, best, best / the floor's best)")
    print(f"{'side':<32}{'median (s)':>11}{'best (s)':>10}{'x floor':>9}"
          f"{'in-process median (s)':>23}")
    for name, r in res.items():
        inner = f"{r['in_process']:.3f}" if r["in_process"] is not None else "-"
        print(f"{name:<32}{r['process']:>11.3f}{r['best']:>10.3f}{r['best'] / floor:>8.2f}x"
              f"{inner:>23}")
    if note:
        print(note)

    first_op = res["mxnext + first op"]["best"]
    ops_list = res["mxnext ops list"]["best"]
    verdict = "met" if first_op <= RATIO_TARGET * floor else "missed"
    print(f"target: mxnext import + first op <= {RATIO_TARGET:g}x the floor: {first_op:.3f} s "
          f"= {first_op / floor:.2f}x ({floor:.3f} s) -> {verdict}")
    verdict = "met" if ops_list <= OPS_LIST_TARGET else "missed"
    print(f"target: mxnext ops list <= {OPS_LIST_TARGET:g} s: {ops_list:.3f} s -> {verdict}")

    print("\nmxnext plugins (last run):")
    for p in res["mxnext + first op"]["last"]["plugins"]:
        print(f"  {p['name']:<20}{p['status']:<10}{p['load_time'] * 1000:8.1f} ms  "
              f"{p['version'] or ''}")


if __name__ == "__main__":
    main()
