"""``mxnext ops show Convolution`` lists both kernels and which one runs (a real CLI run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys


def _show(*args, **env):
    out = subprocess.run([sys.executable, "-m", "mxnext_cli", "ops", "show", "Convolution",
                          *args], env=dict(os.environ, **env), capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_show_lists_both_providers_and_which_runs():
    text = _show()
    rows = [line.split() for line in text.splitlines() if line.strip().startswith("FCompute<cpu>")]
    assert rows == [["FCompute<cpu>", "20", "ops-onednn", "yes"],
                    ["FCompute<cpu>", "10", "ops-nn", "outranked"]]
    d = json.loads(_show("--json"))
    assert {"key": "FCompute<cpu>", "plevel": 20, "provider": "ops-onednn"} in d["attrs"]
    assert d["outranked"] == [{"key": "FCompute<cpu>", "plevel": 10, "provider": "ops-nn"}]


def test_show_without_the_plugin_lists_ops_nn_alone():
    d = json.loads(_show("--json", MXNEXT_DISABLE_PLUGINS="ops-onednn"))
    assert {"key": "FCompute<cpu>", "plevel": 10, "provider": "ops-nn"} in d["attrs"]
    assert d["outranked"] == []
