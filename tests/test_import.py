"""What ``import mxnext`` does to the process besides defining modules."""

import os
import subprocess
import sys

import pytest

CODE = "import gc, mxnext; mxnext.nd.zeros((1,)); print(gc.get_freeze_count())"


@pytest.mark.parametrize("setting, frozen", [(None, False), ("0", False), ("1", True)])
def test_gc_freeze_after_plugins_load_is_opt_in(setting, frozen):
    """A library must not change the host's garbage collector unless asked:
    ``MXNEXT_GC_FREEZE=1`` moves what loading made out of the collector's full passes."""
    env = {k: v for k, v in os.environ.items() if k != "MXNEXT_GC_FREEZE"}
    if setting is not None:
        env["MXNEXT_GC_FREEZE"] = setting
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout
    count = int(out.split()[-1])
    assert (count > 10_000) if frozen else count == 0
