"""Without a loadable libdnnl the plugin reports itself unusable and ops-nn's kernels run:
in real subprocesses, the loader pointed by ``MXNEXT_ONEDNN_LIBRARY`` at a missing file, at a
file that is no library, and the plugin switched off by ``MXNEXT_DISABLE_PLUGINS``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np

_SCRIPT = """
import json, warnings
import numpy as np
import mxnext as mx
from mxnext import ops as registry, plugins
warnings.simplefilter("always")
rng = np.random.default_rng(3)
x = mx.nd.array(rng.standard_normal((2, 3, 8, 8)).astype("f4"))
w = mx.nd.array(rng.standard_normal((4, 3, 3, 3)).astype("f4"))
with warnings.catch_warnings(record=True) as declined:    # a call its rule sends back
    mx.nd.FullyConnected(x, mx.nd.ones((5, 192)), num_hidden=5, no_bias=True).wait_to_read()
with warnings.catch_warnings(record=True) as caught:
    y = mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=4, no_bias=True).asnumpy()
info = {p.name: (p.status, p.error) for p in plugins.report()}.get("ops-onednn")
from mxnext_ops_onednn._dispatch import calls
print(json.dumps({"y": y.tolist(), "plugin": info,
                  "provider": registry.get("Convolution").attrs["FCompute<cpu>"].provider,
                  "calls": {"/".join(k): v for k, v in calls.items()},
                  "warnings": [str(c.message) for c in caught],
                  "declined": [str(c.message) for c in declined]}))
"""


def _run(**env):
    full = dict(os.environ, **env)
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=full, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_a_missing_library_fails_the_plugin_with_the_reason_and_ops_nn_runs():
    usable = _run()
    assert usable["provider"] == "ops-onednn"
    assert usable["calls"] == {"FullyConnected/fallback": 1, "Convolution/onednn": 1}
    got = _run(MXNEXT_ONEDNN_LIBRARY="/nonexistent/libdnnl.so.3")
    status, error = got["plugin"]
    assert status == "failed"
    assert "not usable" in error and "/nonexistent/libdnnl.so.3" in error
    assert got["provider"] == "ops-nn"
    np.testing.assert_allclose(got["y"], usable["y"], rtol=1e-4, atol=1e-4)


def test_a_file_that_does_not_load_falls_back_at_the_first_call_onednn_takes(tmp_path):
    fake = tmp_path / "libdnnl.so.3"
    fake.write_text("not a shared library")
    usable = _run()
    got = _run(MXNEXT_ONEDNN_LIBRARY=str(fake))
    assert got["plugin"][0] == "loaded" and got["provider"] == "ops-onednn"
    assert got["calls"] == {"FullyConnected/fallback": 1, "Convolution/fallback": 1}
    assert got["declined"] == []      # the rule declined FullyConnected: nothing was loaded
    assert any("ops-onednn is not usable" in w and str(fake) in w for w in got["warnings"])
    np.testing.assert_allclose(got["y"], usable["y"], rtol=1e-4, atol=1e-4)


def test_the_disable_switch_turns_it_off():
    got = _run(MXNEXT_DISABLE_PLUGINS="ops-onednn")
    assert got["plugin"][0] == "disabled" and got["provider"] == "ops-nn"
