#!/usr/bin/env python3
"""gluon-tests: MXNet 1.9's own Gluon unit tests, unmodified, against mxnext (or MXNet).

    run.py PYTHON [OUT.json] [--module mxnext|mxnet] [--files F,..] [--tests T,..] ...

PYTHON is the interpreter of the environment under test; it also runs this driver
(standard library only). With --module mxnext the test files' ``import mxnet`` gives
mxnext (shim/sitecustomize.py); the result is scored per file against MXNet 1.9.1's own
result on the same files (baseline-mxnet-1.9.1.json, made with --module mxnet).
See README.md.
"""
import argparse
import ast
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import selection as SEL  # noqa: E402

UNIT = os.path.join("python", "unittest")
PASSED = "passed"


def log(msg):
    print("[gluon-tests %s] %s" % (time.strftime("%H:%M:%S"), msg), file=sys.stderr, flush=True)


def blob_id(data):
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def copy_tests(dest):
    """Copy tests/ into dest; return the files that differ from upstream."""
    edited = []
    for rel, blob in SEL.BLOBS.items():
        with open(os.path.join(HERE, "tests", rel), "rb") as f:
            data = f.read()
        if blob_id(data) != blob:
            edited.append(rel)
        os.makedirs(os.path.join(dest, os.path.dirname(rel)), exist_ok=True)
        with open(os.path.join(dest, rel), "wb") as f:
            f.write(data)
    return edited


def test_names(fname):
    """Module-level test functions of a file, as pytest collects them."""
    with open(os.path.join(HERE, "tests", UNIT, fname), "rb") as f:
        tree = ast.parse(f.read())
    return [n.name for n in tree.body
            if isinstance(n, ast.FunctionDef) and n.name.startswith("test")]


# --------------------------------------------------------------------------- environment
PROBE = """
import importlib, json, sys
out = {"python": sys.version.split()[0]}
for name in %r:
    try:
        out[name] = importlib.import_module(name).__version__
    except Exception:
        out[name] = None
try:
    import mxnet
    out["module_version"] = getattr(mxnet, "__mxnext_version__", mxnet.__version__)
    name = "mxnext" if hasattr(mxnet, "__mxnext_version__") else "mxnet"
    out["mxnet"] = "%%s %%s" %% (name, out["module_version"])
except Exception as e:
    out["mxnet"] = "import failed: %%s: %%s" %% (type(e).__name__, e)
print("GLUONTESTS " + json.dumps(out))
"""


def probe(python, env, names):
    out = subprocess.run([python, "-c", PROBE % (names,)], env=env, capture_output=True,
                         text=True, timeout=300).stdout
    line = [l for l in out.splitlines() if l.startswith("GLUONTESTS ")]
    return json.loads(line[-1][len("GLUONTESTS "):]) if line else {}


def ensure_deps(python, env, names, install):
    """pytest and the files' third-party imports; a missing one is pip-installed once
    into a private folder under the temp dir (never into the environment itself),
    with numpy pinned to the environment's version. Returns (folder or None, probe)."""
    found = probe(python, env, names)
    missing = [n for n in names if not found.get(n)]
    if not missing:
        return None, found
    key = "%s|%s|%s" % (os.path.abspath(python), found.get("python"), found.get("numpy"))
    folder = os.path.join(tempfile.gettempdir(), "gluon-tests-deps",
                          hashlib.sha1(key.encode()).hexdigest()[:12])
    with_folder = dict(env, PYTHONPATH=env["PYTHONPATH"] + os.pathsep + folder)
    again = probe(python, with_folder, names) if os.path.isdir(folder) else {}
    still = [n for n in missing if not again.get(n)]
    if install and still:
        os.makedirs(folder, exist_ok=True)
        pin = ["numpy==%s" % found["numpy"]] if found.get("numpy") else []
        log("pip-installing %s into %s" % (", ".join(still), folder))
        subprocess.run([python, "-m", "pip", "install", "-q", "--disable-pip-version-check",
                        "--upgrade", "--target", folder] + still + pin, env=env, check=False)
        again = probe(python, with_folder, names)
    return folder, (again or found)


