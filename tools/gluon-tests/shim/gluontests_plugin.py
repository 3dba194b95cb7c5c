"""pytest plugin of the gluon-tests runner (``-p gluontests_plugin``).

Writes one JSON line per event to $GLUONTESTS_EVENTS, flushed at once, so that the
runner knows which test was running when a process died or hung: ``collected``,
``collect_error``, ``start``, ``result`` (outcome, seconds, first error line) and
``finish``. Tests named in the JSON list $GLUONTESTS_SKIP (already run before a crash)
are deselected.
"""
import json
import os
import time

import pytest

MARKERS = ("seed", "serial", "remote_required", "gpu", "integration", "garbage_expected")

_out = None
_phases = {}
_started = {}


def _emit(**event):
    global _out
    if _out is None:
        _out = open(os.environ["GLUONTESTS_EVENTS"], "a", buffering=1)
    _out.write(json.dumps(event) + "\n")
    _out.flush()


def _first_line(longrepr):
    crash = getattr(longrepr, "reprcrash", None)
    if crash is not None:
        text = crash.message
    elif isinstance(longrepr, tuple):           # a skip: (file, line, reason)
        text = longrepr[2]
    else:
        text = str(longrepr)
    lines = [l.strip() for l in str(text).splitlines() if l.strip()]
    return lines[0][:500] if lines else ""


def pytest_configure(config):
    for m in MARKERS:
        config.addinivalue_line("markers", m)


def pytest_collectreport(report):
    if report.failed:
        _emit(ev="collect_error", msg=str(report.longrepr)[-3000:])


def pytest_collection_modifyitems(config, items):
    skip = set(json.loads(os.environ.get("GLUONTESTS_SKIP", "[]")))
    keep = [it for it in items if it.nodeid not in skip]
    dropped = [it for it in items if it.nodeid in skip]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = keep
    _emit(ev="collected", ids=[it.nodeid for it in items])


def pytest_runtest_logstart(nodeid, location):
    _started[nodeid] = time.time()
    _emit(ev="start", id=nodeid)


def pytest_runtest_logreport(report):
    _phases.setdefault(report.nodeid, {})[report.when] = report


def _outcome(phases):
    setup, call, teardown = (phases.get(w) for w in ("setup", "call", "teardown"))
    for when, rep, bad in (("setup", setup, "error"), ("call", call, "failed")):
        if rep is None:
            return "error", "no %s phase" % when
        if rep.failed:
            return bad, _first_line(rep.longrepr)
        if rep.skipped:
            return ("xfailed" if hasattr(rep, "wasxfail") else "skipped"), _first_line(rep.longrepr)
    if teardown is not None and teardown.failed:
        return "error", "teardown: " + _first_line(teardown.longrepr)
    return ("xpassed" if hasattr(call, "wasxfail") else "passed"), ""


def pytest_runtest_logfinish(nodeid, location):
    outcome, msg = _outcome(_phases.pop(nodeid, {}))
    _emit(ev="result", id=nodeid, outcome=outcome, msg=msg,
          seconds=round(time.time() - _started.pop(nodeid), 3))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session, exitstatus):
    _emit(ev="finish", status=int(exitstatus))
