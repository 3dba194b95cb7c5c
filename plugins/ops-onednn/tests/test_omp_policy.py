"""Loading libdnnl makes its OpenMP threads sleep between parallel regions unless the user
chose a policy (real subprocesses: libgomp reads the policy once, when it loads)."""

from __future__ import annotations

import os
import subprocess
import sys

_SCRIPT = """
import os
import numpy as np
import mxnext as mx
before = os.environ.get("OMP_WAIT_POLICY")
x = mx.nd.array(np.ones((1, 1, 16, 16), "f4"))    # large enough for oneDNN to take
w = mx.nd.ones((1, 1, 3, 3))
mx.nd.Convolution(x, w, kernel=(3, 3), num_filter=1, no_bias=True).wait_to_read()
print(before, os.environ.get("OMP_WAIT_POLICY"))
"""


def _policy(**env):
    base = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    out = subprocess.run([sys.executable, "-c", _SCRIPT], env=dict(base, **env),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_passive_by_default_and_the_users_choice_kept():
    assert _policy() == ["None", "PASSIVE"]
    assert _policy(OMP_WAIT_POLICY="active") == ["active", "active"]
    assert _policy(GOMP_SPINCOUNT="1000") == ["None", "None"]