# --------------------------------------------------------------------------- one file
class FileRun:
    """Runs one test file in pytest processes: a test that crashes its process or
    outlives the per-test timeout is recorded, and a new process resumes after it."""

    def __init__(self, fname, cfg):
        self.fname, self.cfg = fname, cfg
        self.results = {}               # node id -> {"outcome", "seconds", "message"}
        self.collected = None
        self.collect_error = None

    def run(self):
        cfg = self.cfg
        path = os.path.join(cfg["unit"], self.fname)
        names = cfg["only"].get(self.fname)
        targets = [path + "::" + n for n in names] if names else [path]
        for attempt in range(1, cfg["max_restarts"] + 2):
            if time.time() > cfg["deadline"]:
                break
            events = os.path.join(cfg["tmp"], "%s.%d.events" % (self.fname, attempt))
            logf = os.path.join(cfg["logs"], "%s.%d.log" % (self.fname, attempt))
            env = dict(cfg["env"], GLUONTESTS_EVENTS=events,
                       GLUONTESTS_SKIP=json.dumps(sorted(self.results)))
            cmd = [cfg["python"], "-m", "pytest", "-c", cfg["ini"], "--rootdir", cfg["unit"],
                   "-p", "gluontests_plugin", "-p", "no:cacheprovider", "-q"] + targets
            with open(logf, "wb") as out:
                proc = subprocess.Popen(cmd, cwd=cfg["work"], env=env, stdout=out,
                                        stderr=subprocess.STDOUT, start_new_session=True)
                finished, running, why = self._watch(proc, events)
            if finished or why == "deadline":
                break
            if running is None:         # died outside any test: collection or module set-up
                if not self.results:
                    self.collect_error = self.collect_error or tail(logf)
                break
            self.results[running] = {"outcome": why, "seconds": None,
                                     "message": self._death(why, proc.returncode, logf)}
            log("%s: %s %s; resuming after it" % (self.fname, running, why))
        for nid in self.collected or []:
            self.results.setdefault(nid, {"outcome": "not_run", "seconds": None,
                                          "message": "not reached (time bound or restarts)"})
        if not self.results:
            msg = "file not collected: " + one_line(self.collect_error or "no test collected")
            for name in names or test_names(self.fname):
                self.results[self.fname + "::" + name] = {"outcome": "not_collected",
                                                          "seconds": None, "message": msg}
        return self

    def _watch(self, proc, events):
        """Wait for the process, reading its events; kill it when one test outlives the
        timeout or the whole run its bound. Returns (finished, test running, why)."""
        pos, running, since, finished = 0, None, None, False
        while True:
            done = proc.poll() is not None
            if os.path.exists(events):
                with open(events, "rb") as f:
                    f.seek(pos)
                    chunk = f.read()
                complete = chunk[:chunk.rfind(b"\n") + 1]
                pos += len(complete)
                for line in complete.splitlines():
                    ev = json.loads(line)
                    kind = ev["ev"]
                    if kind == "collected" and self.collected is None:
                        self.collected = ev["ids"]
                    elif kind == "collect_error":
                        self.collect_error = ev["msg"]
                    elif kind == "start":
                        running, since = ev["id"], time.time()
                    elif kind == "result":
                        running = None
                        self.results[ev["id"]] = {"outcome": ev["outcome"], "seconds": ev["seconds"],
                                                  "message": ev["msg"]}
                    elif kind == "finish":
                        finished = True
            if done:
                return finished, running, "crashed"
            now = time.time()
            why = ("timeout" if running is not None and now - since > self.cfg["timeout"]
                   else "memory" if rss_gb(proc.pid) > self.cfg["memory_gb"]
                   else "deadline" if now > self.cfg["deadline"] else None)
            if why:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
                return False, running, why
            time.sleep(0.2)

    def _death(self, why, rc, logf):
        if why == "timeout":
            return "still running after %ds; process killed" % self.cfg["timeout"]
        if why == "memory":
            return "process killed: its memory passed %g GB" % self.cfg["memory_gb"]
        how = "signal %d" % -rc if rc is not None and rc < 0 else "exit status %s" % rc
        return "the process died (%s): %s" % (how, one_line(tail(logf, 400)))


