"""Start-up cost: ``import mxnext`` (which loads every installed plugin) beside ``import mxnet``.

Run from the repo root::

    .venv/bin/python bench/plugins_import.py [--repeats 7] [--mxnet-python /opt/mxnet-ref/bin/python]

Each sample is a fresh interpreter. Reported per side, as the median over the repeats:
``import`` — time inside the process from before the import statement until the import (and
for mxnext, ``plugins.load()``) has returned; ``process`` — wall time of the whole
``python -c`` run minus that of a bare ``python -c pass`` of the same interpreter. For mxnext
it also lists each plugin's status and own load time from ``mxnext.plugins.report()``.
Printed, never asserted. MXNet is skipped with a note when its interpreter is absent.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

MXNEXT_PROBE = """
import json, time
t = time.perf_counter()
import mxnext
mxnext.plugins.load()
dt = time.perf_counter() - t
print(json.dumps({"import": dt, "plugins": [
    {"name": p.name, "status": p.status, "load_time": p.load_time, "version": p.version}
    for p in mxnext.plugins.report()]}))
"""

MXNET_PROBE = """
import json, time
t = time.perf_counter()
import mxnet
dt = time.perf_counter() - t
print(json.dumps({"import": dt, "version": mxnet.__version__}))
"""


def _timed_run(python: str, code: str) -> tuple[float, str]:
    t = time.perf_counter()
    proc = subprocess.run([python, "-c", code], capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError(f"{python} failed:\n{proc.stderr[-2000:]}")
    return wall, proc.stdout.strip().splitlines()[-1] if code.strip() != "pass" else ""


def measure(python: str, code: str, repeats: int) -> dict:
    bare = statistics.median(_timed_run(python, "pass")[0] for _ in range(repeats))
    imports, process, last = [], [], {}
    for _ in range(repeats):
        wall, out = _timed_run(python, code)
        last = json.loads(out)
        imports.append(last["import"])
        process.append(wall - bare)
    return {"import": statistics.median(imports), "process": statistics.median(process),
            "bare": bare, "last": last}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--mxnet-python", default=os.environ.get("MXNEXT_MXNET_PYTHON",
                                                             "/opt/mxnet-ref/bin/python"))
    args = ap.parse_args(argv)

    rows = [("mxnext (+ plugins)", measure(sys.executable, MXNEXT_PROBE, args.repeats))]
    note = ""
    if os.path.exists(args.mxnet_python):
        try:
            r = measure(args.mxnet_python, MXNET_PROBE, args.repeats)
            rows.append((f"mxnet {r['last']['version']}", r))
        except RuntimeError as e:
            note = f"MXNet not measured: {e}"
    else:
        note = f"MXNet not measured: {args.mxnet_python} is absent"

    print(f"median of {args.repeats} fresh interpreters each")
    print(f"{'side':<22}{'import (s)':>12}{'process (s)':>13}{'bare python (s)':>17}")
    for name, r in rows:
        print(f"{name:<22}{r['import']:>12.3f}{r['process']:>13.3f}{r['bare']:>17.3f}")
    if len(rows) == 2:
        print(f"mxnext / mxnet import time: {rows[0][1]['import'] / rows[1][1]['import']:.2f}x")
    if note:
        print(note)
    print("\nmxnext plugins (last run):")
    for p in rows[0][1]["last"]["plugins"]:
        print(f"  {p['name']:<20}{p['status']:<10}{p['load_time'] * 1000:8.1f} ms  {p['version'] or ''}")


if __name__ == "__main__":
    main()