def rss_gb(pid):
    """Resident memory of a process, in GB (0 once it is gone)."""
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 2.0 ** 20
    except OSError:
        pass
    return 0.0


def tail(path, n=3000):
    try:
        with open(path, "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - n))
            return f.read().decode("utf-8", "replace")
    except OSError:
        return ""


def one_line(text, n=300):
    """The most telling line of an error text: the last ``E ...`` line, else the last."""
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    errs = [l[1:].strip() for l in lines if l.startswith("E ")]
    line = errs[-1] if errs else (lines[-1] if lines else "")
    return line[:n]


# --------------------------------------------------------------------------- scoring
def aside_of(nid):
    fname, _, name = nid.partition("::")
    return SEL.ASIDE.get(fname, {}).get(name.split("[")[0])


def score(tests, baseline, files):
    """Per file: of the counted tests the reference passes, how many pass here."""
    ref = baseline["tests"]
    table, todo = {}, {}
    for fname in files:
        ids = [i for i in ref if i.startswith(fname + "::") and ref[i]["outcome"] == PASSED
               and not aside_of(i) and i in tests]
        here = [i for i in ids if tests[i]["outcome"] == PASSED]
        table[fname] = {"reference_passed": len(ids), "passed_here": len(here),
                        "percent": round(100.0 * len(here) / len(ids), 1) if ids else None}
        todo.update({i: "[%s] %s" % (tests[i]["outcome"], one_line(tests[i]["message"]))
                     for i in ids if i not in here})
    n_ref = sum(r["reference_passed"] for r in table.values())
    n_here = sum(r["passed_here"] for r in table.values())
    table["total"] = {"reference_passed": n_ref, "passed_here": n_here,
                      "percent": round(100.0 * n_here / n_ref, 1) if n_ref else None}
    return table, todo


def report(res):
    ref_name = "MXNet %s" % res.get("reference_version", "1.9.1")
    print("\nMXNet 1.9 Gluon tests against %s (seed %s, %.0f s)" % (
        res["environment"].get("mxnet"), res["settings"]["seed"], res["wall_s"]))
    tests = res["tests"]
    if "score" in res:
        print("%-28s %12s %12s %7s" % ("file", "passed here", "by " + ref_name, "%"))
        for fname, row in res["score"].items():
            pct = "-" if row["percent"] is None else "%.0f%%" % row["percent"]
            print("%-28s %12d %12d %7s" % (fname, row["passed_here"], row["reference_passed"], pct))
        todo = res["passed_by_reference_not_here"]
        print("\nPassed by %s, not here (%d):" % (ref_name, len(todo)))
        last = None
        for nid, msg in todo.items():
            fname, _, name = nid.partition("::")
            if fname in res["collect_errors"]:
                if fname != last:
                    print("  %s: all %d, the file did not import (below)"
                          % (fname, sum(1 for i in todo if i.startswith(fname + "::"))))
            else:
                if fname != last:
                    print("  " + fname)
                print("    %s  %s" % (name, msg))
            last = fname
    else:
        counts = {}
        for r in tests.values():
            counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
        print("outcomes: " + ", ".join("%d %s" % (n, o) for o, n in sorted(counts.items())))
    aside = [nid for nid in tests if aside_of(nid)]
    if aside:
        print("\nAside, not scored (%s): %s" % (
            "; ".join("%s: %s" % (c, w) for c, w in SEL.CATEGORIES.items()),
            ", ".join("%s [%s]" % (nid.split("::")[1], tests[nid]["outcome"]) for nid in aside)))
    if res["stubbed_modules"]:
        print("\nStub modules (mxnext lacks them; only the tests using them fail): "
              + ", ".join(res["stubbed_modules"]))
    for fname, msg in res["collect_errors"].items():
        print("\n%s did not import: %s" % (fname, one_line(msg)))
    if res["upstream"]["edited"]:
        print("\nWARNING: test files differ from upstream: " + ", ".join(res["upstream"]["edited"]))
    passed = sum(1 for r in tests.values() if r["outcome"] == PASSED)
    print("\ngluon-tests: %d passed, %d failed" % (passed, sum(
        1 for r in tests.values() if r["outcome"] not in (PASSED, "skipped", "xfailed"))))


# --------------------------------------------------------------------------- main
def select(ap, a):
    files = list(SEL.FILES)
    if a.files:
        want = [f if f.endswith(".py") else f + ".py" for f in a.files.split(",") if f]
        unknown = [f for f in want if f not in files]
        if unknown:
            ap.error("--files: not one of the test files: %s" % ", ".join(unknown))
        files = [f for f in files if f in want]
    only = dict(SEL.ONLY)
    if a.tests:
        chosen = {}
        for t in a.tests.split(","):
            fpart, _, name = t.rpartition("::")
            fpart = fpart if not fpart or fpart.endswith(".py") else fpart + ".py"
            hits = [f for f in files if fpart in ("", f) and name in test_names(f)]
            if not hits:
                ap.error("--tests: no test %r in %s" % (t, ", ".join(files)))
            for f in hits:
                chosen.setdefault(f, []).append(name)
        files, only = [f for f in files if f in chosen], chosen
    return files, {f: only[f] for f in files if f in only}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("python", help="interpreter of the environment under test")
    ap.add_argument("out", nargs="?", help="JSON result (default: gluon-tests-MODULE.json in $TMPDIR)")
    ap.add_argument("--module", default="mxnext", choices=("mxnext", "mxnet"),
                    help="what `import mxnet` gives the tests (mxnet: the real MXNet)")
    ap.add_argument("--files", default="", help="e.g. test_loss,test_gluon_trainer")
    ap.add_argument("--tests", default="", help="NAME or FILE::NAME, comma-separated")
    ap.add_argument("--timeout", type=float, default=SEL.TEST_TIMEOUT_S, help="per test (s)")
    ap.add_argument("--global-timeout", type=float, default=SEL.GLOBAL_TIMEOUT_S)
    ap.add_argument("--memory-gb", type=float, default=SEL.MEMORY_GB,
                    help="a test process whose resident memory passes this is killed")
    ap.add_argument("--jobs", type=int, default=1, help="files run at once")
    ap.add_argument("--seed", type=int, default=SEL.SEED)
    ap.add_argument("--baseline", default=None,
                    help="result to score against (default %s; 'none')" % SEL.BASELINE)
    ap.add_argument("--max-restarts", type=int, default=20, help="per file")
    ap.add_argument("--no-install", action="store_true", help="never pip-install test deps")
    ap.add_argument("--no-stubs", action="store_true",
                    help="a module mxnext lacks fails the file's import instead of being stubbed")
    ap.add_argument("--keep-tmp", action="store_true", help="keep test copies and pytest logs")
    a = ap.parse_args(argv)
    files, only = select(ap, a)
    python = os.path.abspath(a.python) if os.sep in a.python else a.python
    out_path = os.path.abspath(a.out or os.path.join(tempfile.gettempdir(),
                                                     "gluon-tests-%s.json" % a.module))
    t0 = time.time()
    tmp = tempfile.mkdtemp(prefix="gluon-tests-")
    try:
        work, logs, src = (os.path.join(tmp, d) for d in ("work", "logs", "tests"))
        for d in (work, logs, os.path.join(tmp, "mxnet_home")):
            os.makedirs(d)
        edited = copy_tests(src)
        if edited:
            log("WARNING: differ from upstream: " + ", ".join(edited))
        ini = os.path.join(tmp, "pytest.ini")
        with open(ini, "w") as f:       # only the test files are assertion-rewritten
            f.write("[pytest]\npython_files = %s\n" % " ".join(SEL.FILES))
        env = {k: v for k, v in os.environ.items()
               if not k.startswith(("PYTEST_", "GLUONTESTS_")) and k != "PYTHONHOME"}
        env.update(PYTHONPATH=os.path.join(HERE, "shim"), PYTHONDONTWRITEBYTECODE="1",
                   PYTEST_DISABLE_PLUGIN_AUTOLOAD="1", GLUONTESTS_MODULE=a.module,
                   MXNET_HOME=os.path.join(tmp, "mxnet_home"), MPLBACKEND="Agg",
                   MXNET_MODULE_SEED=str(a.seed), MXNET_TEST_SEED=str(a.seed),
                   GLUONTESTS_STUB_LOG=os.path.join(tmp, "stubs.log"),
                   GLUONTESTS_NO_STUBS="1" if a.no_stubs else "0")
        needs = ["pytest", "numpy"] + sorted({m for f in files for m in SEL.NEEDS.get(f, [])})
        folder, found = ensure_deps(python, env, needs, not a.no_install)
        if folder:
            env["PYTHONPATH"] += os.pathsep + folder
        log("python %s, mxnet -> %s" % (found.get("python"), found.get("mxnet")))
        if not found.get("pytest"):
            log("ERROR: pytest is not importable with %s" % python)
            return 2
        cfg = {"python": python, "tmp": tmp, "work": work, "logs": logs, "ini": ini,
               "unit": os.path.join(src, UNIT), "env": env, "only": only,
               "timeout": a.timeout, "deadline": t0 + a.global_timeout, "memory_gb": a.memory_gb,
               "max_restarts": a.max_restarts}
        runs, queue, lock = {}, list(files), threading.Lock()

        def worker():
            while True:
                with lock:
                    if not queue:
                        return
                    fname = queue.pop(0)
                t = time.time()
                fr = FileRun(fname, cfg).run()
                n = sum(1 for r in fr.results.values() if r["outcome"] == PASSED)
                log("%s: %d passed of %d (%.0f s)" % (fname, n, len(fr.results), time.time() - t))
                with lock:
                    runs[fname] = fr

        threads = [threading.Thread(target=worker) for _ in range(max(1, a.jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        tests = {nid: r for f in files for nid, r in sorted(runs[f].results.items())}
        stubs = set()
        if os.path.exists(env["GLUONTESTS_STUB_LOG"]):
            with open(env["GLUONTESTS_STUB_LOG"]) as f:
                stubs = {line.strip() for line in f if line.strip()}
        res = {
            "harness": "gluon-tests", "module": a.module, "python": python,
            "environment": found, "cpus": os.cpu_count(),
            "upstream": dict(SEL.UPSTREAM, edited=edited),
            "settings": {"files": files, "only": only, "seed": a.seed, "timeout_s": a.timeout,
                         "memory_gb": a.memory_gb,
                         "global_timeout_s": a.global_timeout, "jobs": a.jobs},
            "wall_s": round(time.time() - t0, 1),
            "collect_errors": {f: runs[f].collect_error for f in files if runs[f].collect_error},
            "stubbed_modules": sorted(stubs),
            "tests": tests,
        }
        bpath = a.baseline or (os.path.join(HERE, SEL.BASELINE) if a.module != "mxnet" else "none")
        if bpath != "none" and not os.path.exists(bpath):
            log("no baseline at %s: not scored" % bpath)
        elif bpath != "none":
            with open(bpath) as f:
                baseline = json.load(f)
            res["reference_version"] = baseline["environment"].get("module_version")
            res["score"], res["passed_by_reference_not_here"] = score(tests, baseline, files)
        os.makedirs(os.path.dirname(out_path), exist_ok=True)
        with open(out_path, "w") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
        report(res)
        print("JSON: " + out_path)
        return 0
    finally:
        if a.keep_tmp:
            log("temp dir kept: " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(128 + signum))
    sys.exit(main())
